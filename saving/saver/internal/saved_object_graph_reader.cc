#include "saving/saver/internal/saved_object_graph_reader.h"

#include <algorithm>
#include <utility>

#include "runtime/errors.h"
#include "saving/proto/saved_object_graph.pb.h"

namespace eager::internal {
namespace {

namespace pb = ::eager::tfproto;

// Structures nest at most this deep: a crafted signature must not recurse
// the stack away.
constexpr int kMaxDepth = 64;

SavedTensorSpec ToSpec(const pb::TensorSpecProto& p, std::string name) {
  SavedTensorSpec spec{.name = std::move(name), .tf_dtype = p.dtype()};
  spec.shape.unknown_rank = p.shape().unknown_rank();
  for (const auto& d : p.shape().dim()) spec.shape.dims.push_back(d.size());
  return spec;
}

// Appends the TensorSpecs of `v` in TF's nest.flatten order (a dict by
// sorted key), each named `name` (extended by "/<key or index>" below the
// top), or with `own_names` by the spec's own name when it has one (an
// argument's). Non-tensor leaves (None, Python constants) take no argument.
void Flatten(const pb::StructuredValue& v, const std::string& name, bool top, bool own_names,
             int depth, const std::string& where, std::vector<SavedTensorSpec>& out) {
  if (depth > kMaxDepth) {
    throw InvalidArgumentError(StrCat(where, ": a structure nests deeper than ", kMaxDepth));
  }
  const auto child = [&](const std::string& key) {
    return top || name.empty() ? key : StrCat(name, "/", key);
  };
  switch (v.kind_case()) {
    case pb::StructuredValue::kTensorSpecValue: {
      const std::string& own = v.tensor_spec_value().name();
      out.push_back(ToSpec(v.tensor_spec_value(), own_names && !own.empty() ? own : name));
      return;
    }
    case pb::StructuredValue::kListValue:
    case pb::StructuredValue::kTupleValue: {
      const auto& values = v.has_list_value() ? v.list_value().values() : v.tuple_value().values();
      for (int i = 0; i < values.size(); ++i) {
        Flatten(values[i], child(StrCat(top ? "output_" : "", i)), false, own_names, depth + 1,
                where, out);
      }
      return;
    }
    case pb::StructuredValue::kDictValue: {
      std::vector<std::string> keys;
      keys.reserve(static_cast<size_t>(v.dict_value().fields().size()));
      for (const auto& [key, unused] : v.dict_value().fields()) keys.push_back(key);
      std::sort(keys.begin(), keys.end());
      for (const std::string& key : keys) {
        Flatten(v.dict_value().fields().at(key), child(key), false, own_names, depth + 1, where,
                out);
      }
      return;
    }
    case pb::StructuredValue::kNamedTupleValue:
      for (const auto& pair : v.named_tuple_value().values()) {
        Flatten(pair.value(), child(pair.key()), false, own_names, depth + 1, where, out);
      }
      return;
    default:
      return;  // None, a number, a string: no tensor
  }
}

// The user's inputs of a trace: its canonicalized_input_signature is
// (args, kwargs); each argument's specs are named by the spec's own name
// (the Python argument's), else by its position ("0", "1/key").
std::vector<SavedTensorSpec> Inputs(const pb::StructuredValue& signature,
                                    const std::string& where) {
  if (!signature.has_tuple_value() || signature.tuple_value().values_size() != 2) {
    throw InvalidArgumentError(
        StrCat(where, ": its input signature is not an (args, kwargs) pair of structures"));
  }
  std::vector<SavedTensorSpec> specs;
  Flatten(signature.tuple_value().values(0), "", false, true, 0, where, specs);
  Flatten(signature.tuple_value().values(1), "", false, true, 0, where, specs);
  return specs;
}

// Output keys as SavedModelBundle::Run's for a signature: a dict's keys,
// "output_<i>" for a tensor or a sequence.
std::vector<SavedTensorSpec> Outputs(const pb::StructuredValue& signature,
                                     const std::string& where) {
  std::vector<SavedTensorSpec> specs;
  if (signature.has_tensor_spec_value()) {
    specs.push_back(ToSpec(signature.tensor_spec_value(), "output_0"));
  } else {
    Flatten(signature, "", true, false, 0, where, specs);
  }
  return specs;
}

}  // namespace

SavedFunctions ReadSavedFunctions(const std::string& bytes, const std::string& where) {
  pb::SavedObjectGraph graph;
  if (!graph.ParseFromString(bytes)) {
    throw DataLossError(StrCat(where, ": the object graph is not a SavedObjectGraph"));
  }
  const size_t n = static_cast<size_t>(graph.nodes_size());
  SavedFunctions out;
  out.object_paths.assign(n, "");
  // Breadth-first from the root: each object's first path, and each
  // function's dotted name. The "signatures" map's functions are signatures.
  std::vector<bool> seen(n, false);
  std::vector<std::pair<size_t, std::string>> queue;  // id, dotted name
  if (n > 0) {
    queue.emplace_back(0, "");
    seen[0] = true;
  }
  std::vector<std::pair<std::string, size_t>> functions;
  for (size_t q = 0; q < queue.size(); ++q) {
    const auto [id, dotted] = queue[q];
    for (const auto& child : graph.nodes(static_cast<int>(id)).children()) {
      const auto c = static_cast<size_t>(child.node_id());
      if (child.node_id() < 0 || c >= n) {
        throw InvalidArgumentError(StrCat(where, ": object ", id, "'s child '", child.local_name(),
                                          "' is object ", child.node_id(), "; there are ", n));
      }
      const std::string name =
          dotted.empty() ? child.local_name() : StrCat(dotted, ".", child.local_name());
      if (graph.nodes(static_cast<int>(c)).has_function()) {
        functions.emplace_back(name, c);
      }
      if (seen[c]) continue;
      seen[c] = true;
      out.object_paths[c] = out.object_paths[id].empty()
                                ? child.local_name()
                                : StrCat(out.object_paths[id], "/", child.local_name());
      if (!(id == 0 && child.local_name() == "signatures")) queue.emplace_back(c, name);
    }
  }
  for (const auto& [name, id] : functions) {
    if (out.functions.count(name) != 0) continue;
    std::vector<SavedConcreteFunction>& traces = out.functions[name];
    for (const std::string& f : graph.nodes(static_cast<int>(id)).function().concrete_functions()) {
      const std::string at = StrCat(where, ": function '", name, "' trace '", f, "'");
      auto it = graph.concrete_functions().find(f);
      if (it == graph.concrete_functions().end()) {
        throw InvalidArgumentError(StrCat(at, " is not among the object graph's functions"));
      }
      SavedConcreteFunction trace{.name = f};
      trace.inputs = Inputs(it->second.canonicalized_input_signature(), at);
      trace.outputs = Outputs(it->second.output_signature(), at);
      trace.bound_inputs.reserve(static_cast<size_t>(it->second.bound_inputs_size()));
      for (const int bound : it->second.bound_inputs()) {
        if (bound < 0 || static_cast<size_t>(bound) >= n) {
          throw InvalidArgumentError(
              StrCat(at, ": bound input ", bound, " is not an object (there are ", n, ")"));
        }
        trace.bound_inputs.push_back(bound);
      }
      traces.push_back(std::move(trace));
    }
  }
  return out;
}

}  // namespace eager::internal
