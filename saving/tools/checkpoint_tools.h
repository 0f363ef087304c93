#pragma once

// What eager-ckpt's `state`, `diff` and `stats` commands compute, as
// functions with plain results, plus their text and JSON renderings:
//
//   eager-ckpt state DIR        the `checkpoint` file; which prefixes exist
//   eager-ckpt diff  A B        added / removed / changed tensors
//   eager-ckpt stats PATH       per tensor: min, max, mean, NaN and Inf counts
//   eager-ckpt graph PATH       an object-based checkpoint's object graph
//
// Tensors eager cannot read (a dtype it lacks, a data
// file that is absent) are reported as such, not as errors; a damaged file is
// an error (DataLossError naming file and key), as in BundleReader.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "saving/bundle/bundle_reader.h"

namespace eager {
namespace internal {
struct SavedObjectGraph;  // saving/checkpoint/object_graph.h
}  // namespace internal

// ---- state -----------------------------------------------------------------

struct CheckpointFilesStatus {
  std::string stored;               // as written in the `checkpoint` file
  std::string prefix;               // resolved: a relative path joined onto DIR
  std::optional<double> timestamp;  // all_model_checkpoint_timestamps, when present
  bool latest = false;              // the model_checkpoint_path
  // "ok": PREFIX.index and every data shard exist; "missing": no PREFIX.index;
  // "incomplete": some data shards are missing; "unreadable": the index does
  // not parse (`detail` says why).
  std::string status;
  int shards = 0;          // from the index (0 when it cannot be read)
  int missing_shards = 0;  // data files absent
  std::string detail;      // e.g. the missing files, or "found as DIR/NAME"
};

struct CheckpointStateReport {
  std::string dir;
  std::string model_checkpoint_path;  // as stored
  std::optional<double> last_preserved_timestamp;
  std::vector<CheckpointFilesStatus> checkpoints;  // all_model_checkpoint_paths order,
                                                   // then the latest if not listed
};

// Reads DIR/checkpoint. NotFoundError when DIR has no `checkpoint` file,
// DataLossError (naming the file and line) when it is malformed.
CheckpointStateReport DescribeCheckpointState(const std::string& dir);
void PrintCheckpointState(const CheckpointStateReport& report, bool json, std::ostream& out);

// ---- diff ------------------------------------------------------------------

struct TensorDifference {
  enum class Kind { kAdded, kRemoved, kChanged, kSame };
  std::string key;
  Kind kind = Kind::kSame;
  std::string a_type, b_type;  // "float32[2,3]" (empty on the side that lacks the key)
  // For changed numeric tensors of equal dtype and shape: max |a - b| over the
  // elements that differ (infinity when a difference involves Inf or NaN),
  // and how many elements differ.
  std::optional<double> max_abs_diff;
  int64_t elements_differing = 0;
  std::string detail;  // why it changed ("dtype", "shape", "values"), or why
                       // the values could not be compared
};

// Every key of A and B in key order. Entries with equal dtype, shape, size
// and stored checksum are the same without reading them; others are read
// and compared element by element (NaN equals NaN).
std::vector<TensorDifference> DiffCheckpoints(const BundleReader& a, const BundleReader& b);
void PrintCheckpointDiff(const BundleReader& a, const BundleReader& b,
                         const std::vector<TensorDifference>& diff, bool json, std::ostream& out);
bool HasDifferences(const std::vector<TensorDifference>& diff);

// ---- stats -----------------------------------------------------------------

struct TensorStatistics {
  std::string key;
  std::string dtype;  // eager's name, or TensorFlow's for dtypes eager lacks
  std::vector<int64_t> dims;
  int64_t elements = 0;
  bool numeric = false;    // false for strings and unreadable tensors
  std::string unreadable;  // why the values could not be read (empty when read)
  // Over the finite elements (bool as 0/1); nullopt when there are none.
  std::optional<double> min, max, mean;
  int64_t nan_count = 0;
  int64_t inf_count = 0;
};

std::vector<TensorStatistics> ComputeTensorStatistics(const BundleReader& reader);
void PrintTensorStatistics(const BundleReader& reader, const std::vector<TensorStatistics>& stats,
                           bool json, std::ostream& out);

// ---- graph -----------------------------------------------------------------

// One node of the TrackableObjectGraph stored under _CHECKPOINTABLE_OBJECT_GRAPH.
struct ObjectGraphNode {
  int id = 0;
  // The first breadth-first path to it (TF's naming): the parent on that path
  // and the index of the edge in the parent's children; -1 for the root, slot
  // variables and unreachable nodes. ObjectGraphPath spells the path out.
  int parent = -1;
  int parent_edge = -1;
  // A slot variable no path reaches: the first optimizer node listing it and
  // the index of that entry in its slot_variables; else -1.
  int slot_optimizer = -1;
  int slot_entry = -1;
  struct Child {
    std::string local_name;
    int node_id = 0;
  };
  std::vector<Child> children;
  struct Attribute {
    std::string name;            // "VARIABLE_VALUE"
    std::string full_name;       // the variable's name, "dense/kernel"
    std::string checkpoint_key;  // the bundle key
    std::string type;            // "float32[784,10]", or "(not in the bundle)"
  };
  std::vector<Attribute> attributes;
  struct Slot {
    std::string slot_name;  // "m"
    int original_variable_node_id = 0;
    int slot_variable_node_id = 0;
  };
  std::vector<Slot> slot_variables;  // on optimizer nodes
};

// NotFoundError when the checkpoint has no object graph (a name-based one);
// DataLossError when the graph does not parse. Memory linear in the graph:
// no path is spelled out here (a chain 20,000 deep has paths of 200 MB in all).
std::vector<ObjectGraphNode> DescribeObjectGraph(const BundleReader& reader);
// The same for a graph already parsed; `reader` gives the attributes' types.
std::vector<ObjectGraphNode> DescribeObjectGraph(const internal::SavedObjectGraph& graph,
                                                 const BundleReader& reader);
// TF's pretty path of node `id`, "(root).model.dense.kernel"; for a slot
// variable "(root).optimizer's state 'm' for (root).model.dense.kernel";
// "(unreachable node 7)" for a node no path reaches. O(its depth).
std::string ObjectGraphPath(const std::vector<ObjectGraphNode>& nodes, int id);
// Text: the tree of first paths, indented, each node with its attributes
// (key, dtype, shape); an edge to a node already shown as "-> <path>"; then
// the slot variables. JSON: the nodes as above, each with its "path". Both
// are streamed: memory stays linear in the graph, and so does the output:
// a printed path keeps its last 16 names (64 bytes each at most) and says
// how many levels it left out ("(root).(49984 more levels).a.a..."), and
// indentation stops at 32 levels, deeper lines starting "[depth N]".
void PrintObjectGraph(const BundleReader& reader, const std::vector<ObjectGraphNode>& nodes,
                      bool json, std::ostream& out);

}  // namespace eager
