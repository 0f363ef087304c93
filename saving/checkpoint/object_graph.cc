#include "saving/checkpoint/object_graph.h"

#include <deque>

#include "runtime/errors.h"
#include "runtime/variable.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/checkpoint/checkpoint_key.h"
#include "saving/proto/trackable_object_graph.pb.h"

namespace eager::internal {

SavedObjectNames::SavedObjectNames(const SavedObjectGraph& graph)
    : graph_(graph), parent_(graph.nodes.size(), -1), edge_(graph.nodes.size(), -1) {
  const size_t n = graph.nodes.size();
  if (n == 0) return;
  std::vector<bool> seen(n, false);
  seen[0] = true;
  std::deque<int> queue{0};
  while (!queue.empty()) {
    const int id = queue.front();
    queue.pop_front();
    const auto& children = graph.nodes[static_cast<size_t>(id)].children;
    for (size_t k = 0; k < children.size(); ++k) {
      const auto c = static_cast<size_t>(children[k].node_id);
      if (seen[c]) continue;
      seen[c] = true;
      parent_[c] = id;
      edge_[c] = static_cast<int>(k);
      queue.push_back(children[k].node_id);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const auto& slots = graph.nodes[i].slot_variables;
    for (size_t k = 0; k < slots.size(); ++k) {
      const int slot = slots[k].slot_variable_node_id;
      if (!seen[static_cast<size_t>(slot)]) {
        slot_ref_.try_emplace(slot, static_cast<int>(i), static_cast<int>(k));
      }
    }
  }
}

std::string SavedObjectNames::PathName(int node) const {
  if (node != 0 && parent_[static_cast<size_t>(node)] < 0) return "";
  std::vector<const std::string*> names;  // leaf first
  size_t length = 6;                      // "(root)"
  for (int at = node; at != 0; at = parent_[static_cast<size_t>(at)]) {
    const int up = parent_[static_cast<size_t>(at)];
    names.push_back(&graph_.nodes[static_cast<size_t>(up)]
                         .children[static_cast<size_t>(edge_[static_cast<size_t>(at)])]
                         .local_name);
    length += 1 + names.back()->size();
  }
  std::string out;
  out.reserve(length);
  out = "(root)";
  for (auto it = names.rbegin(); it != names.rend(); ++it) out.append(".").append(**it);
  return out;
}

std::string SavedObjectNames::Name(int node) const {
  std::string path = PathName(node);
  if (!path.empty()) return path;
  const auto slot = slot_ref_.find(node);
  if (slot != slot_ref_.end()) {
    const auto& [optimizer, k] = slot->second;
    const auto& ref =
        graph_.nodes[static_cast<size_t>(optimizer)].slot_variables[static_cast<size_t>(k)];
    auto named = [&](int id) {
      std::string name = PathName(id);
      return name.empty() ? StrCat("(unreachable node ", id, ")") : name;
    };
    return StrCat(named(optimizer), "'s state '", ref.slot_name, "' for ",
                  named(ref.original_variable_node_id));
  }
  return StrCat("(unreachable node ", node, ")");
}

std::string SerializeObjectGraph(const SavedObjectGraph& graph) {
  tfproto::TrackableObjectGraph proto;
  for (const SavedObjectGraph::Node& node : graph.nodes) {
    auto* out = proto.add_nodes();
    for (const auto& child : node.children) {
      auto* c = out->add_children();
      c->set_node_id(child.node_id);
      c->set_local_name(child.local_name);
    }
    for (const auto& attribute : node.attributes) {
      auto* a = out->add_attributes();
      a->set_name(attribute.name);
      a->set_full_name(attribute.full_name);
      a->set_checkpoint_key(attribute.checkpoint_key);
    }
    for (const auto& slot : node.slot_variables) {
      auto* s = out->add_slot_variables();
      s->set_original_variable_node_id(slot.original_variable_node_id);
      s->set_slot_name(slot.slot_name);
      s->set_slot_variable_node_id(slot.slot_variable_node_id);
    }
    if (node.has_checkpoint_values) {
      out->mutable_has_checkpoint_values()->set_value(*node.has_checkpoint_values);
    }
  }
  return proto.SerializeAsString();
}

SavedObjectGraph ParseObjectGraph(const std::string& bytes, const std::string& where) {
  tfproto::TrackableObjectGraph proto;
  if (!proto.ParseFromString(bytes)) {
    throw DataLossError(StrCat("the object graph ", kObjectGraphKey, " of ", where,
                               " is not a valid TrackableObjectGraph proto"));
  }
  if (proto.nodes_size() == 0) {
    throw DataLossError(StrCat("the object graph ", kObjectGraphKey, " of ", where,
                               " has no nodes; expected at least the root"));
  }
  const int n = proto.nodes_size();
  auto check_id = [&](int id, int node, const char* what) {
    if (id < 0 || id >= n) {
      throw DataLossError(StrCat("the object graph of ", where, ": node ", node, " has ", what,
                                 " node id ", id, ", expected 0..", n - 1));
    }
  };
  SavedObjectGraph graph;
  graph.nodes.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const auto& in = proto.nodes(i);
    SavedObjectGraph::Node& node = graph.nodes[static_cast<size_t>(i)];
    for (const auto& c : in.children()) {
      check_id(c.node_id(), i, "a child with");
      node.children.push_back({c.node_id(), c.local_name()});
    }
    for (const auto& a : in.attributes()) {
      node.attributes.push_back({a.name(), a.full_name(), a.checkpoint_key()});
    }
    for (const auto& s : in.slot_variables()) {
      check_id(s.original_variable_node_id(), i, "a slot for original variable");
      check_id(s.slot_variable_node_id(), i, "a slot variable with");
      node.slot_variables.push_back(
          {s.original_variable_node_id(), s.slot_name(), s.slot_variable_node_id()});
    }
    if (in.has_has_checkpoint_values()) {
      node.has_checkpoint_values = in.has_checkpoint_values().value();
    }
  }
  return graph;
}

std::optional<SavedObjectGraph> ReadObjectGraph(const BundleReader& reader) {
  if (!reader.Contains(kObjectGraphKey)) return std::nullopt;
  const Tensor t = reader.Read(kObjectGraphKey);
  if (t.dtype() != DType::kString || t.num_elements() != 1) {
    throw DataLossError(StrCat("Checkpoint ", reader.prefix(), ": ", kObjectGraphKey, " is ",
                               t.dtype(), " of shape ", t.shape(), ", expected a scalar string"));
  }
  return ParseObjectGraph(t.data<std::string>()[0], reader.prefix());
}

LiveObjectGraph WalkObjectGraph(Trackable& root) {
  LiveObjectGraph graph;
  auto add = [&](Trackable* object, std::vector<std::string> path) {
    const int id = static_cast<int>(graph.nodes.size());
    LiveObjectGraph::Node node;
    node.object = object;
    node.key_path = ObjectPath(path);
    node.pretty_name = PrettyObjectName(path);
    node.path = std::move(path);
    graph.nodes.push_back(std::move(node));
    graph.ids.emplace(object, id);
    return id;
  };
  add(&root, {});
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const Trackable::Child& child : graph.nodes[i].object->Children()) {
      EAGER_INTERNAL_CHECK(child.object != nullptr);
      auto it = graph.ids.find(child.object);
      int id;
      if (it != graph.ids.end()) {
        id = it->second;
      } else {
        std::vector<std::string> path = graph.nodes[i].path;
        path.push_back(child.name);
        id = add(child.object, std::move(path));
      }
      graph.nodes[i].children.push_back({id, child.name});
    }
  }
  // Slot variables: per optimizer in node order, per slot name in the
  // optimizer's order, per original variable in node order.
  const size_t traversed = graph.nodes.size();
  for (size_t i = 0; i < traversed; ++i) {
    std::vector<Trackable::Slot> slots = graph.nodes[i].object->Slots();
    if (slots.empty()) continue;
    std::vector<std::string> slot_names;
    for (const auto& s : slots) {
      if (std::find(slot_names.begin(), slot_names.end(), s.name) == slot_names.end()) {
        slot_names.push_back(s.name);
      }
    }
    for (const std::string& slot_name : slot_names) {
      std::vector<std::pair<int, const Trackable::Slot*>> ordered;
      for (const auto& s : slots) {
        if (s.name != slot_name) continue;
        auto it = graph.ids.find(s.original);
        if (it == graph.ids.end() || it->second >= static_cast<int>(traversed)) continue;
        ordered.emplace_back(it->second, &s);
      }
      std::stable_sort(ordered.begin(), ordered.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [original_id, slot] : ordered) {
        if (graph.ids.contains(slot->slot)) continue;  // a slot tracked elsewhere: TF skips too
        const LiveObjectGraph::Node& original = graph.nodes[static_cast<size_t>(original_id)];
        const int optimizer_id = static_cast<int>(i);
        const std::string key_path =
            SlotVariablePath(original.key_path, graph.nodes[i].key_path, slot_name);
        const std::string pretty = StrCat(graph.nodes[i].pretty_name, "'s state '", slot_name,
                                          "' for ", original.pretty_name);
        const int id = add(slot->slot, {});
        LiveObjectGraph::Node& node = graph.nodes[static_cast<size_t>(id)];
        node.key_path = key_path;
        node.pretty_name = pretty;
        node.slot_original = original_id;
        node.slot_optimizer = optimizer_id;
        node.slot_name = slot_name;
        graph.nodes[i].slot_variables.push_back({original_id, slot_name, id});
      }
    }
  }
  return graph;
}

