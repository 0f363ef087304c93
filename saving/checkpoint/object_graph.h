#pragma once

// The object graph of an object-based checkpoint, two ways:
//  - SavedObjectGraph: what a file holds (TrackableObjectGraph, FORMAT.md
//    4.1) as plain structs, with its (de)serialisation;
//  - LiveObjectGraph: the Trackables reachable from a root, numbered exactly
//    as TensorFlow numbers them (FORMAT.md 4.2): breadth-first, children in
//    each object's order, an object seen before keeps its first id and path,
//    then the optimizers' slot variables.
// For checkpoint/ and eager-ckpt (tools/); not installed (cmake/package.cmake): not user API.

#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/tensor.h"
#include "runtime/trackable.h"

namespace eager {
class BundleReader;
}  // namespace eager

namespace eager::internal {

struct SavedObjectGraph {
  struct Child {
    int node_id = 0;
    std::string local_name;
  };
  struct Attribute {
    std::string name;       // "VARIABLE_VALUE"
    std::string full_name;  // "dense/kernel"
    std::string checkpoint_key;
  };
  struct SlotRef {
    int original_variable_node_id = 0;
    std::string slot_name;
    int slot_variable_node_id = 0;
  };
  struct Node {
    std::vector<Child> children;
    std::vector<Attribute> attributes;
    std::vector<SlotRef> slot_variables;
    std::optional<bool> has_checkpoint_values;
  };
  std::vector<Node> nodes;
};

// TF's display names of a saved graph's nodes: "(root).model.dense.kernel"
// for the first breadth-first path to a node; "(root).optimizer's state 'm'
// for (root).model.dense.kernel" for a slot variable no path reaches (the
// first slot reference to it, in node order); "(unreachable node 7)"
// otherwise. Only each node's first-path parent is kept and a name is built
// when asked for, so memory stays linear in the graph even when the names
// together are quadratic (a chain 20,000 deep). Keeps a reference to
// `graph`, which must outlive it.
class SavedObjectNames {
 public:
  explicit SavedObjectNames(const SavedObjectGraph& graph);
  // O(depth of the node) time.
  std::string Name(int node) const;
  // The node's parent on its first path and the index of that edge in the
  // parent's children; -1 for the root, slot variables and unreachable nodes.
  int parent(int node) const { return parent_[static_cast<size_t>(node)]; }
  int parent_edge(int node) const { return edge_[static_cast<size_t>(node)]; }

 private:
  std::string PathName(int node) const;  // "" when no path reaches it
  const SavedObjectGraph& graph_;
  std::vector<int> parent_;
  std::vector<int> edge_;
  // Slot variables no path reaches: the optimizer node and its SlotRef index.
  std::unordered_map<int, std::pair<int, int>> slot_ref_;
};

std::string SerializeObjectGraph(const SavedObjectGraph& graph);
// Throws DataLossError naming `where` when `bytes` is not a valid
// TrackableObjectGraph, has no nodes, or refers to a node id out of range.
SavedObjectGraph ParseObjectGraph(const std::string& bytes, const std::string& where);
// The object graph of the checkpoint `reader` reads (its
// _CHECKPOINTABLE_OBJECT_GRAPH entry, parsed); nullopt when it has none, a
// name-based checkpoint: each caller says what that means for it. Throws
// DataLossError naming the checkpoint when the entry is not a scalar string
// or not a valid graph (as ParseObjectGraph).
std::optional<SavedObjectGraph> ReadObjectGraph(const BundleReader& reader);

struct LiveObjectGraph {
  struct Node {
    Trackable* object = nullptr;
    std::vector<std::string> path;                  // local names along the first path found
    std::string key_path;                           // escaped, "/"-joined: the key prefix
    std::string pretty_name;                        // "(root).model.dense.kernel"
    std::vector<SavedObjectGraph::Child> children;  // every edge
    // Slot variable nodes only: the original variable's and the optimizer's node.
    int slot_original = -1;
    int slot_optimizer = -1;
    std::string slot_name;
    // Optimizer nodes only.
    std::vector<SavedObjectGraph::SlotRef> slot_variables;
  };
  std::vector<Node> nodes;
  std::unordered_map<const Trackable*, int> ids;
};

// Walks from `root`. Calls only the Trackable virtuals Children() and Slots().
LiveObjectGraph WalkObjectGraph(Trackable& root);

// The saved form of `live` plus every tensor to write, keyed: each object's
// SerializeToTensors() under AttributeKey(key_path, attribute), in node order.
SavedObjectGraph SerializeLiveGraph(const LiveObjectGraph& live,
                                    std::vector<std::pair<std::string, Tensor>>* tensors);

}  // namespace eager::internal
