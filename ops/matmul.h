#pragma once

// Matrix product of rank-2 tensors, tf.linalg.matmul: op(a) @ op(b) where
// op transposes when asked. float32/float64/int32/int64; inner dimensions
// must agree (InvalidArgumentError with both shapes otherwise).

#include <string_view>
#include <vector>

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

// Einstein summation, tf.einsum ("Einsum"): `equation` is TF's explicit form,
// one subscript per operand, "->", the output's subscripts ("abc,cd->abd",
// "aecd,abcd->acbe", "...ij,...jk->...ik", "ij->ji", "ij->i"). Letters are
// a-z and A-Z; a letter both operands have and the output lacks is summed
// over (contracted), one only one operand has and the output lacks is
// summed away; "..." stands for the leading dimensions not named, broadcast
// between the operands as NumPy does, and the output must then have "..."
// too. One or two numeric operands of one dtype.
// Throws InvalidArgumentError naming the equation (and the operand) for: no
// or several "->", a subscript count other than inputs.size(), a character
// neither a letter nor "...", an output letter that is repeated or in no
// operand, a rank the subscripts do not name, a letter's sizes that differ,
// "..." dimensions that do not broadcast. A letter repeated within one
// operand (TF's diagonal, "ii->i") is UnimplementedError.
// The gradient of each operand is another Einsum (TF's _EinsumGrad), with
// summed-away letters broadcast back and broadcast "..." dimensions summed.
Tensor Einsum(std::string_view equation, const std::vector<Tensor>& inputs);

extern const OpDef kMatMulOp;
extern const OpDef kBatchMatMulV2Op;
extern const OpDef kEinsumOp;

}  // namespace eager
