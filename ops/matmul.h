#pragma once

// Matrix product of rank-2 tensors, tf.linalg.matmul: op(a) @ op(b) where
// op transposes when asked. float32/float64/int32/int64; inner dimensions
// must agree (InvalidArgumentError with both shapes otherwise).

#include "ops/op_def.h"

namespace eager {

Tensor MatMul(const Tensor& a, const Tensor& b, bool transpose_a = false,
              bool transpose_b = false);  // "MatMul"

// Matrix products over the last two dimensions of x [..., M, K] and
// y [..., K, N], the batch dimensions before them broadcast as NumPy's
// matmul; adj_x / adj_y transpose the last two dimensions of that side
// ("BatchMatMulV2", tf.linalg.matmul of rank > 2). The gradient sums over
// the batch dimensions an operand was broadcast along.
Tensor BatchMatMulV2(const Tensor& x, const Tensor& y, bool adj_x = false, bool adj_y = false);

extern const OpDef kMatMulOp;
extern const OpDef kBatchMatMulV2Op;

}  // namespace eager
