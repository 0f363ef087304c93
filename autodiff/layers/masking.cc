#include "autodiff/layers/masking.h"

#include <string>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/reduction_ops.h"
#include "runtime/errors.h"
#include "runtime/graph.h"
#include "runtime/names.h"

namespace eager::layers {

Masking::Masking(double mask_value, std::string_view name)
    : Layer(name.empty() ? UniqueObjectName("masking") : std::string(name)),
      mask_value_(mask_value) {}

Masking::~Masking() = default;

Tensor Masking::Valid(const Tensor& x, bool keepdims) const {
  EAGER_CHECK(
      x.shape().rank() >= 2 && (x.dtype() == DType::kFloat32 || x.dtype() == DType::kFloat64),
      "Masking '", name(), "': expected a float32 or float64 input of rank >= 2, got ", x.dtype(),
      " ", x.shape());
  const Tensor differs = NotEqual(x, Cast(Tensor::Scalar(mask_value_), x.dtype()));
  // Any over the features: the largest of them as 0/1.
  return Cast(ReduceMax(Cast(differs, DType::kInt32), {-1}, keepdims), DType::kBool);
}

Tensor Masking::Call(const Tensor& x) {
  std::optional<NameScope> scope;
  if (Graph::Current() != nullptr) scope.emplace(NameScope::Current() + name() + "/");
  return Mul(x, Cast(Valid(x, /*keepdims=*/true), x.dtype()));
}

std::optional<Tensor> Masking::ComputeMask(const Tensor& x, const std::optional<Tensor>& mask) {
  (void)mask;  // replaced, as Keras's
  return Valid(x, /*keepdims=*/false);
}

}  // namespace eager::layers
