#include "saving/saver/internal/object_graph_variables.h"

#include <map>
#include <vector>

#include "runtime/errors.h"
#include "runtime/function_library.h"
#include "runtime/variable.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/proto/trackable_object_graph.pb.h"
#include "saving/saver/saver.h"

namespace eager::internal {

namespace {

// The checkpoint key each VarHandleOp of `graph` is restored from, as TF
// 2's own restore function (the SaverDef's restore op, a call of
// __inference__traced_restore_N) says: each of its AssignVariableOps
// assigns a handle argument (the restore node's input of that position) the
// RestoreV2 output of some tensor_names entry, through Identity nodes.
// Empty when the graph has no such function; a body that does not have
// this form maps nothing (the object graph's names then decide).
std::map<std::string, std::string> KeysByRestoreFunction(const Graph& graph,
                                                         const std::string& restore_op) {
  std::map<std::string, std::string> keys;  // handle node -> checkpoint key
  const Node* call = graph.FindNode(restore_op);
  const std::shared_ptr<const FunctionLibrary>& library = graph.functions();
  if (call == nullptr || library == nullptr) return keys;
  const std::string* f_name = AttrAs<std::string>(call->FindAttr("f"));
  const FunctionDefinition* f = f_name == nullptr ? nullptr : library->Find(*f_name);
  if (f == nullptr) return keys;
  std::map<std::string_view, const Node*> nodes;
  for (const Node& n : f->nodes) nodes.emplace(n.name, &n);
  std::map<std::string_view, size_t> args;
  for (size_t i = 0; i < f->inputs.size(); ++i) args.emplace(f->inputs[i].name, i);
  const auto node_of = [&](std::string_view input) -> const Node* {
    auto it = nodes.find(input.substr(0, input.find(':')));
    return it == nodes.end() ? nullptr : it->second;
  };
  for (const Node& assign : f->nodes) {
    if (assign.op != "AssignVariableOp" || assign.inputs.size() < 2) continue;
    auto arg = args.find(assign.inputs[0]);
    if (arg == args.end() || arg->second >= call->inputs.size()) continue;
    // The value: through Identity nodes (at most one step per body node, so
    // a crafted cycle ends) to "RestoreV2:tensors:j".
    std::string_view value = assign.inputs[1];
    const Node* producer = node_of(value);
    for (size_t steps = 0; producer != nullptr && producer->op == "Identity" &&
                           !producer->inputs.empty() && steps < f->nodes.size();
         ++steps) {
      value = producer->inputs[0];
      producer = node_of(value);
    }
    if (producer == nullptr || producer->op != "RestoreV2" || producer->inputs.size() < 2) {
      continue;
    }
    const size_t colon = value.rfind(':');
    if (colon == std::string_view::npos) continue;
    size_t j = 0;
    for (char ch : value.substr(colon + 1)) {
      if (ch < '0' || ch > '9' || j > (size_t{1} << 30)) return {};
      j = j * 10 + static_cast<size_t>(ch - '0');
    }
    const Node* names = node_of(producer->inputs[1]);
    const Tensor* value_attr =
        names == nullptr ? nullptr : AttrAs<Tensor>(names->FindAttr("value"));
    if (value_attr == nullptr || value_attr->dtype() != DType::kString ||
        j >= static_cast<size_t>(value_attr->num_elements())) {
      continue;
    }
    const NodeInput handle = ParseNodeInput(call->inputs[arg->second]);
    keys.emplace(handle.node, value_attr->data<std::string>()[j]);
  }
  return keys;
}

// The checkpoint's object graph (its _CHECKPOINTABLE_OBJECT_GRAPH entry);
// empty when it has none.
tfproto::TrackableObjectGraph CheckpointObjects(const BundleReader& reader,
                                                const std::string& prefix) {
  const std::string key = "_CHECKPOINTABLE_OBJECT_GRAPH";
  tfproto::TrackableObjectGraph objects;
  if (reader.Contains(key)) {
    const Tensor bytes = reader.Read(key);
    if (bytes.dtype() != DType::kString || bytes.num_elements() != 1 ||
        !objects.ParseFromString(bytes.data<std::string>()[0])) {
      throw DataLossError(StrCat(prefix, ": ", key, " is not a TrackableObjectGraph"));
    }
  }
  return objects;
}

// Each object's path from the root (local names joined by '/'), the first
// found breadth-first; "" for the root and for objects not reached. Child
// ids out of range are skipped (a crafted object graph).
std::vector<std::string> ObjectPaths(const tfproto::TrackableObjectGraph& objects) {
  const size_t n = static_cast<size_t>(objects.nodes_size());
  std::vector<std::string> paths(n);
  std::vector<bool> seen(n, false);
  std::vector<size_t> queue;
  if (n > 0) {
    queue.push_back(0);
    seen[0] = true;
  }
  for (size_t q = 0; q < queue.size(); ++q) {
    const size_t id = queue[q];
    for (const auto& child : objects.nodes(static_cast<int>(id)).children()) {
      const auto c = static_cast<size_t>(child.node_id());
      if (child.node_id() < 0 || c >= n || seen[c]) continue;
      seen[c] = true;
      paths[c] = paths[id].empty() ? child.local_name() : paths[id] + "/" + child.local_name();
      queue.push_back(c);
    }
  }
  return paths;
}

}  // namespace

std::unique_ptr<Saver> SaverForObjectGraphVariables(
    Graph& graph, const std::string& prefix, const std::string& restore_op,
    std::map<std::string, std::string>* handle_by_path) {
  const std::map<std::string, std::string> restored = KeysByRestoreFunction(graph, restore_op);
  std::map<std::string, Variable*> by_key;
  std::map<std::string, Variable*> handles;  // shared_name -> variable
  for (int i = 0; i < graph.num_nodes(); ++i) {
    const Node& node = graph.node(i);
    if (node.op != "VarHandleOp") continue;
    const std::string* shared = AttrAs<std::string>(node.FindAttr("shared_name"));
    Variable* v = graph.VariableForNode(node.name);
    if (v == nullptr) {
      v = &graph.ImportVariable({.variable = nullptr,
                                 .variable_node = node.name,
                                 .initializer = "",
                                 .snapshot = "",
                                 .initial_value = "",
                                 .trainable = true});
    }
    if (auto key = restored.find(node.name); key != restored.end()) {
      by_key.emplace(key->second, v);
    } else {
      handles.emplace(shared != nullptr && !shared->empty() ? *shared : node.name, v);
    }
  }
  if (restored.empty() && handles.empty()) return nullptr;
  const BundleReader reader(prefix);
  const tfproto::TrackableObjectGraph objects = CheckpointObjects(reader, prefix);
  if (restored.empty()) {
    // No restore function to follow: the object graph's variable names
    // match the handles' shared names.
    for (const auto& object : objects.nodes()) {
      for (const auto& attribute : object.attributes()) {
        auto it = handles.find(attribute.full_name());
        if (it != handles.end() && reader.Contains(attribute.checkpoint_key())) {
          by_key.emplace(attribute.checkpoint_key(), it->second);
        }
      }
    }
  } else if (!handles.empty()) {
    // Handles the restore function does not assign, named as a variable of
    // the object graph: Keras 3's tf.saved_model.save gives each variable a
    // second VarHandleOp, the one its signatures capture, while the restore
    // function assigns the first. The captured one is what runs, so it is
    // the one restored (and saved) under the variable's key. Only a name
    // one variable has decides.
    std::map<std::string, int> uses;
    for (const auto& object : objects.nodes()) {
      for (const auto& attribute : object.attributes()) ++uses[attribute.full_name()];
    }
    for (const auto& object : objects.nodes()) {
      for (const auto& attribute : object.attributes()) {
        auto it = handles.find(attribute.full_name());
        if (it != handles.end() && uses[attribute.full_name()] == 1 &&
            reader.Contains(attribute.checkpoint_key())) {
          by_key[attribute.checkpoint_key()] = it->second;
        }
      }
    }
  }
  if (by_key.empty()) return nullptr;
  if (handle_by_path != nullptr) {
    std::map<const Variable*, std::string> node_of;
    for (int i = 0; i < graph.num_nodes(); ++i) {
      const Node& node = graph.node(i);
      if (node.op != "VarHandleOp") continue;
      if (const Variable* v = graph.VariableForNode(node.name)) node_of.emplace(v, node.name);
    }
    const std::vector<std::string> paths = ObjectPaths(objects);
    for (int id = 0; id < objects.nodes_size(); ++id) {
      for (const auto& attribute : objects.nodes(id).attributes()) {
        auto v = by_key.find(attribute.checkpoint_key());
        if (v == by_key.end() || attribute.name() != "VARIABLE_VALUE") continue;
        if (auto node = node_of.find(v->second); node != node_of.end()) {
          handle_by_path->emplace(paths[static_cast<size_t>(id)], node->second);
        }
      }
    }
  }
  return std::make_unique<Saver>(by_key);
}

}  // namespace eager::internal
