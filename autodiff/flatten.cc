#include "autodiff/flatten.h"

#include <string>

#include "ops/array_ops.h"
#include "runtime/errors.h"
#include "runtime/names.h"

namespace eager {

Flatten::Flatten(std::string_view name)
    : Layer(name.empty() ? UniqueObjectName("flatten") : std::string(name)) {}

Flatten::~Flatten() = default;

Tensor Flatten::Call(const Tensor& x) {
  EAGER_CHECK(x.rank() >= 1, "Flatten '", name(),
              "': expected an input with a batch dimension, got a scalar");
  int64_t rest = 1;
  for (int i = 1; i < x.rank(); ++i) rest *= x.shape().dim(i);
  const int64_t batch = x.shape().dim(0);
  // An unknown batch (a graph placeholder) is inferred; an unknown inner
  // dimension makes the whole rest inferred instead.
  if (rest < 0) return Reshape(x, {batch, -1});
  return Reshape(x, {batch < 0 ? -1 : batch, rest});
}

}  // namespace eager
