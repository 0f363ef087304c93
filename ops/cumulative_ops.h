#pragma once

// Cumulative sums and products along one axis (tf.math.cumsum,
// tf.math.cumprod; TF's ops "Cumsum" and "Cumprod").
//
//   eager::Cumprod(x, 0, /*exclusive=*/true)   // x [a, b, c] -> [1, a, a*b]
//   eager::Cumsum(x, 0, false, /*reverse=*/true)  // [a+b+c, b+c, c]
//
// `exclusive` leaves each element out of its own result (the first gets the
// identity, 0 or 1); `reverse` runs from the end of the axis. Each result is
// accumulated in order along the axis, one multiplication (or addition) per
// step, as TF's kernel: Prod's gradient (reduction_ops.cc, TF's _ProdGrad)
// takes the product of the other elements of a group as the exclusive
// cumulative product from the left times the one from the right, which
// neither divides by x nor overflows where the whole product would.
//
// x: float32/float64/int32/int64 of rank >= 1; `axis` in [-rank, rank)
// (else InvalidArgumentError naming it and the shape). Gradients (TF's
// _CumsumGrad, _CumprodGrad): Cumsum's is the cumulative sum of grad in the
// other direction; Cumprod's is Cumsum(cumprod * grad) in the other
// direction divided by x, 0 where x is 0 (TF's div_no_nan).

#include <cstdint>

#include "runtime/tensor.h"

namespace eager {

struct OpDef;

Tensor Cumsum(const Tensor& x, int64_t axis, bool exclusive = false,
              bool reverse = false);  // "Cumsum"
Tensor Cumprod(const Tensor& x, int64_t axis, bool exclusive = false,
               bool reverse = false);  // "Cumprod"

extern const OpDef kCumsumOp;
extern const OpDef kCumprodOp;

}  // namespace eager
