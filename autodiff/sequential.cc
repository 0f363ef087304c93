#include "autodiff/sequential.h"

#include <string>

#include "runtime/names.h"

namespace eager {

Sequential::Sequential(std::string_view name)
    : Layer(name.empty() ? UniqueObjectName("sequential") : std::string(name)) {}

Sequential::~Sequential() = default;

void Sequential::Add(std::unique_ptr<Layer> layer) {
  EAGER_CHECK(layer != nullptr, "Sequential '", name(), "': Add got a null layer");
  owned_layers_.push_back(std::move(layer));
  Add(*owned_layers_.back());
}

void Sequential::Add(Layer& layer) {
  layers_.push_back(&layer);
  // Deferred restorations match through "layer-<i>", which exists from now
  // on ("layer_with_weights-<k>" appears only once the layer builds).
  NotifyChildAdded("layer-" + std::to_string(layers_.size() - 1), layer);
}

Tensor Sequential::Call(const Tensor& x) { return Call(x, /*training=*/false); }

Tensor Sequential::Call(const Tensor& x, bool training) {
  if (layers_.empty()) {
    throw FailedPreconditionError(StrCat("Sequential '", name(), "' has no layers to call"));
  }
  Tensor y = x;
  for (Layer* layer : layers_) y = (*layer)(y, training);
  return y;
}

std::vector<Trackable::Child> Sequential::Children() {
  std::vector<Child> children;
  int weighted = 0;
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (!layers_[i]->Variables().empty()) {
      children.push_back({"layer_with_weights-" + std::to_string(weighted++), layers_[i]});
    }
    children.push_back({"layer-" + std::to_string(i), layers_[i]});
  }
  for (Child& c : Module::Children()) children.push_back(std::move(c));
  return children;
}

}  // namespace eager
