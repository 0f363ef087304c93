#include "autodiff/input_layer.h"

#include <string>

#include "runtime/errors.h"
#include "runtime/names.h"

namespace eager {

namespace {

// Keras numbers unnamed inputs from 1 ("input_1", "input_2"; backend.
// unique_object_name with zero_based=False), other layers from 0.
std::string InputName() {
  const std::string zero_based = UniqueObjectName("input");  // "input", "input_1", ...
  if (zero_based == "input") return "input_1";
  return "input_" + std::to_string(std::stoll(zero_based.substr(6)) + 1);
}

}  // namespace

InputLayer::InputLayer(std::optional<Shape> shape, std::string_view name)
    : Layer(name.empty() ? InputName() : std::string(name)), shape_(shape) {}

InputLayer::~InputLayer() = default;

Tensor InputLayer::Call(const Tensor& x) {
  if (shape_) {
    bool ok = x.rank() == shape_->rank() + 1;
    for (int i = 0; ok && i < shape_->rank(); ++i) {
      const int64_t got = x.shape().dim(i + 1);
      ok = got == shape_->dim(i) || got < 0 || shape_->dim(i) < 0;  // -1: unknown
    }
    std::string expected = "[batch";
    for (const int64_t d : shape_->dims()) expected += ", " + std::to_string(d);
    EAGER_CHECK(ok, "InputLayer '", name(), "': expected inputs of shape ", expected, "], got ",
                x.shape());
  }
  return x;
}

}  // namespace eager
