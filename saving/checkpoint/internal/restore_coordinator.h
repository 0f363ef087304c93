#pragma once

// RestoreCoordinator: one object-based restore in progress (TF's
// CheckpointRestoreCoordinator, FORMAT.md 4.5).
//
// It matches checkpoint nodes to live Trackables by walking local names from
// the root, assigns the values of objects that exist, and queues itself as a
// Trackable::DeferredRestoration on every live object that still has
// unmatched checkpoint children or slots, so objects created later (a Dense's
// kernel on its first call, Adam's slots on the first step) get their saved
// values when they are created. Once both an optimizer and a variable that
// has saved slots are matched, the optimizer is asked to create those slots
// at once (Trackable::CreateSlotsForRestore, TF's deferred slot
// restoration), so they hold their saved values before the first step.
//
// It is shared by the status object and the objects it is queued on, and
// drops itself from an object once nothing is pending there. When the last
// owner lets go of an unchecked restore that left values unused, it warns
// once on stderr, as TensorFlow does.

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/trackable.h"
#include "saving/checkpoint/object_graph.h"

namespace eager {
class BundleReader;
}  // namespace eager

namespace eager::internal {

class RestoreCoordinator final : public Trackable::DeferredRestoration,
                                 public std::enable_shared_from_this<RestoreCoordinator> {
 public:
  // Reads the object graph of the bundle `reader` (opened on `save_path`).
  RestoreCoordinator(std::string save_path, std::shared_ptr<const BundleReader> reader,
                     SavedObjectGraph graph);
  ~RestoreCoordinator() override;

  // Matches `root` to node 0 and everything reachable from it. Validates
  // every value against its live object before assigning any (so a dtype or
  // shape mismatch, InvalidArgumentError naming the key, assigns nothing).
  void Start(Trackable& root);

  // The status checks (TF's messages; FailedPreconditionError).
  void AssertConsumed(Trackable& root);
  void AssertExistingObjectsMatched(Trackable& root);
  void AssertNontrivialMatch(Trackable& root);
  void ExpectPartial() { expect_partial_ = true; }
  void MarkChecked() { checked_ = true; }

  const std::string& save_path() const { return save_path_; }
  // For tests: how many checkpoint nodes are matched to live objects.
  int matched_count() const;

  // Trackable::DeferredRestoration.
  std::optional<Tensor> InitialValue(const Trackable& owner, std::string_view name, DType dtype,
                                     const Shape& shape) override;
  std::optional<Tensor> InitialSlotValue(const Trackable& owner, const Variable& original,
                                         std::string_view slot_name, DType dtype,
                                         const Shape& shape) override;
  void ChildAdded(Trackable& owner, std::string_view name, Trackable& child) override;
  void SlotAdded(Trackable& owner, const Trackable::Slot& slot) override;

 private:
  struct Assignment {
    int node;
    Trackable* object;
    std::map<std::string, Tensor> tensors;
  };

  // Matches node <-> object and everything below; values are appended to
  // *batch when given (validated, assigned later), else assigned at once.
  // `object` is reached from the bound node `via_node` by its children's edge
  // `via_edge` (-1, -1 for the root), for messages.
  void Match(int node, Trackable& object, int via_node, int via_edge,
             std::vector<Assignment>* batch);
  // The live edges the restore followed to `node` ("(root).model.dense"),
  // built now; TF's pretty name for a node not bound through an edge (the
  // root, slot variables, nodes not bound yet). O(length of the path).
  std::string Describe(int node) const;
  // Describe(via_node) + "." + the edge's name.
  std::string DescribeEdge(int via_node, int via_edge) const;
  void MatchSlotsOf(int optimizer_node, std::vector<Assignment>* batch);
  // Asks matched optimizers to create the slots the checkpoint holds for
  // their matched variables (they then take the saved values on creation).
  void CreateMissingSlots();
  void Restore(int node, Trackable& object, std::vector<Assignment>* batch);
  Tensor ReadChecked(int node, const std::string& attribute, DType dtype, const Shape& shape,
                     const std::string& what) const;
  static void Apply(std::vector<Assignment>& batch);
  void Hook(Trackable& object);
  bool HasPending(int node) const;
  void UnhookSettled();
  int NodeOf(const Trackable& object) const;
  int ChildNode(int node, std::string_view local_name) const;
  // The index of `local_name` among the node's children, or -1.
  int ChildEdge(int node, std::string_view local_name) const;
  int SlotNode(int optimizer_node, int original_node, std::string_view slot_name) const;
  // The first kMaxListed names (a crafted graph can have thousands, each as
  // long as the graph is deep) and how many there are in all.
  struct NameList {
    std::vector<std::string> shown;
    size_t total = 0;
    template <typename MakeName>
    void Add(MakeName&& make) {
      if (shown.size() < kMaxListed) shown.push_back(make());
      ++total;
    }
    std::string Joined() const;
  };
  static constexpr size_t kMaxListed = 20;
  NameList Unresolved() const;
  NameList UnusedAttributes() const;
  NameList UnboundLiveObjects(Trackable& root) const;

  std::string save_path_;
  std::shared_ptr<const BundleReader> reader_;
  SavedObjectGraph graph_;
  SavedObjectNames names_;             // of graph_; built when a message needs one
  std::vector<Trackable*> object_of_;  // per node; nullptr while unmatched
  // Per node, how it was bound (Describe): the bound node and the index of
  // the edge among its children that led here; -1 when not bound by an edge.
  // Two ints, not the path text, so memory stays linear in a deep graph.
  std::vector<int> via_node_;
  std::vector<int> via_edge_;
  std::vector<bool> restored_;                 // per node: values assigned
  std::vector<std::set<std::string>> unused_;  // per node: attributes the object did not take
  std::unordered_map<const Trackable*, int> node_of_;
  std::unordered_set<Trackable*> hooked_;
  bool expect_partial_ = false;
  bool checked_ = false;
};

}  // namespace eager::internal
