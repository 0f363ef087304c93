// Registrations of the merge layers (keras_layer_kinds.h): Concatenate,
// Add, Subtract, Multiply, Average, Maximum, Minimum. Weightless; only
// Concatenate has an argument (axis). They take lists of tensors, so they
// appear in functional models' configs, not in Sequential ones.

#include <memory>
#include <string>
#include <vector>

#include "autodiff/layers/merging.h"
#include "saving/keras/internal/keras_layer_kinds.h"

namespace eager::keras_internal {
namespace {

using namespace layers;  // NOLINT(google-build-using-namespace): the merge classes

void ConcatenateToConfig(Layer& layer, Json& c) {
  c["axis"] = static_cast<Concatenate&>(layer).axis();
}

std::unique_ptr<Layer> ConcatenateFromConfig(ConfigReader& r, const std::string& name) {
  // Any axis but the batch axis 0 (negative counts from the end).
  const int64_t axis = r.Int("axis", -8, 8, -1);
  if (axis == 0) r.Invalid("axis", "is 0; the batch axis cannot be concatenated along");
  return std::make_unique<Concatenate>(axis, name);
}

// The elementwise merges have no arguments of their own.
template <typename T>
void NoConfig(Layer&, Json&) {}

template <typename T>
std::unique_ptr<Layer> ElementwiseFromConfig(ConfigReader&, const std::string& name) {
  return std::make_unique<T>(name);
}

template <typename T>
KerasLayerKind Elementwise(const char* class_name, const char* key) {
  return {class_name, key, Is<T>, nullptr, nullptr, NoConfig<T>, ElementwiseFromConfig<T>};
}

}  // namespace

std::vector<KerasLayerKind> MergingKinds() {
  return {
      {"Concatenate", "concatenate", Is<Concatenate>, nullptr, nullptr, ConcatenateToConfig,
       ConcatenateFromConfig},
      Elementwise<Add>("Add", "add"),
      Elementwise<Subtract>("Subtract", "subtract"),
      Elementwise<Multiply>("Multiply", "multiply"),
      Elementwise<Average>("Average", "average"),
      Elementwise<Maximum>("Maximum", "maximum"),
      Elementwise<Minimum>("Minimum", "minimum"),
  };
}

}  // namespace eager::keras_internal
