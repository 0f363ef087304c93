#pragma once

// Matrix product of rank-2 tensors, tf.linalg.matmul: op(a) @ op(b) where
// op transposes when asked. float32/float64/int32/int64; inner dimensions
// must agree (InvalidArgumentError with both shapes otherwise).

#include "ops/op_def.h"

namespace eager {

Tensor MatMul(const Tensor& a, const Tensor& b, bool transpose_a = false,
              bool transpose_b = false);  // "MatMul"

extern const OpDef kMatMulOp;

}  // namespace eager
