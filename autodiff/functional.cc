#include "autodiff/functional.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "autodiff/input_layer.h"
#include "runtime/errors.h"
#include "runtime/names.h"

namespace eager {
namespace {

using internal::FunctionalNode;

std::string Describe(const KerasTensor& t) {
  return StrCat("output ", t.index(), " of layer '", t.layer().name(), "' (shape ", t.shape(), ")");
}

// Keras's _build_map: a depth-first walk from the outputs, stopping at the
// model's inputs. `order` gets the nodes inputs-first; `first_seen` the order
// in which layers are first met. A model input that is an inner tensor is
// walked as its stand-in InputLayer's node (`stand_in`), as Keras clones it.
struct GraphMap {
  std::map<std::pair<const FunctionalNode*, int>, const FunctionalNode*> stand_in;
  std::vector<const FunctionalNode*> order;
  std::map<const Layer*, int> first_seen;
  std::set<const FunctionalNode*> finished;

  const FunctionalNode* NodeOf(const KerasTensor& t) const {
    const auto it = stand_in.find({t.node().get(), t.index()});
    return it == stand_in.end() ? t.node().get() : it->second;
  }
};

void Visit(const KerasTensor& t, GraphMap& map) {
  const FunctionalNode* node = map.NodeOf(t);
  if (map.finished.contains(node)) return;
  // A graph of KerasTensors has no cycles: a node's inputs exist before it.
  map.first_seen.emplace(node->layer, static_cast<int>(map.first_seen.size()));
  for (const KerasTensor& in : node->inputs) Visit(in, map);
  map.finished.insert(node);
  map.order.push_back(node);
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
    for (Layer* op : model_.operations_) children.push_back({std::to_string(children.size()), op});
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
  // Keras's map_graph: depths from the outputs (0) up; a layer's depth is
  // its deepest node's.
  std::map<const FunctionalNode*, int> node_depth;
  std::map<const Layer*, int> layer_depth;
  std::vector<const Layer*> layers_seen;  // insertion order, as Keras's dict
  const std::set<const FunctionalNode*> in_graph(map.order.begin(), map.order.end());
  for (auto it = map.order.rbegin(); it != map.order.rend(); ++it) {
    const FunctionalNode* node = *it;
    int depth = node_depth.emplace(node, 0).first->second;
    if (!layer_depth.contains(node->layer)) layers_seen.push_back(node->layer);
    depth = std::max(depth, layer_depth[node->layer]);
    layer_depth[node->layer] = depth;
    node_depth[node] = depth;
    for (const KerasTensor& in : node->inputs) {
      const FunctionalNode* parent = map.NodeOf(in);
      if (!in_graph.contains(parent)) continue;
      node_depth[parent] = std::max(depth + 1, node_depth[parent]);
    }
  }
  // Inputs no output depends on: InputLayers at depth 0, ordered first.
  for (const FunctionalNode* node : input_nodes_) {
    const Layer* layer = node->layer;
    if (!layer_depth.contains(layer)) {
      layer_depth[layer] = 0;
      map.first_seen[layer] = -1;
      layers_seen.push_back(layer);
    }
  }
  std::stable_sort(layers_seen.begin(), layers_seen.end(), [&](const Layer* x, const Layer* y) {
    if (layer_depth[x] != layer_depth[y]) return layer_depth[x] > layer_depth[y];
    return map.first_seen[x] < map.first_seen[y];
  });
  for (const Layer* layer : layers_seen) operations_.push_back(const_cast<Layer*>(layer));
  for (const FunctionalNode* node : map.order) {
    if (!node->is_input()) schedule_.push_back(node);
  }
}

Model::~Model() = default;

std::vector<Tensor> Model::CallMany(const std::vector<Tensor>& inputs, bool training) {
  EAGER_CHECK(inputs.size() == inputs_.size(), "Model '", name(), "' takes ", inputs_.size(),
              " inputs, got ", inputs.size());
  std::map<std::pair<const FunctionalNode*, int>, Tensor> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const KerasTensor& in = inputs_[i];
    EAGER_CHECK(inputs[i].dtype() == in.dtype(), "Model '", name(), "': input ", i, " ('",
                in.layer().name(), "') must be ", in.dtype(), ", got ", inputs[i].dtype());
    // The InputLayer (or an inner tensor's stand-in) checks the shape.
    Tensor value = (*input_nodes_[i]->layer)(inputs[i]);
    values[{in.node().get(), in.index()}] = value;
  }
  for (const FunctionalNode* node : schedule_) {
    std::vector<Tensor> args;
    for (const KerasTensor& in : node->inputs)
      args.push_back(values.at({in.node().get(), in.index()}));
    std::vector<Tensor> results = node->layer->CallMany(args, training);
    EAGER_CHECK(results.size() == node->shapes.size(), "Model '", name(), "': layer '",
                node->layer->name(), "' returned ", results.size(), " outputs, ",
                node->shapes.size(), " when called symbolically");
    for (size_t i = 0; i < results.size(); ++i) {
      values[{node, static_cast<int>(i)}] = std::move(results[i]);
    }
  }
  std::vector<Tensor> outputs;
  for (const KerasTensor& out : outputs_)
    outputs.push_back(values.at({out.node().get(), out.index()}));
  return outputs;
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
    for (size_t i = 0; i < operations_.size(); ++i) {
      if (!operations_[i]->Variables().empty()) {
        children.push_back({"layer_with_weights-" + std::to_string(weighted++), operations_[i]});
      }
      children.push_back({"layer-" + std::to_string(i), operations_[i]});
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
