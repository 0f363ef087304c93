#include "saving/checkpoint/internal/restore_coordinator.h"

#include <cstdio>
#include <deque>

#include "runtime/errors.h"
#include "runtime/variable.h"
#include "saving/bundle/bundle_reader.h"

namespace eager::internal {
namespace {

std::string JoinList(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// A live object's saveable values' dtypes and shapes by attribute; nullopt
// when it cannot tell (e.g. an uninitialized non-variable).
std::optional<std::map<std::string, Tensor>> CurrentTensors(Trackable& object) {
  try {
    return object.SerializeToTensors();
  } catch (const Error&) {
    return std::nullopt;
  }
}

bool HasSaveableValues(Trackable& object) {
  if (dynamic_cast<Variable*>(&object) != nullptr) return true;
  const auto current = CurrentTensors(object);
  return !current || !current->empty();
}

}  // namespace

RestoreCoordinator::RestoreCoordinator(std::string save_path,
                                       std::shared_ptr<const BundleReader> reader,
                                       SavedObjectGraph graph)
    : save_path_(std::move(save_path)),
      reader_(std::move(reader)),
      graph_(std::move(graph)),
      names_(graph_) {
  const size_t n = graph_.nodes.size();
  object_of_.assign(n, nullptr);
  via_node_.assign(n, -1);
  via_edge_.assign(n, -1);
  restored_.assign(n, false);
  unused_.resize(n);
}

std::string RestoreCoordinator::NameList::Joined() const {
  std::string out = JoinList(shown);
  if (total > shown.size()) out += StrCat(", ... (", total - shown.size(), " more)");
  return out;
}

RestoreCoordinator::~RestoreCoordinator() {
  if (checked_ || expect_partial_) return;
  const NameList unresolved = Unresolved();
  const NameList unused = UnusedAttributes();
  if (unresolved.total == 0 && unused.total == 0) return;
  for (const std::string& name : unresolved.shown) {
    std::fprintf(stderr,
                 "WARNING: Value in checkpoint could not be found in the restored object: %s\n",
                 name.c_str());
  }
  if (unresolved.total > unresolved.shown.size()) {
    std::fprintf(stderr, "WARNING: ... and %zu more values not found\n",
                 unresolved.total - unresolved.shown.size());
  }
  for (const std::string& name : unused.shown) {
    std::fprintf(stderr, "WARNING: Unused attribute in object %s\n", name.c_str());
  }
  if (unused.total > unused.shown.size()) {
    std::fprintf(stderr, "WARNING: ... and %zu more unused attributes\n",
                 unused.total - unused.shown.size());
  }
  std::fprintf(stderr,
               "WARNING: A checkpoint was restored (e.g. Checkpoint::Restore) but not all "
               "checkpointed values were used (%s). Call ExpectPartial() on the load status to "
               "silence these warnings, or use the status assertions to make sure everything "
               "was restored.\n",
               save_path_.c_str());
}

void RestoreCoordinator::Start(Trackable& root) {
  std::vector<Assignment> batch;
  try {
    Match(0, root, -1, -1, &batch);
  } catch (...) {
    for (Trackable* object : hooked_) object->RemoveDeferredRestoration(this);
    hooked_.clear();
    checked_ = true;  // the caller got the error; no warning on top
    throw;
  }
  Apply(batch);
  CreateMissingSlots();
  // Everything hooked now is alive: drop the hooks that have nothing to wait for.
  for (auto it = hooked_.begin(); it != hooked_.end();) {
    if (!HasPending(NodeOf(**it))) {
      (*it)->RemoveDeferredRestoration(this);
      it = hooked_.erase(it);
    } else {
      ++it;
    }
  }
}

std::string RestoreCoordinator::Describe(int node) const {
  // Walk up the edges the restore followed (each bound before what it led
  // to, so the walk ends), then prefix the first node's own name.
  std::vector<const std::string*> edges;  // leaf first
  int at = node;
  while (via_node_[static_cast<size_t>(at)] >= 0) {
    const int up = via_node_[static_cast<size_t>(at)];
    edges.push_back(&graph_.nodes[static_cast<size_t>(up)]
                         .children[static_cast<size_t>(via_edge_[static_cast<size_t>(at)])]
                         .local_name);
    at = up;
  }
  std::string out = names_.Name(at);
  for (auto it = edges.rbegin(); it != edges.rend(); ++it) out.append(".").append(**it);
  return out;
}

std::string RestoreCoordinator::DescribeEdge(int via_node, int via_edge) const {
  if (via_node < 0) return names_.Name(0);
  return StrCat(Describe(via_node), ".",
                graph_.nodes[static_cast<size_t>(via_node)]
                    .children[static_cast<size_t>(via_edge)]
                    .local_name);
}

int RestoreCoordinator::NodeOf(const Trackable& object) const {
  auto it = node_of_.find(&object);
  return it == node_of_.end() ? -1 : it->second;
}

int RestoreCoordinator::ChildNode(int node, std::string_view local_name) const {
  const int edge = ChildEdge(node, local_name);
  if (edge < 0) return -1;
  return graph_.nodes[static_cast<size_t>(node)].children[static_cast<size_t>(edge)].node_id;
}

int RestoreCoordinator::ChildEdge(int node, std::string_view local_name) const {
  if (node < 0) return -1;
  const auto& children = graph_.nodes[static_cast<size_t>(node)].children;
  for (size_t k = 0; k < children.size(); ++k) {
    if (children[k].local_name == local_name) return static_cast<int>(k);
  }
  return -1;
}

int RestoreCoordinator::SlotNode(int optimizer_node, int original_node,
                                 std::string_view slot_name) const {
  if (optimizer_node < 0 || original_node < 0) return -1;
  for (const auto& slot : graph_.nodes[static_cast<size_t>(optimizer_node)].slot_variables) {
    if (slot.original_variable_node_id == original_node && slot.slot_name == slot_name) {
      return slot.slot_variable_node_id;
    }
  }
  return -1;
}

bool RestoreCoordinator::HasPending(int node) const {
  if (node < 0) return false;
  const auto& saved = graph_.nodes[static_cast<size_t>(node)];
  for (const auto& child : saved.children) {
    if (object_of_[static_cast<size_t>(child.node_id)] == nullptr) return true;
  }
  for (const auto& slot : saved.slot_variables) {
    if (object_of_[static_cast<size_t>(slot.slot_variable_node_id)] == nullptr) return true;
  }
  return false;
}

void RestoreCoordinator::Hook(Trackable& object) {
  if (hooked_.insert(&object).second) object.AddDeferredRestoration(shared_from_this());
}

Tensor RestoreCoordinator::ReadChecked(int node, const std::string& attribute, DType dtype,
                                       const Shape& shape, const std::string& what) const {
  const auto& saved = graph_.nodes[static_cast<size_t>(node)];
  for (const auto& a : saved.attributes) {
    if (a.name != attribute) continue;
    if (!reader_->Contains(a.checkpoint_key)) {
      throw NotFoundError(StrCat("Checkpoint ", save_path_, ": the object graph lists key '",
                                 a.checkpoint_key, "' for ", Describe(node),
                                 ", but the bundle has no such tensor"));
    }
    const BundleReader::Entry& entry = reader_->GetEntry(a.checkpoint_key);
    const Shape saved_shape = entry.shape();
    if (!entry.dtype || *entry.dtype != dtype || saved_shape != shape) {
      const std::string saved_dtype =
          entry.dtype ? StrCat(*entry.dtype) : StrCat("TF DataType ", entry.tf_dtype);
      throw InvalidArgumentError(StrCat("Checkpoint ", save_path_, ": key '", a.checkpoint_key,
                                        "' (", Describe(node), ") holds ", saved_dtype,
                                        " of shape ", saved_shape, ", but ", what, " is ", dtype,
                                        " of shape ", shape, "; nothing was restored"));
    }
    return reader_->Read(a.checkpoint_key);
  }
  EAGER_INTERNAL_CHECK(false);
  return Tensor();
}

void RestoreCoordinator::Restore(int node, Trackable& object, std::vector<Assignment>* batch) {
  const auto n = static_cast<size_t>(node);
  if (restored_[n]) return;
  const auto& attributes = graph_.nodes[n].attributes;
  restored_[n] = true;
  if (attributes.empty()) return;
  Assignment assignment{node, &object, {}};
  if (auto* variable = dynamic_cast<Variable*>(&object)) {
    for (const auto& a : attributes) {
      if (a.name != Variable::kValueAttribute) {
        unused_[n].insert(a.name);
        continue;
      }
      assignment.tensors[a.name] = ReadChecked(node, a.name, variable->dtype(), variable->shape(),
                                               StrCat("variable '", variable->shared_name(), "'"));
    }
  } else {
    const auto current = CurrentTensors(object);
    for (const auto& a : attributes) {
      if (!current || !current->contains(a.name)) {
        unused_[n].insert(a.name);
        continue;
      }
      const Tensor& now = current->at(a.name);
      assignment.tensors[a.name] =
          ReadChecked(node, a.name, now.dtype(), now.shape(), StrCat("attribute '", a.name, "'"));
    }
  }
  if (assignment.tensors.empty()) return;
  if (batch != nullptr) {
    batch->push_back(std::move(assignment));
  } else {
    object.RestoreFromTensors(assignment.tensors);
  }
}

void RestoreCoordinator::Apply(std::vector<Assignment>& batch) {
  for (Assignment& a : batch) a.object->RestoreFromTensors(a.tensors);
}

void RestoreCoordinator::Match(int node, Trackable& object, int via_node, int via_edge,
                               std::vector<Assignment>* batch) {
  struct Pending {
    int node;
    Trackable* live;
    int via_node;  // the bound node and its children's edge that led here
    int via_edge;
  };
  std::deque<Pending> queue{{node, &object, via_node, via_edge}};
  std::vector<std::pair<int, Trackable*>> matched;
  while (!queue.empty()) {
    const Pending next = queue.front();
    queue.pop_front();
    const int id = next.node;
    Trackable* live = next.live;
    const auto n = static_cast<size_t>(id);
    if (object_of_[n] != nullptr) {
      // TF's bind_object: the first match binds; another path to the same
      // saved object is checked, and a different object there is reported,
      // not an error.
      if (object_of_[n] != live) {
        std::fprintf(stderr,
                     "WARNING: Inconsistent references when loading checkpoint %s into this "
                     "object graph: the saved object %s is also reached through %s, which leads "
                     "to a different object here; it keeps the values of the first.\n",
                     save_path_.c_str(), Describe(id).c_str(),
                     DescribeEdge(next.via_node, next.via_edge).c_str());
      }
      continue;
    }
    // One live object may take several saved objects (TF's testObjectsCombined,
    // e.g. a layer reached by "layer-<i>" and a saved weightless layer's edge).
    object_of_[n] = live;
    node_of_.try_emplace(live, id);
    via_node_[n] = next.via_node;
    via_edge_[n] = next.via_edge;
    matched.emplace_back(id, live);
    Restore(id, *live, batch);
    const auto& saved = graph_.nodes[n];
    if (!saved.children.empty()) {
      std::vector<std::string_view> edges;
      edges.reserve(saved.children.size());
      for (const auto& edge : saved.children) edges.emplace_back(edge.local_name);
      if (std::string why = live->SavedStructureMismatch(edges); !why.empty()) {
        throw InvalidArgumentError(StrCat("Checkpoint ", save_path_, ": ", Describe(id), ": ", why,
                                          batch != nullptr ? "; nothing was restored" : ""));
      }
      const std::vector<Trackable::Child> children = live->Children();
      for (size_t k = 0; k < saved.children.size(); ++k) {
        const auto& edge = saved.children[k];
        for (const auto& child : children) {
          if (child.name == edge.local_name) {
            queue.push_back({edge.node_id, child.object, id, static_cast<int>(k)});
            break;
          }
        }
      }
    }
  }
  // Slots: for optimizers just matched, and for optimizers whose original
  // variable was just matched.
  for (const auto& [id, live] : matched) {
    if (!graph_.nodes[static_cast<size_t>(id)].slot_variables.empty()) MatchSlotsOf(id, batch);
  }
  for (size_t opt = 0; opt < graph_.nodes.size(); ++opt) {
    if (object_of_[opt] == nullptr) continue;
    for (const auto& slot : graph_.nodes[opt].slot_variables) {
      const auto original = static_cast<size_t>(slot.original_variable_node_id);
      if (object_of_[original] != nullptr &&
          object_of_[static_cast<size_t>(slot.slot_variable_node_id)] == nullptr) {
        MatchSlotsOf(static_cast<int>(opt), batch);
        break;
      }
    }
  }
  for (const auto& [id, live] : matched) {
    if (HasPending(id)) Hook(*live);
  }
  // A batch is applied first; Start creates the slots after it.
  if (batch == nullptr) CreateMissingSlots();
}

void RestoreCoordinator::CreateMissingSlots() {
  for (size_t opt = 0; opt < graph_.nodes.size(); ++opt) {
    Trackable* optimizer = object_of_[opt];
    if (optimizer == nullptr) continue;
    for (const auto& ref : graph_.nodes[opt].slot_variables) {
      // Re-read each time: creating one slot matches its siblings too.
      if (object_of_[static_cast<size_t>(ref.slot_variable_node_id)] != nullptr) continue;
      const auto* original = dynamic_cast<const Variable*>(
          object_of_[static_cast<size_t>(ref.original_variable_node_id)]);
      if (original == nullptr) continue;
      // The slots' creation asks InitialSlotValue and reports SlotAdded: the
      // restoration must be queued on the optimizer for that.
      Hook(*optimizer);
      optimizer->CreateSlotsForRestore(*original, ref.slot_name);
    }
  }
}

void RestoreCoordinator::MatchSlotsOf(int optimizer_node, std::vector<Assignment>* batch) {
  Trackable* optimizer = object_of_[static_cast<size_t>(optimizer_node)];
  if (optimizer == nullptr) return;
  const std::vector<Trackable::Slot> slots = optimizer->Slots();
  for (const auto& ref : graph_.nodes[static_cast<size_t>(optimizer_node)].slot_variables) {
    const auto slot_node = static_cast<size_t>(ref.slot_variable_node_id);
    const Trackable* original = object_of_[static_cast<size_t>(ref.original_variable_node_id)];
    if (object_of_[slot_node] != nullptr || original == nullptr) continue;
    for (const auto& slot : slots) {
      if (slot.original == original && slot.name == ref.slot_name &&
          !node_of_.contains(slot.slot)) {
        object_of_[slot_node] = slot.slot;
        node_of_[slot.slot] = ref.slot_variable_node_id;
        Restore(ref.slot_variable_node_id, *slot.slot, batch);
        break;
      }
    }
  }
}

std::optional<Tensor> RestoreCoordinator::InitialValue(const Trackable& owner,
                                                       std::string_view name, DType dtype,
                                                       const Shape& shape) {
  const int child = ChildNode(NodeOf(owner), name);
  if (child < 0) return std::nullopt;
  const auto c = static_cast<size_t>(child);
  const auto& saved = graph_.nodes[c];
  // Restore-on-create only for a simple variable: one VARIABLE_VALUE, no children.
  if (object_of_[c] != nullptr || restored_[c] || !saved.children.empty() ||
      saved.attributes.size() != 1 || saved.attributes[0].name != Variable::kValueAttribute) {
    return std::nullopt;
  }
  Tensor value = ReadChecked(child, Variable::kValueAttribute, dtype, shape,
                             StrCat("the variable '", name, "' being created"));
  restored_[c] = true;
  return value;
}

std::optional<Tensor> RestoreCoordinator::InitialSlotValue(const Trackable& owner,
                                                           const Variable& original,
                                                           std::string_view slot_name, DType dtype,
                                                           const Shape& shape) {
  const int slot = SlotNode(NodeOf(owner), NodeOf(original), slot_name);
  if (slot < 0) return std::nullopt;
  const auto s = static_cast<size_t>(slot);
  if (object_of_[s] != nullptr || restored_[s]) return std::nullopt;
  Tensor value = ReadChecked(slot, Variable::kValueAttribute, dtype, shape,
                             StrCat("the slot '", slot_name, "' being created for variable '",
                                    original.shared_name(), "'"));
  restored_[s] = true;
  return value;
}

void RestoreCoordinator::ChildAdded(Trackable& owner, std::string_view name, Trackable& child) {
  const int owner_node = NodeOf(owner);
  const int edge = ChildEdge(owner_node, name);
  const int node = edge < 0 ? -1
                            : graph_.nodes[static_cast<size_t>(owner_node)]
                                  .children[static_cast<size_t>(edge)]
                                  .node_id;
  if (node >= 0 && object_of_[static_cast<size_t>(node)] == nullptr) {
    Match(node, child, owner_node, edge, nullptr);
  }
  if (!HasPending(owner_node) && hooked_.erase(&owner) > 0) owner.RemoveDeferredRestoration(this);
}

void RestoreCoordinator::SlotAdded(Trackable& owner, const Trackable::Slot& slot) {
  const int owner_node = NodeOf(owner);
  const int node = SlotNode(owner_node, NodeOf(*slot.original), slot.name);
  if (node >= 0 && object_of_[static_cast<size_t>(node)] == nullptr &&
      !node_of_.contains(slot.slot)) {
    object_of_[static_cast<size_t>(node)] = slot.slot;
    node_of_[slot.slot] = node;
    Restore(node, *slot.slot, nullptr);
  }
  if (!HasPending(owner_node) && hooked_.erase(&owner) > 0) owner.RemoveDeferredRestoration(this);
}

int RestoreCoordinator::matched_count() const {
  int count = 0;
  for (const Trackable* object : object_of_) count += object != nullptr ? 1 : 0;
  return count;
}

RestoreCoordinator::NameList RestoreCoordinator::Unresolved() const {
  NameList out;
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    if (object_of_[i] == nullptr && !graph_.nodes[i].attributes.empty()) {
      out.Add([&] { return names_.Name(static_cast<int>(i)); });
    }
  }
  return out;
}

RestoreCoordinator::NameList RestoreCoordinator::UnusedAttributes() const {
  NameList out;
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    for (const std::string& attribute : unused_[i]) {
      out.Add([&] { return StrCat(names_.Name(static_cast<int>(i)), ": ", attribute); });
    }
  }
  return out;
}

