#include "ops/internal/scalar_like.h"

namespace eager::internal {

Tensor ScalarLike(double value, DType dtype) {
  return VisitNumericDType(dtype, "ScalarLike", [&](auto tag) {
    using T = typename decltype(tag)::type;
    return Tensor::Scalar<T>(static_cast<T>(value));
  });
}

}  // namespace eager::internal
