#include "autodiff/functional.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "autodiff/input_layer.h"
#include "autodiff/internal/keras_operations.h"
#include "runtime/errors.h"
#include "runtime/names.h"

namespace eager {
namespace {

using internal::FunctionalNode;

std::string Describe(const KerasTensor& t) {
  return StrCat("output ", t.index(), " of layer '", t.layer().name(), "' (shape ", t.shape(), ")");
}

// The calls the outputs depend on, inputs first (a depth-first walk from
// the outputs, stopping at the model's inputs; iterative, as a model from a
// file may be deep). A model input that is an inner tensor is walked as its
// stand-in InputLayer's node (`stand_in`), as Keras clones it.
struct GraphMap {
  std::map<std::pair<const FunctionalNode*, int>, const FunctionalNode*> stand_in;
  std::vector<const FunctionalNode*> order;
  std::set<const FunctionalNode*> finished;

  const FunctionalNode* NodeOf(const KerasTensor& t) const {
    const auto it = stand_in.find({t.node().get(), t.index()});
    return it == stand_in.end() ? t.node().get() : it->second;
  }
};

void Visit(const KerasTensor& t, GraphMap& map) {
  // A graph of KerasTensors has no cycles: a node's inputs exist before it.
  std::vector<std::pair<const FunctionalNode*, size_t>> stack;  // node, next input
  const FunctionalNode* root = map.NodeOf(t);
  if (map.finished.contains(root)) return;
  stack.emplace_back(root, 0);
  while (!stack.empty()) {
    const FunctionalNode* node = stack.back().first;
    const size_t next = stack.back().second;
    if (next < node->inputs.size()) {
      ++stack.back().second;
      const FunctionalNode* parent = map.NodeOf(node->inputs[next]);
      if (!map.finished.contains(parent)) stack.emplace_back(parent, 0);
      continue;
    }
    map.finished.insert(node);
    map.order.push_back(node);
    stack.pop_back();
  }
}

// An InputLayer's node standing for the inner tensor `t` as a model input.
std::shared_ptr<FunctionalNode> StandIn(const KerasTensor& t) {
  auto node = std::make_shared<FunctionalNode>();
  const std::vector<int64_t> dims = t.shape().ToVector();
  node->owned_layer = std::make_shared<InputLayer>(
      Shape::Partial(std::vector<int64_t>(dims.begin() + 1, dims.end())));
  node->layer = node->owned_layer.get();
  node->shapes.push_back(t.shape());
  node->dtypes.push_back(t.dtype());
  return node;
}

}  // namespace

// Keras 3's "_operations" list object.
class Model::OperationList final : public Trackable {
 public:
  explicit OperationList(const Model& model) : model_(model) {}
  std::vector<Child> Children() override {
    std::vector<Child> children;
    // Keras 3's indices, which count its mask operations (they save nothing).
    const std::vector<KerasOperation>& ops = model_.keras3_operations_;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].layer != nullptr) children.push_back({std::to_string(i), ops[i].layer});
    }
    return children;
  }

 private:
  const Model& model_;
};

