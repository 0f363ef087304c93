#pragma once

// C++ operators on Tensor and Variable: a + b, a - b, a * b, a / b, -a.
//
// A Variable operand contributes its current value() (recorded as a read by
// any active GradientTape). An arithmetic scalar operand is converted to the
// other operand's dtype first, so `x * 2` works for float32 and float64 x.

#include "ops/binary_ops.h"
#include "ops/unary_ops.h"
#include "runtime/variable.h"

namespace eager {

#define EAGER_DEFINE_BINARY_OPERATOR(sym, Fn)                                                 \
  inline Tensor operator sym(const Tensor& a, const Tensor& b) { return Fn(a, b); }           \
  inline Tensor operator sym(const Variable& a, const Tensor& b) { return Fn(a.value(), b); } \
  inline Tensor operator sym(const Tensor& a, const Variable& b) { return Fn(a, b.value()); } \
  inline Tensor operator sym(const Variable& a, const Variable& b) {                          \
    return Fn(a.value(), b.value());                                                          \
  }                                                                                           \
  Tensor operator sym(const Tensor& a, double b);                                             \
  Tensor operator sym(double a, const Tensor& b);                                             \
  inline Tensor operator sym(const Variable& a, double b) { return a.value() sym b; }         \
  inline Tensor operator sym(double a, const Variable& b) { return a sym b.value(); }

EAGER_DEFINE_BINARY_OPERATOR(+, Add)
EAGER_DEFINE_BINARY_OPERATOR(-, Sub)
EAGER_DEFINE_BINARY_OPERATOR(*, Mul)
EAGER_DEFINE_BINARY_OPERATOR(/, Div)
#undef EAGER_DEFINE_BINARY_OPERATOR

inline Tensor operator-(const Tensor& a) { return Neg(a); }
inline Tensor operator-(const Variable& a) { return Neg(a.value()); }

}  // namespace eager