SavedObjectGraph SerializeLiveGraph(const LiveObjectGraph& live,
                                    std::vector<std::pair<std::string, Tensor>>* tensors) {
  SavedObjectGraph saved;
  saved.nodes.resize(live.nodes.size());
  std::vector<bool> has_values(live.nodes.size(), false);
  for (size_t i = 0; i < live.nodes.size(); ++i) {
    const LiveObjectGraph::Node& node = live.nodes[i];
    SavedObjectGraph::Node& out = saved.nodes[i];
    out.children = node.children;
    out.slot_variables = node.slot_variables;
    const auto* variable = dynamic_cast<const Variable*>(node.object);
    for (auto& [attribute, tensor] : node.object->SerializeToTensors()) {
      const std::string key = AttributeKey(node.key_path, attribute);
      out.attributes.push_back(
          {attribute, variable != nullptr ? std::string(variable->shared_name()) : "", key});
      tensors->emplace_back(key, std::move(tensor));
    }
    has_values[i] = !out.attributes.empty() || !out.slot_variables.empty();
  }
  // A node has checkpoint values when it or any descendant does (cycles allowed).
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < saved.nodes.size(); ++i) {
      if (has_values[i]) continue;
      for (const auto& c : saved.nodes[i].children) {
        if (has_values[static_cast<size_t>(c.node_id)]) {
          has_values[i] = changed = true;
          break;
        }
      }
    }
  }
  for (size_t i = 0; i < saved.nodes.size(); ++i)
    saved.nodes[i].has_checkpoint_values = has_values[i];
  return saved;
}

}  // namespace eager::internal
