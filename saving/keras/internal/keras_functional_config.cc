#include "saving/keras/internal/keras_functional_config.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "autodiff/input_layer.h"
#include "autodiff/layers/merging.h"
#include "runtime/errors.h"
#include "saving/keras/internal/keras_layer_kinds.h"
#include "saving/keras/internal/keras_layout.h"

namespace eager::keras_internal {
namespace {

using internal::FunctionalNode;

const char* KerasDTypeName(DType dtype) { return dtype == DType::kFloat64 ? "float64" : "float32"; }

Json ShapeJson(const Shape& shape) {
  Json s = Json::array();
  for (int64_t d : shape.dims()) s.push_back(d < 0 ? Json(nullptr) : Json(d));
  return s;
}

// ---- writing ----

class ConfigWriter {
 public:
  explicit ConfigWriter(Model& model) : model_(model) {
    std::set<const FunctionalNode*> seen;
    // Depth first from the outputs: every node after the nodes it reads.
    std::function<void(const FunctionalNode*)> visit = [&](const FunctionalNode* node) {
      if (!seen.insert(node).second) return;
      for (const KerasTensor& t : node->inputs) visit(t.node().get());
      nodes_of_[node->layer].push_back(node);
    };
    for (const KerasTensor& t : model.outputs()) visit(t.node().get());
    // An input no output reads is still one of the model's (Keras lists it).
    for (const KerasTensor& t : model.inputs()) visit(t.node().get());
    for (const KerasTensor& t : model.inputs()) {
      if (!t.node()->is_input()) {
        throw UnimplementedError(StrCat("Keras model '", model.name(), "': input produced by '",
                                        t.layer().name(), "' is not an Input(); Keras's ",
                                        "Functional config needs the model's inputs to be Inputs"));
      }
    }
  }

  // [layer name, node index, output index].
  Json History(const KerasTensor& t) const {
    auto it = nodes_of_.find(&t.layer());
    if (it != nodes_of_.end()) {
      for (size_t index = 0; index < it->second.size(); ++index) {
        if (it->second[index] == t.node().get())
          return Json::array({t.layer().name(), index, t.index()});
      }
    }
    throw InternalError(StrCat("Keras model '", model_.name(), "': a tensor of layer '",
                               t.layer().name(), "' is not in the model's graph"));
  }

  Json TensorJson(const KerasTensor& t) const {
    return {{"class_name", "__keras_tensor__"},
            {"config",
             {{"shape", ShapeJson(t.shape())},
              {"dtype", KerasDTypeName(t.dtype())},
              {"keras_history", History(t)}}}};
  }

  Json InboundNodes(Layer& layer) const {
    Json nodes = Json::array();
    // Merge layers and multi-input Models take a list; Keras writes a
    // one-input Model's call with the tensor alone.
    auto* nested = dynamic_cast<Model*>(&layer);
    const bool merge = dynamic_cast<layers::MultiInputLayer*>(&layer) != nullptr ||
                       (nested != nullptr && nested->inputs().size() > 1);
    auto found = nodes_of_.find(&layer);
    if (found == nodes_of_.end()) return nodes;
    for (const FunctionalNode* node : found->second) {
      Json args = Json::array();
      if (merge) {
        Json list = Json::array();
        for (const KerasTensor& t : node->inputs) list.push_back(TensorJson(t));
        args.push_back(std::move(list));
      } else {
        // One tensor, or several positional ones (MultiHeadAttention's
        // query, value[, key]).
        for (const KerasTensor& t : node->inputs) args.push_back(TensorJson(t));
      }
      nodes.push_back({{"args", args}, {"kwargs", Json::object()}});
    }
    return nodes;
  }

