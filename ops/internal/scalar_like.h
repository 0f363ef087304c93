#pragma once

// ScalarLike: a C++ number as a scalar tensor of a given dtype, for kernels,
// gradients and the operators that mix a Tensor with a plain number.

#include "runtime/tensor.h"

namespace eager::internal {

// `value` as a scalar of `dtype`, converted as static_cast does (2.9 -> 2 for
// int64). Throws InvalidArgumentError for bool and string.
Tensor ScalarLike(double value, DType dtype);

// `value` as a scalar of `like`'s dtype (a gradient's constant: 2 * x).
inline Tensor ScalarLike(double value, const Tensor& like) {
  return ScalarLike(value, like.dtype());
}

}  // namespace eager::internal