RestoreCoordinator::NameList RestoreCoordinator::UnboundLiveObjects(Trackable& root) const {
  NameList out;
  const LiveObjectGraph live = WalkObjectGraph(root);
  for (const auto& node : live.nodes) {
    if (!node_of_.contains(node.object) && HasSaveableValues(*node.object)) {
      out.Add([&] { return node.pretty_name; });
    }
  }
  return out;
}

void RestoreCoordinator::AssertExistingObjectsMatched(Trackable& root) {
  checked_ = true;
  NameList unassigned;
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    if (object_of_[i] != nullptr && !restored_[i]) {
      unassigned.Add([&] { return names_.Name(static_cast<int>(i)); });
    }
  }
  if (unassigned.total > 0) {
    throw FailedPreconditionError(StrCat("Checkpoint ", save_path_, ": Object ",
                                         unassigned.Joined(),
                                         " not assigned a value from checkpoint."));
  }
  const NameList unbound = UnboundLiveObjects(root);
  if (unbound.total > 0) {
    throw FailedPreconditionError(
        StrCat("Checkpoint ", save_path_,
               ": Some objects were not bound to checkpointed values, likely due to changes in the "
               "program: [",
               unbound.Joined(), "]"));
  }
}

void RestoreCoordinator::AssertConsumed(Trackable& root) {
  AssertExistingObjectsMatched(root);
  std::vector<std::string> problems;
  size_t unresolved = 0;
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    if (object_of_[i] != nullptr || graph_.nodes[i].attributes.empty()) continue;
    if (++unresolved > kMaxListed) continue;
    std::vector<std::string> keys;
    for (const auto& a : graph_.nodes[i].attributes) keys.push_back(a.checkpoint_key);
    problems.push_back(StrCat("Unresolved object in checkpoint ", names_.Name(static_cast<int>(i)),
                              ": attributes {", JoinList(keys), "}"));
  }
  if (unresolved > kMaxListed) {
    problems.push_back(StrCat("... and ", unresolved - kMaxListed, " more unresolved objects"));
  }
  NameList pending_slots;
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    if (object_of_[i] == nullptr) continue;
    for (const auto& slot : graph_.nodes[i].slot_variables) {
      if (object_of_[static_cast<size_t>(slot.slot_variable_node_id)] == nullptr) {
        pending_slots.Add([&] { return names_.Name(slot.slot_variable_node_id); });
      }
    }
  }
  if (pending_slots.total > 0) {
    problems.push_back(StrCat("Unresolved slot restorations: [", pending_slots.Joined(), "]"));
  }
  const NameList unused = UnusedAttributes();
  if (unused.total > 0) {
    problems.push_back(
        StrCat("Unused attributes in these objects (the objects don't take "
               "these values): [",
               unused.Joined(), "]"));
  }
  if (!problems.empty()) {
    std::string message = StrCat("Checkpoint ", save_path_, " was not fully consumed:");
    for (const std::string& p : problems) message += "\n  " + p;
    throw FailedPreconditionError(message);
  }
}

void RestoreCoordinator::AssertNontrivialMatch(Trackable& root) {
  checked_ = true;
  if (matched_count() > 1) return;
  const NameList unbound = UnboundLiveObjects(root);
  if (unbound.total > 0) {
    throw FailedPreconditionError(StrCat(
        "Checkpoint ", save_path_,
        ": Nothing except the root object matched a checkpointed value. Typically this means "
        "that the checkpoint does not match the program. The following objects have no "
        "matching checkpointed value: [",
        unbound.Joined(), "]"));
  }
  throw FailedPreconditionError(StrCat("Checkpoint ", save_path_,
                                       ": Nothing to load. No dependencies have been added to "
                                       "the root object yet."));
}

}  // namespace eager::internal