  // input_layers / output_layers. Keras counts a nested Model's nodes
  // there from 1: its node 0 is the one linking its own inputs to outputs
  // (Functional.get_config's node_reindexing_map), which inbound_nodes'
  // histories skip.
  Json Ends(const std::vector<KerasTensor>& tensors) const {
    auto end = [&](const KerasTensor& t) {
      Json h = History(t);
      if (dynamic_cast<const Model*>(&t.layer()) != nullptr) h[1] = h[1].get<int64_t>() + 1;
      return h;
    };
    if (tensors.size() == 1) return end(tensors[0]);
    Json out = Json::array();
    for (const KerasTensor& t : tensors) out.push_back(end(t));
    return out;
  }

 private:
  Model& model_;
  std::map<const Layer*, std::vector<const FunctionalNode*>> nodes_of_;
};

// ---- reading ----

[[noreturn]] void Invalid(const std::string& file, const std::string& where,
                          const std::string& what) {
  throw InvalidArgumentError(StrCat(".keras file '", file, "': ", where, " ", what));
}

// A [name, node, output] history, or nullopt when `j` is not one.
struct History {
  std::string layer;
  int64_t node;
  int64_t output;
};

std::optional<History> AsHistory(const Json& j) {
  if (!j.is_array() || j.size() != 3 || !j[0].is_string() || !j[1].is_number_integer() ||
      !j[2].is_number_integer()) {
    return std::nullopt;
  }
  return History{j[0].get<std::string>(), j[1].get<int64_t>(), j[2].get<int64_t>()};
}

class ConfigReplay {
 public:
  ConfigReplay(std::string file) : file_(std::move(file)) {}

  void AddLayer(const std::string& name, Layer* layer, const std::string& where) {
    if (!outputs_.emplace(name, std::vector<std::vector<KerasTensor>>{}).second) {
      Invalid(file_, where + ".name", StrCat("'", name, "' names two layers"));
    }
    layers_[name] = layer;
  }
  void AddInput(const std::string& name, const KerasTensor& t) { outputs_[name].push_back({t}); }
  // A mask op Keras 3 recorded (autodiff/internal/keras_operations.h): its
  // output is read only as a call's mask, which eager's layers recompute.
  void AddMaskOp(const std::string& name, const std::string& where) {
    if (outputs_.contains(name) || !mask_ops_.insert(name).second) {
      Invalid(file_, where + ".name", StrCat("'", name, "' names two layers"));
    }
  }

  // The tensor a history names; nullopt when its node is not made yet.
  // Throws for a history that can never resolve.
  // `end`: a history of input_layers / output_layers, whose nodes of a
  // nested Model count from 1 (ConfigWriter::Ends).
  std::optional<KerasTensor> Resolve(const Json& history, const std::string& where,
                                     bool end = false) const {
    std::optional<History> h = AsHistory(history);
    if (!h) Invalid(file_, where, "is not a [layer name, node index, tensor index] list");
    if (mask_ops_.contains(h->layer)) {
      throw UnimplementedError(StrCat(".keras file '", file_, "': ", where,
                                      " reads the output of '", h->layer,
                                      "', a Keras op, as a layer input (eager reads "
                                      "Keras's ops only as the masks its layers compute)"));
    }
    auto it = outputs_.find(h->layer);
    if (it == outputs_.end()) Invalid(file_, where, StrCat("names no layer '", h->layer, "'"));
    if (h->node < 0 || h->output < 0) Invalid(file_, where, "has a negative index");
    if (end && dynamic_cast<const Model*>(layers_.at(h->layer)) != nullptr) {
      if (h->node == 0) {
        Invalid(file_, where,
                StrCat("names node 0 of the nested Model '", h->layer,
                       "', its own inputs-to-outputs node (Keras counts its calls from 1 here)"));
      }
      --h->node;
    }
    if (h->node >= static_cast<int64_t>(it->second.size())) return std::nullopt;
    const std::vector<KerasTensor>& outs = it->second[h->node];
    if (h->output >= static_cast<int64_t>(outs.size())) {
      Invalid(
          file_, where,
          StrCat("asks for output ", h->output, " of '", h->layer, "', which has ", outs.size()));
    }
    return outs[h->output];
  }

