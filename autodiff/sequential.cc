#include "autodiff/sequential.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "autodiff/input_layer.h"
#include "autodiff/internal/keras_operations.h"
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
  // A new layer can shift earlier ones in Keras 3's numbering (a mask op
  // placed before them): tell of every edge that is new.
  for (const Child& child : Operations()) {
    if (announced_.insert({child.name, child.object}).second) {
      operations_->Added(child.name, *child.object);
    }
  }
}

bool Sequential::StartsWithInput() const {
  return !layers_.empty() && dynamic_cast<const InputLayer*>(layers_.front()) != nullptr;
}

Tensor Sequential::Call(const Tensor& x) { return Call(x, /*training=*/false); }

Tensor Sequential::Call(const Tensor& x, bool training) {
  return CallWithMasks({x}, {}, training).outputs[0];
}

Layer::MaskedOutputs Sequential::CallWithMasks(const std::vector<Tensor>& inputs,
                                               const std::vector<std::optional<Tensor>>& masks,
                                               bool training) {
  if (layers_.empty()) {
    throw FailedPreconditionError(StrCat("Sequential '", name(), "' has no layers to call"));
  }
  EAGER_CHECK(inputs.size() == 1, "Sequential '", name(), "' takes one input, got ", inputs.size());
  // Keras's mask travels with the tensor: made by a layer (Embedding with
  // mask_zero), used and passed on, or dropped (a recurrent layer's last
  // output).
  MaskedOutputs y{.outputs = inputs, .masks = masks};
  y.masks.resize(1);
  for (Layer* layer : layers_) {
    y = layer->CallWithMasks(y.outputs, y.masks, training);
    EAGER_CHECK(y.outputs.size() == 1, "Sequential '", name(), "': layer '", layer->name(),
                "' returned ", y.outputs.size(), " outputs, one expected");
    y.masks.resize(1);
  }
  return y;
}

std::vector<KerasOperation> Sequential::keras3_operations() const {
  // Keras 3 numbers the operations of the model's graph: an InputLayer, the
  // layers, and the mask ops it records (an Embedding(mask_zero)'s NotEqual
  // before the recurrent layer taking its mask, ...).
  if (layers_.empty()) return {};
  std::vector<internal::KerasCall> calls;
  if (!StartsWithInput()) calls.emplace_back();  // Keras's InputLayer: layer nullptr
  for (Layer* layer : layers_) {
    internal::KerasCall& call = calls.emplace_back();
    call.layer = layer;
    if (calls.size() > 1) {
      call.inputs.push_back({static_cast<int>(calls.size()) - 2, 0});
      call.input_ranks.push_back(-1);
    }
  }
  return internal::KerasOperationOrder(calls, {{static_cast<int>(calls.size()) - 1, 0}}, {0},
                                       /*mask_operations=*/true);
}

std::vector<Trackable::Child> Sequential::Operations() {
  // The mask ops take indices of their own, with no node in the checkpoint.
  std::vector<Child> children;
  const std::vector<KerasOperation> ops = keras3_operations();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].layer != nullptr) {
      children.push_back({std::to_string(i), ops[i].layer});
    } else if (ops[i].mask_op.empty()) {
      children.push_back({std::to_string(i), input_.get()});
    }
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
