#include "ops/operators.h"

#include "ops/internal/scalar_like.h"

namespace eager {

// A plain number takes the other operand's dtype (`x * 2` for float64 x).
#define EAGER_DEFINE_SCALAR_OPERATOR(sym, Fn)         \
  Tensor operator sym(const Tensor& a, double b) {    \
    return Fn(a, internal::ScalarLike(b, a.dtype())); \
  }                                                   \
  Tensor operator sym(double a, const Tensor& b) {    \
    return Fn(internal::ScalarLike(a, b.dtype()), b); \
  }

EAGER_DEFINE_SCALAR_OPERATOR(+, Add)
EAGER_DEFINE_SCALAR_OPERATOR(-, Sub)
EAGER_DEFINE_SCALAR_OPERATOR(*, Mul)
EAGER_DEFINE_SCALAR_OPERATOR(/, Div)
#undef EAGER_DEFINE_SCALAR_OPERATOR

}  // namespace eager