  std::optional<KerasTensor> ResolveTensor(const Json& t, const std::string& where) const {
    if (!t.is_object() || t.value("class_name", Json()) != "__keras_tensor__" ||
        !t.contains("config") || !t["config"].is_object() ||
        !t["config"].contains("keras_history")) {
      throw UnimplementedError(StrCat(".keras file '", file_, "': ", where,
                                      " is not a __keras_tensor__ (eager's configs pass tensors "
                                      "only)"));
    }
    return Resolve(t["config"]["keras_history"], where + ".config.keras_history");
  }

  // Makes the call `node` describes if its inputs exist; false otherwise.
  bool TryNode(const std::string& name, const Json& node, const std::string& where) {
    if (!node.is_object() || !node.contains("args") || !node["args"].is_array() ||
        node["args"].empty() || node["args"].size() > 3) {
      throw UnimplementedError(StrCat(".keras file '", file_, "': ", where,
                                      " is not {\"args\": [tensor or list of tensors]} or 2 to 3 ",
                                      "positional tensors (eager reads such calls)"));
    }
    if (node.contains("kwargs")) {
      const Json& kwargs = node["kwargs"];
      if (!kwargs.is_object()) Invalid(file_, where + ".kwargs", "is not an object");
      for (const auto& [key, value] : kwargs.items()) {
        // Keras writes a nested Model's call with "mask": null, or a list of
        // nulls (one per input) for a multi-input one: no masks. A mask
        // Keras 3 computed (a recurrent layer's "mask" from an Embedding's
        // NotEqual) is recomputed by eager's layers.
        const auto mask_like = [&](const Json& v) { return v.is_null() || NamesMaskOp(v); };
        const bool masks =
            key.ends_with("mask") &&
            (mask_like(value) ||
             (value.is_array() && std::all_of(value.begin(), value.end(), mask_like)));
        // The training flag Keras recorded when the model was built: the
        // caller's `training` decides when it runs.
        const bool training = key == "training" && value.is_boolean();
        if (!value.is_null() && !masks && !training) {
          throw UnimplementedError(StrCat(".keras file '", file_, "': ", where, ".kwargs.", key,
                                          " (eager's layers take no keyword arguments)"));
        }
      }
    }
    std::vector<KerasTensor> inputs;
    if (node["args"].size() > 1) {
      for (size_t i = 0; i < node["args"].size(); ++i) {
        std::optional<KerasTensor> t =
            ResolveTensor(node["args"][i], StrCat(where, ".args[", i, "]"));
        if (!t) return false;
        inputs.push_back(*t);
      }
      return Call(name, inputs, where);
    }
    const Json& arg = node["args"][0];
    const std::string arg_where = where + ".args[0]";
    if (arg.is_array()) {
      if (arg.empty() || arg.size() > 64) Invalid(file_, arg_where, "is a list of 0 or over 64");
      for (size_t i = 0; i < arg.size(); ++i) {
        std::optional<KerasTensor> t = ResolveTensor(arg[i], StrCat(arg_where, "[", i, "]"));
        if (!t) return false;
        inputs.push_back(*t);
      }
    } else {
      std::optional<KerasTensor> t = ResolveTensor(arg, arg_where);
      if (!t) return false;
      inputs.push_back(*t);
    }
    return Call(name, inputs, where);
  }

  // The symbolic call of layer `name` on `inputs`; true.
  bool Call(const std::string& name, const std::vector<KerasTensor>& inputs,
            const std::string& where) {
    Layer& layer = *layers_.at(name);
    std::vector<KerasTensor> outs;
    try {
      outs = layer.CallSymbolic(inputs);
    } catch (const Error& e) {
      ThrowError(e.code(), StrCat(".keras file '", file_, "': ", where, ": ", e.what()));
    }
    outputs_[name].push_back(std::move(outs));
    return true;
  }