Model::Model(std::vector<KerasTensor> inputs, std::vector<KerasTensor> outputs,
             std::string_view name)
    : Layer(name.empty() ? UniqueObjectName("functional") : std::string(name)),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      operation_list_(std::make_unique<OperationList>(*this)) {
  EAGER_CHECK(!inputs_.empty() && !outputs_.empty(), "Model '", this->name(),
              "' needs at least one input and one output, got ", inputs_.size(), " and ",
              outputs_.size());
  for (size_t i = 0; i < inputs_.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      EAGER_CHECK(!(inputs_[i] == inputs_[j]), "Model '", this->name(), "': inputs ", j, " and ", i,
                  " are the same tensor, ", Describe(inputs_[i]));
    }
  }
  GraphMap map;
  for (const KerasTensor& in : inputs_) {
    if (in.node()->is_input()) {
      input_nodes_.push_back(in.node().get());
    } else {
      stand_ins_.push_back(StandIn(in));
      input_nodes_.push_back(stand_ins_.back().get());
      map.stand_in[{in.node().get(), in.index()}] = input_nodes_.back();
    }
  }
  for (const KerasTensor& out : outputs_) Visit(out, map);
  // Every Input reached must be a model input.
  for (const FunctionalNode* node : map.order) {
    if (!node->is_input()) continue;
    const bool listed =
        std::find(input_nodes_.begin(), input_nodes_.end(), node) != input_nodes_.end();
    EAGER_CHECK(listed, "Model '", this->name(), "': the outputs depend on Input '",
                node->layer->name(), "', which is not among the model's inputs");
  }
  // Keras's map_graph (autodiff/internal/keras_operations.h), with Keras 3's
  // mask operations and without (tf_keras's order).
  std::vector<const FunctionalNode*> call_nodes = map.order;
  for (const FunctionalNode* node : input_nodes_) {
    if (std::find(call_nodes.begin(), call_nodes.end(), node) == call_nodes.end()) {
      call_nodes.push_back(node);  // an input no output depends on
    }
  }
  std::map<const FunctionalNode*, int> call_of;
  for (const FunctionalNode* node : call_nodes) {
    call_of.emplace(node, static_cast<int>(call_of.size()));
  }
  std::vector<internal::KerasCall> calls;
  for (const FunctionalNode* node : call_nodes) {
    internal::KerasCall& call = calls.emplace_back();
    call.layer = node->layer;
    if (std::find(input_nodes_.begin(), input_nodes_.end(), node) != input_nodes_.end()) continue;
    for (const KerasTensor& in : node->inputs) {
      call.inputs.push_back({call_of.at(map.NodeOf(in)), in.index()});
      call.input_ranks.push_back(in.shape().rank());
    }
  }
  std::vector<internal::KerasTensorRef> ends;
  for (const KerasTensor& out : outputs_)
    ends.push_back({call_of.at(map.NodeOf(out)), out.index()});
  std::vector<int> model_inputs;
  for (const FunctionalNode* node : input_nodes_) model_inputs.push_back(call_of.at(node));
  keras3_operations_ = internal::KerasOperationOrder(calls, ends, model_inputs, true);
  for (const KerasOperation& op : keras3_operations_) {
    if (op.layer != nullptr) operations_.push_back(op.layer);
  }
  for (const KerasOperation& op : internal::KerasOperationOrder(calls, ends, model_inputs, false)) {
    tf_keras_layers_.push_back(op.layer);
  }
  for (const FunctionalNode* node : map.order) {
    if (!node->is_input()) schedule_.push_back(node);
  }
}

Model::~Model() = default;

std::vector<Tensor> Model::CallMany(const std::vector<Tensor>& inputs, bool training) {
  return CallWithMasks(inputs, {}, training).outputs;
}

