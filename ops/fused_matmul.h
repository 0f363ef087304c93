#pragma once

// FusedMatMul: relu?(op(a) @ op(b) + bias) in one op, in the spirit of
// TensorFlow's _FusedMatMul (MatMul + BiasAdd [+ Relu]) that grappler puts in
// place of those nodes. Dense layers call it in eager mode: the bias and the
// ReLU are applied to each block of the product right after its GEMM, while
// it is in cache, instead of two more passes over the activations (each with
// its own output tensor and tape record).
//
// The result is bit-identical to the unfused ops: every element is the
// MatMul's element, then `+ bias[j]`, then max(., 0), each rounded as the
// separate MatMul, AddV2 (or BiasAdd) and Relu round it; so is the gradient
// (ReluGrad against the output, the bias gradient as AddV2's sum over the
// batch, MatMul's own gradient). tests/ops/fused_matmul_test.cc checks both.
// (A GEMM with beta = 1 over a C prefilled with the bias would skip
// OpenBLAS's zero-fill of C, but adds the bias before the product's partial
// sums and so changes rounding; it touches C as often as this does.)
//
// An eager-only op (OpDef::eager_only): its attributes are eager's own
// ("relu" instead of TF's fused_ops list), so in graph mode FusedMatMul adds
// TF's MatMul, AddV2 and Relu nodes instead, as Dense does.

#include "ops/op_def.h"

namespace eager {

// a, b: float32/float64 matrices as for MatMul (same errors); bias: [n] of
// their dtype, n = the product's column count (InvalidArgumentError naming
// both shapes otherwise). relu: apply max(., 0) last.
Tensor FusedMatMul(const Tensor& a, const Tensor& b, const Tensor& bias, bool relu,
                   bool transpose_a = false, bool transpose_b = false);  // "_FusedMatMul"

extern const OpDef kFusedMatMulOp;

}  // namespace eager
