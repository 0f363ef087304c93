#include "autodiff/sequential.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "autodiff/input_layer.h"
#include "runtime/names.h"

namespace eager {

// An object of Keras 3's structure with no values of its own: its children
// are computed by the Sequential when asked.
class Sequential::KerasNode final : public Trackable {
 public:
  explicit KerasNode(std::function<std::vector<Child>()> children)
      : children_(std::move(children)) {}
  std::vector<Child> Children() override { return children_ ? children_() : std::vector<Child>{}; }
  // Tells deferred restorations queued here of the new child.
  void Added(std::string_view name, Trackable& child) { NotifyChildAdded(name, child); }

 private:
  std::function<std::vector<Child>()> children_;
};

Sequential::Sequential(std::string_view name)
    : Layer(name.empty() ? UniqueObjectName("sequential") : std::string(name)),
      functional_(std::make_unique<KerasNode>([this] {
        return std::vector<Child>{{"_operations", operations_.get()}};
      })),
      operations_(std::make_unique<KerasNode>([this] { return Operations(); })),
      input_(std::make_unique<KerasNode>(nullptr)) {}

Sequential::~Sequential() = default;

void Sequential::Add(std::unique_ptr<Layer> layer) {
  EAGER_CHECK(layer != nullptr, "Sequential '", name(), "': Add got a null layer");
  owned_layers_.push_back(std::move(layer));
  Add(*owned_layers_.back());
}

void Sequential::Add(Layer& layer) {
  layers_.push_back(&layer);
  // Deferred restorations match through "layer-<i>", which exists from now
  // on ("layer_with_weights-<k>" appears only once the layer builds), or
  // Keras 3's "_operations/<i>".
  const size_t i = layers_.size() - 1;
  NotifyChildAdded("layer-" + std::to_string(i), layer);
  if (i == 0 && !StartsWithInput()) operations_->Added("0", *input_);
  operations_->Added(std::to_string(StartsWithInput() ? i : i + 1), layer);
}

bool Sequential::StartsWithInput() const {
  return !layers_.empty() && dynamic_cast<const InputLayer*>(layers_.front()) != nullptr;
}

Tensor Sequential::Call(const Tensor& x) { return Call(x, /*training=*/false); }

Tensor Sequential::Call(const Tensor& x, bool training) {
  if (layers_.empty()) {
    throw FailedPreconditionError(StrCat("Sequential '", name(), "' has no layers to call"));
  }
  // Keras's mask travels with the tensor: made by a layer (Embedding with
  // mask_zero), used and passed on, or dropped (a recurrent layer's last
  // output).
  Tensor y = x;
  std::optional<Tensor> mask;
  for (Layer* layer : layers_) {
    Tensor next = mask ? layer->CallMasked(y, mask, training) : (*layer)(y, training);
    mask = layer->ComputeMask(y, mask);
    y = std::move(next);
  }
  return y;
}

std::vector<Trackable::Child> Sequential::Operations() {
  std::vector<Child> children;
  if (layers_.empty()) return children;
  if (!StartsWithInput()) children.push_back({"0", input_.get()});
  // Keras 3 numbers the operations of the model's graph; an Embedding's
  // mask op takes an index of its own, with no node in the checkpoint.
  size_t index = children.size();
  for (Layer* layer : layers_) {
    children.push_back({std::to_string(index++), layer});
    index += static_cast<size_t>(layer->KerasMaskOperations());
  }
  return children;
}

std::vector<Trackable::Child> Sequential::Children() {
  std::vector<Child> children;
  if (layout_ == KerasLayout::kKeras3) {
    children.push_back({"_functional", functional_.get()});
  } else {
    int weighted = 0;
    for (size_t i = 0; i < layers_.size(); ++i) {
      if (!layers_[i]->Variables().empty()) {
        children.push_back({"layer_with_weights-" + std::to_string(weighted++), layers_[i]});
      }
      children.push_back({"layer-" + std::to_string(i), layers_[i]});
    }
  }
  for (Child& c : Module::Children()) children.push_back(std::move(c));
  return children;
}

std::string Sequential::SavedStructureMismatch(const std::vector<std::string_view>& saved_edges) {
  const auto has = [&](std::string_view edge) {
    return std::find(saved_edges.begin(), saved_edges.end(), edge) != saved_edges.end();
  };
  const std::string here =
      StrCat("Sequential '", name(), "' is in the ", KerasLayoutName(layout_), " layout");
  if (has("_operations")) {
    return StrCat("the checkpoint holds a Keras 3 functional model (edge '_operations'), which a ",
                  "Sequential does not take: a Sequential is saved by Keras 3 as "
                  "'_functional/_operations' (kKeras3) and by tf_keras as 'layer-<i>'");
  }
  if (layout_ != KerasLayout::kKeras3 && has("_functional")) {
    return StrCat(
        "the checkpoint holds a Keras 3 Sequential (edge '_functional/_operations'), but ", here,
        "; call SetKerasLayout(..., KerasLayout::kKeras3) before restoring");
  }
  if (layout_ == KerasLayout::kKeras3) {
    for (std::string_view edge : {"layer_with_weights-0", "layer-0"}) {
      if (has(edge)) {
        return StrCat("the checkpoint holds a tf_keras (Keras 2) Sequential (edge '", edge,
                      "'), but ", here,
                      "; call SetKerasLayout(..., KerasLayout::kKeras2) (or kKeras2Legacy for "
                      "tf_keras's legacy optimizers) before restoring");
      }
    }
  }
  return {};
}

}  // namespace eager