Layer::MaskedOutputs Model::CallWithMasks(const std::vector<Tensor>& inputs,
                                          const std::vector<std::optional<Tensor>>& input_masks,
                                          bool training) {
  EAGER_CHECK(inputs.size() == inputs_.size(), "Model '", name(), "' takes ", inputs_.size(),
              " inputs, got ", inputs.size());
  std::map<std::pair<const FunctionalNode*, int>, Tensor> values;
  // Keras's masks travel with the tensors: made by a layer (Embedding with
  // mask_zero, Masking), used and passed on or dropped (autodiff/layer.h).
  std::map<std::pair<const FunctionalNode*, int>, Tensor> masks;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const KerasTensor& in = inputs_[i];
    EAGER_CHECK(inputs[i].dtype() == in.dtype(), "Model '", name(), "': input ", i, " ('",
                in.layer().name(), "') must be ", in.dtype(), ", got ", inputs[i].dtype());
    // The InputLayer (or an inner tensor's stand-in) checks the shape.
    Tensor value = (*input_nodes_[i]->layer)(inputs[i]);
    values[{in.node().get(), in.index()}] = value;
    // A nested model's input keeps the mask it came with (Keras 3's
    // Functional.call sets it on the input).
    if (i < input_masks.size() && input_masks[i]) {
      masks[{in.node().get(), in.index()}] = *input_masks[i];
    }
  }
  for (const FunctionalNode* node : schedule_) {
    std::vector<Tensor> args;
    std::vector<std::optional<Tensor>> arg_masks;
    for (const KerasTensor& in : node->inputs) {
      const std::pair<const FunctionalNode*, int> key{in.node().get(), in.index()};
      args.push_back(values.at(key));
      const auto m = masks.find(key);
      arg_masks.push_back(m == masks.end() ? std::nullopt : std::optional<Tensor>(m->second));
    }
    MaskedOutputs results = node->layer->CallWithMasks(args, arg_masks, training);
    EAGER_CHECK(results.outputs.size() == node->shapes.size(), "Model '", name(), "': layer '",
                node->layer->name(), "' returned ", results.outputs.size(), " outputs, ",
                node->shapes.size(), " when called symbolically");
    for (size_t i = 0; i < results.outputs.size(); ++i) {
      values[{node, static_cast<int>(i)}] = std::move(results.outputs[i]);
      if (i < results.masks.size() && results.masks[i]) {
        masks[{node, static_cast<int>(i)}] = std::move(*results.masks[i]);
      }
    }
  }
  MaskedOutputs result;
  for (const KerasTensor& out : outputs_) {
    const std::pair<const FunctionalNode*, int> key{out.node().get(), out.index()};
    result.outputs.push_back(values.at(key));
    const auto m = masks.find(key);
    result.masks.push_back(m == masks.end() ? std::nullopt : std::optional<Tensor>(m->second));
  }
  return result;
}

Tensor Model::Call(const Tensor& x, bool training) {
  EAGER_CHECK(
      inputs_.size() == 1 && outputs_.size() == 1, "Model '", name(), "' has ", inputs_.size(),
      " inputs and ", outputs_.size(),
      " outputs; pass a std::vector<Tensor> (a braced list of one tensor is a single tensor)");
  return CallMany({x}, training)[0];
}

std::vector<Trackable::Child> Model::Children() {
  std::vector<Child> children;
  if (layout_ == KerasLayout::kKeras3) {
    children.push_back({"_operations", operation_list_.get()});
  } else {
    int weighted = 0;
    for (size_t i = 0; i < tf_keras_layers_.size(); ++i) {
      Layer* layer = tf_keras_layers_[i];
      if (!layer->Variables().empty()) {
        children.push_back({"layer_with_weights-" + std::to_string(weighted++), layer});
      }
      children.push_back({"layer-" + std::to_string(i), layer});
    }
  }
  for (Child& c : Module::Children()) children.push_back(std::move(c));
  return children;
}

std::string Model::SavedStructureMismatch(const std::vector<std::string_view>& saved_edges) {
  const auto has = [&](std::string_view edge) {
    return std::find(saved_edges.begin(), saved_edges.end(), edge) != saved_edges.end();
  };
  const std::string here =
      StrCat("Model '", name(), "' is in the ", KerasLayoutName(layout_), " layout");
  if (has("_functional")) {
    return StrCat("the checkpoint holds a Keras 3 Sequential (edge '_functional/_operations'), ",
                  "which a functional Model does not take: restore it into an eager::Sequential");
  }
  if (layout_ != KerasLayout::kKeras3 && has("_operations")) {
    return StrCat("the checkpoint holds a Keras 3 functional model (edge '_operations'), but ",
                  here, "; call SetKerasLayout(..., KerasLayout::kKeras3) before restoring");
  }
  if (layout_ == KerasLayout::kKeras3) {
    for (std::string_view edge : {"layer_with_weights-0", "layer-0"}) {
      if (has(edge)) {
        return StrCat("the checkpoint holds a tf_keras (Keras 2) model (edge '", edge, "'), but ",
                      here,
                      "; call SetKerasLayout(..., KerasLayout::kKeras2) (or kKeras2Legacy for "
                      "tf_keras's legacy optimizers) before restoring");
      }
    }
  }
  return {};
}

}  // namespace eager