  // input_layers / output_layers: one history or a list of them.
  std::vector<KerasTensor> Ends(const Json& j, const std::string& where) const {
    std::vector<KerasTensor> out;
    auto one = [&](const Json& h, const std::string& w) {
      std::optional<KerasTensor> t = Resolve(h, w, /*end=*/true);
      if (!t) Invalid(file_, w, "names a node no layer call made");
      out.push_back(*t);
    };
    if (AsHistory(j)) {
      one(j, where);
    } else if (j.is_array() && !j.empty()) {
      for (size_t i = 0; i < j.size(); ++i) one(j[i], StrCat(where, "[", i, "]"));
    } else {
      Invalid(file_, where, "is not a history or a non-empty list of them");
    }
    return out;
  }

 private:
  bool NamesMaskOp(const Json& t) const {
    if (!t.is_object() || t.value("class_name", Json()) != "__keras_tensor__" ||
        !t.contains("config") || !t["config"].is_object() ||
        !t["config"].contains("keras_history")) {
      return false;
    }
    const std::optional<History> h = AsHistory(t["config"]["keras_history"]);
    return h && mask_ops_.contains(h->layer);
  }

  std::string file_;
  std::set<std::string> mask_ops_;
  std::map<std::string, Layer*> layers_;
  std::map<std::string, std::vector<std::vector<KerasTensor>>> outputs_;
};

// The ops Keras 3's compute_mask methods record (keras_operations.h).
const std::set<std::string> kMaskOps = {"NotEqual",   "Any",       "LogicalOr",  "OnesLike",
                                        "ExpandDims", "ZerosLike", "Concatenate"};

constexpr int64_t kMaxInputElements = int64_t{1} << 24;

KerasTensor InputFromConfig(const Json& entry, const std::string& file, const std::string& where,
                            const std::string& name) {
  const Json& cfg = entry.at("config");
  const Json* shape = cfg.contains("batch_shape")         ? &cfg["batch_shape"]
                      : cfg.contains("batch_input_shape") ? &cfg["batch_input_shape"]
                                                          : nullptr;
  if (shape == nullptr || !shape->is_array() || shape->size() < 2 || shape->size() > 9) {
    Invalid(file, where + ".config.batch_shape", "is not a list of 2 to 9 entries");
  }
  std::vector<int64_t> dims;
  int64_t elements = 1;
  for (size_t k = 1; k < shape->size(); ++k) {
    const Json& d = (*shape)[k];
    if (!d.is_number_integer() || d.get<int64_t>() <= 0 || d.get<int64_t>() > kMaxConfigInt) {
      Invalid(file, StrCat(where, ".config.batch_shape[", k, "]"),
              StrCat("is ", d.dump().substr(0, 40), "; expected a positive integer"));
    }
    dims.push_back(d.get<int64_t>());
    elements *= d.get<int64_t>();
    if (elements > kMaxInputElements) {
      Invalid(file, where + ".config.batch_shape",
              StrCat("has over ", kMaxInputElements, " elements per example (eager runs each ",
                     "layer on such an input to build the model)"));
    }
  }
  DType dtype = DType::kFloat32;
  if (cfg.contains("dtype") && !cfg["dtype"].is_null()) {
    // An Embedding's ids come as int32 or int64.
    const std::map<std::string, DType> dtypes = {{"float32", DType::kFloat32},
                                                 {"float64", DType::kFloat64},
                                                 {"int32", DType::kInt32},
                                                 {"int64", DType::kInt64}};
    const auto it =
        cfg["dtype"].is_string() ? dtypes.find(cfg["dtype"].get<std::string>()) : dtypes.end();
    if (it == dtypes.end()) {
      throw UnimplementedError(StrCat(".keras file '", file, "': ", where, ".config.dtype is ",
                                      cfg["dtype"].dump().substr(0, 40),
                                      " (eager reads float32, float64, int32 and int64 inputs)"));
    }
    dtype = it->second;
  }
  if (cfg.value("sparse", false) || cfg.value("ragged", false) || cfg.value("optional", false)) {
    throw UnimplementedError(
        StrCat(".keras file '", file, "': ", where, ".config: sparse, ragged or optional inputs"));
  }
  return Input(dims, dtype, name);
}

}  // namespace

Json FunctionalConfig(Model& model, DType dtype) {
  const ConfigWriter writer(model);
  std::map<std::string, const Layer*> names;
  Json layers = Json::array();
  for (Layer* op : model.operations()) {
    if (!names.emplace(op->name(), op).second) {
      throw InvalidArgumentError(StrCat("Keras model '", model.name(), "': two layers are named '",
                                        op->name(), "'; Keras's config names layers uniquely"));
    }
    Json entry;
    if (auto* input = dynamic_cast<InputLayer*>(op)) {
      // Its node's output: the Input()'s shape and dtype.
      const KerasTensor* t = nullptr;
      for (const KerasTensor& in : model.inputs()) {
        if (&in.layer() == input) t = &in;
      }
      if (t == nullptr) {
        throw InternalError(StrCat("Keras model '", model.name(), "': InputLayer '", op->name(),
                                   "' is not one of the model's inputs"));
      }
      entry = {{"module", "keras.layers"},
               {"class_name", "InputLayer"},
               {"config",
                {{"batch_shape", ShapeJson(t->shape())},
                 {"dtype", KerasDTypeName(t->dtype())},
                 {"sparse", false},
                 {"ragged", false},
                 {"name", op->name()},
                 {"optional", false}}},
               {"registered_name", nullptr},
               {"name", op->name()},
               {"inbound_nodes", Json::array()}};
    } else {
      entry = LayerEntryJson(*op, dtype);
      entry["name"] = op->name();
      entry["inbound_nodes"] = writer.InboundNodes(*op);
    }
    layers.push_back(std::move(entry));
  }
  return {{"module", "keras.src.models.functional"},
          {"class_name", "Functional"},
          {"config",
           {{"name", model.name()},
            {"trainable", true},
            {"layers", layers},
            {"input_layers", writer.Ends(model.inputs())},
            {"output_layers", writer.Ends(model.outputs())}}},
          {"registered_name", "Functional"},
          {"build_config", {{"input_shape", nullptr}}}};
}

std::unique_ptr<Model> FunctionalFromConfig(const Json& root, const std::string& where,
                                            const std::string& group, ConfigContext& context) {
  const std::string& file = context.file;
  const std::string at = where + "config";  // this model's config path
  if (!root.contains("config") || !root["config"].is_object())
    Invalid(file, where.empty() ? "config.json" : where.substr(0, where.size() - 1),
            "has no 'config' object");
  const Json& config = root["config"];
  if (!config.contains("layers") || !config["layers"].is_array())
    Invalid(file, at + ".layers", "is not a list");
  const Json& layers = config["layers"];
  ConfigReplay replay(file);
  // Per layer: its inbound_nodes to replay (InputLayers have none).
  struct Calls {
    std::string layer;
    const Json* nodes;
    std::string where;
  };
  std::vector<Calls> calls;
  // config.layers in order: Keras 3's model.operations, each a layer's name
  // or a mask op's Keras class (checked against the model eager builds).
  std::vector<std::pair<std::string, bool>> listed;  // name or class, is a mask op
  bool has_mask_ops = false;
  std::map<std::string, int> used_keys;  // Keras's weights group per layer, as keras_weights.cc
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string layer_where = StrCat(at, ".layers[", i, "]");
    const Json& entry = layers[i];
    if (!entry.is_object() || !entry.contains("config") || !entry["config"].is_object())
      Invalid(file, layer_where, "is not a layer object with a 'config'");
    const Json& name_json =
        entry.contains("name") ? entry["name"] : entry["config"].value("name", Json());
    if (!name_json.is_string() || name_json.get<std::string>().empty() ||
        name_json.get<std::string>().size() > 256) {
      Invalid(file, layer_where + ".name", "is not a string of 1 to 256 characters");
    }
    const std::string name = name_json.get<std::string>();
    const Json& class_json = entry.value("class_name", Json());
    const std::string class_name = class_json.is_string() ? class_json.get<std::string>() : "";
    const Json& module = entry.value("module", Json());
    if (module.is_string() && module.get<std::string>().starts_with("keras.src.ops.") &&
        kMaskOps.contains(class_name)) {
      replay.AddMaskOp(name, layer_where);
      listed.emplace_back(class_name, true);
      has_mask_ops = true;
      continue;
    }
    listed.emplace_back(name, false);
    if (class_name == "InputLayer") {
      const KerasTensor input = InputFromConfig(entry, file, layer_where, name);
      replay.AddLayer(name, &input.layer(), layer_where);
      replay.AddInput(name, input);
      continue;
    }
    const std::string layer_group = NextLayerGroup(entry, group, used_keys);
    std::unique_ptr<Layer> layer = LayerFromEntry(entry, layer_where, layer_group, context);
    // A nested Model's layers are built as it is read (its graph needs them).
    if (dynamic_cast<Model*>(layer.get()) == nullptr)
      BuildFromWeights(context.weights(), file + ":model.weights.h5", layer_group, *layer);
    replay.AddLayer(name, layer.get(), layer_where);
    if (!entry.contains("inbound_nodes") || !entry["inbound_nodes"].is_array())
      Invalid(file, layer_where + ".inbound_nodes", "is not a list");
    calls.push_back({name, &entry["inbound_nodes"], layer_where + ".inbound_nodes"});
    context.owned->push_back(std::move(layer));
  }
  // Keras's replay: per layer in order, its pending nodes in order; a node
  // whose inputs are missing waits for the next pass.
  std::vector<size_t> done(calls.size(), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t c = 0; c < calls.size(); ++c) {
      const Json& nodes = *calls[c].nodes;
      while (done[c] < nodes.size() && replay.TryNode(calls[c].layer, nodes[done[c]],
                                                      StrCat(calls[c].where, "[", done[c], "]"))) {
        ++done[c];
        progress = true;
      }
    }
  }
  for (size_t c = 0; c < calls.size(); ++c) {
    if (done[c] < calls[c].nodes->size()) {
      Invalid(file, StrCat(calls[c].where, "[", done[c], "]"),
              "reads a tensor no layer call makes (a cycle or a history naming a missing node)");
    }
  }
  if (!config.contains("input_layers")) Invalid(file, at, "has no 'input_layers'");
  if (!config.contains("output_layers")) Invalid(file, at, "has no 'output_layers'");
  std::vector<KerasTensor> inputs = replay.Ends(config["input_layers"], at + ".input_layers");
  std::vector<KerasTensor> outputs = replay.Ends(config["output_layers"], at + ".output_layers");
  const std::string name =
      config.value("name", Json()).is_string() ? config["name"].get<std::string>() : std::string();
  std::unique_ptr<Model> model;
  try {
    model = std::make_unique<Model>(std::move(inputs), std::move(outputs), name);
  } catch (const Error& e) {
    ThrowError(e.code(), StrCat(".keras file '", file, "': ", at, ": ", e.what()));
  }
  // Keras 3 lists the mask ops it recorded among the layers; eager's model
  // recomputes them from its layers' masking, and must agree.
  if (has_mask_ops) {
    const std::vector<KerasOperation>& ops = model->keras3_operations();
    for (size_t i = 0; i < std::max(ops.size(), listed.size()); ++i) {
      const std::string have = i >= ops.size() ? std::string("nothing")
                               : ops[i].layer != nullptr
                                   ? StrCat("layer '", ops[i].layer->name(), "'")
                                   : StrCat("mask op ", ops[i].mask_op);
      const std::string want = i >= listed.size() ? std::string("nothing")
                               : listed[i].second ? StrCat("mask op ", listed[i].first)
                                                  : StrCat("layer '", listed[i].first, "'");
      if (have != want) {
        throw UnimplementedError(
            StrCat(".keras file '", file, "': ", at, ".layers[", i, "] is ", want,
                   ", where eager's model of this config has ", have,
                   " (eager recomputes the mask ops Keras 3 records from its layers' masking)"));
      }
    }
  }
  return model;
}

}  // namespace eager::keras_internal
