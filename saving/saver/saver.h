#pragma once

// Saver: the legacy name-based saver, tf.compat.v1.train.Saver.
//
//   eager::Variable v1(1.0f, "v1"), v2(2.0f, "v2");
//   eager::Saver saver;                              // every live variable: keys "v1", "v2"
//   saver.Save("./model/model.ckpt");               // .index, .data-00000-of-00001, checkpoint
//
//   eager::Variable r1(0.0f, "renamed-v1"), r2(0.0f, "renamed-v2");
//   eager::Saver({{"v1", &r1}, {"v2", &r2}}).Restore("./model/model.ckpt");  // a rename map
//   eager::Saver({&r1}).Restore(...);               // a subset, keyed by its own name
//
// Keys are variable op names, Variable::shared_name() ("dense/kernel",
// "v1_1"): names TensorFlow made unique in creation order. That is what makes
// this format fragile. Build a model twice in one process and the second
// copy's variables are "dense_1/..."; restoring a checkpoint of the first
// copy into it fails. Restore then says which keys are missing, which keys
// of the checkpoint are closest (by scope parts, dtype and shape) and gives
// the rename map that would work. The object-based Checkpoint
// (saving/checkpoint/checkpoint.h) has no such problem.
//
// Files are TensorFlow's: a TensorBundle with the tensors in sorted key order
// (as TF's SaveV2 writes them) and the `checkpoint` state file (FORMAT.md 3).
// Save writes the bundle durably, then the state file atomically, and only
// then deletes the checkpoint that fell out of the max_to_keep window, so a
// crash at any point leaves the previous checkpoint restorable.
//
// Graph mode (runtime/graph.h): a Saver made while a Graph is the default
// belongs to that graph and adds TF1's save/restore subgraph to it, under a
// unique scope ("save/", "save_1/"), as TF's Saver does; so a second Saver
// made from its SaverDef (SaverOptions::saver_def = saver.saver_def(), TF's
// Saver(saver_def=saver.as_saver_def())) finds the restore op and its
// variables. Saver() takes the graph's global variables (its "variables"
// collection), Save(sess, ...) also writes PREFIX.meta, the graph (with
// that subgraph) as a MetaGraphDef and its SaverDef (saving/saver/meta_graph_import_export.h),
// and Restore(sess, ...) assigns the graph's Variables directly (their
// state lives in the Variable objects); variables a Saver does not cover
// stay uninitialized, and a Session reading one fails with "Attempting to
// use uninitialized value v2".
//
// Variables given to a Saver (or found live by Saver()) must outlive it.
// Not thread-safe.

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "saving/saver/meta_graph_def.h"

namespace eager {

class Graph;
class Saver;
class Variable;

namespace internal {
struct SaverGraphVariable;
std::unique_ptr<Saver> SaverForImportedGraph(const MetaGraph& meta, Graph& graph);
}  // namespace internal

struct SaverOptions {
  // How many recent checkpoints Save keeps (older ones are deleted); nullopt
  // or 0 keeps all and lists only the latest in the state file (as TF).
  std::optional<int> max_to_keep = 5;
  // Of the checkpoints leaving the window, keep one per this many hours.
  double keep_checkpoint_every_n_hours = 10000.0;
  // Store absolute checkpoint paths relative to the state file's directory.
  // Either way a relative path is stored relative to that directory, as TF
  // does.
  bool save_relative_paths = false;
  // The state file's name in the checkpoint directory.
  std::string latest_filename = "checkpoint";
  // Graph mode: Save also writes PREFIX.meta.
  bool write_meta_graph = true;
  // TF's sharded=True: one data file per device the variables are placed on
  // (graph mode: their variable nodes' devices; eager variables all share
  // one), in TF's merged layout (PREFIX.data-0000k-of-0000N, one index;
  // tensors dealt to the files by size as in saving/bundle/bundle_writer.h). The SaverDef says
  // sharded, and Save may then use the state file's name as its prefix.
  bool sharded = false;
  // Zero-pads the step in the prefix to 8 digits ("ckpt-00000042"), so that
  // listings sort by step (TF's pad_step_number).
  bool pad_step_number = false;
  // Restore accepts a saved tensor of another shape with the same dtype and
  // number of elements, reshaped to the variable's shape (TF's reshape).
  bool reshape = false;
  // No variables at all is not an error: Save writes nothing and returns "",
  // Restore does nothing (TF's allow_empty; TF returns None).
  bool allow_empty = false;
  // Graph mode, TF's Saver(saver_def=...): use the save/restore subgraph this
  // SaverDef names in the default graph instead of building one; the
  // variables are those its restore op assigns. With `name` non-empty, the
  // SaverDef's node names are taken under that scope (TF's import_scope).
  std::optional<MetaSaverDef> saver_def = std::nullopt;
  // The name scope of the Saver's nodes ("save", made unique); with
  // saver_def, the scope its names are prefixed with.
  std::string name = "";
};

class Saver {
 public:
  // Every live variable of the default name registry (LiveVariables(); in
  // graph mode the graph's global variables), each keyed by its own name. Throws
  // InvalidArgumentError "At least two variables have the same name: X" when
  // two share a name (possible after ResetDefaultNames), and
  // InvalidArgumentError when there is no variable at all.
  Saver();
  explicit Saver(const SaverOptions& options);
  // These variables, each keyed by its own name. Errors as above, and for a
  // null pointer.
  explicit Saver(const std::vector<Variable*>& var_list, SaverOptions options = {});
  Saver(std::initializer_list<Variable*> var_list, SaverOptions options = {})
      : Saver(std::vector<Variable*>(var_list), std::move(options)) {}
  // checkpoint key -> variable: save `variable` under that key, restore it
  // from that key (TF's Saver({"v1": r1})). Throws InvalidArgumentError for an
  // empty key, a null variable, or a variable listed under two keys.
  explicit Saver(const std::map<std::string, Variable*>& var_map, SaverOptions options = {});
  ~Saver();
  Saver(const Saver&) = delete;
  Saver& operator=(const Saver&) = delete;

  // Writes the variables to `save_path` ("save_path-STEP" with a step) and
  // returns that prefix: PREFIX.index, PREFIX.data-00000-of-00001, then the
  // `checkpoint` state file of PREFIX's directory (created if missing), then
  // deletes at most one checkpoint that fell out of the max_to_keep window
  // (its .index, .data-* and .meta). Throws FailedPreconditionError naming
  // an uninitialized variable (nothing is written), InvalidArgumentError for
  // an empty save_path, a latest_filename with a path component, or (not
  // sharded, no step) a save_path whose base name is the state file's: TF's
  // "'latest_filename' collides with 'save_path'"; or the file system's error
  // naming the file. An empty Saver (allow_empty) writes nothing, returns "".
  std::string Save(const std::string& save_path, std::optional<int64_t> global_step = std::nullopt);
  // As above, with the step read from an integer scalar variable.
  std::string Save(const std::string& save_path, const Variable& global_step);

  // Graph mode, TF1's saver.save(sess, ...) / saver.restore(sess, ...): as
  // above (plus PREFIX.meta). Throws InvalidArgumentError when `sess` runs
  // another graph than this Saver's, or this Saver was made in eager mode.
  template <typename SessionLike>
  requires requires(SessionLike& s) { s.graph(); }
  std::string Save(SessionLike& sess, const std::string& save_path,
                   std::optional<int64_t> global_step = std::nullopt) {
    CheckSessionGraph(&sess.graph());
    return Save(save_path, global_step);
  }
  template <typename SessionLike>
  requires requires(SessionLike& s) { s.graph(); }
  void Restore(SessionLike& sess, const std::string& save_path) {
    CheckSessionGraph(&sess.graph());
    Restore(save_path);
  }

  // Assigns every variable its value from checkpoint `save_path`, or none:
  // all keys are checked before anything is assigned. Throws
  //   NotFoundError  "The passed save_path is not a valid checkpoint: P" when
  //                  P.index does not exist; TF's "Restoring from checkpoint
  //                  failed ... Key K not found in checkpoint" naming every
  //                  missing key, followed by the closest keys present and a
  //                  rename map for this Saver that would restore them all;
  //   InvalidArgumentError naming the key, the saved and the expected dtype
  //                  and shape on a mismatch, or for an empty save_path;
  //   DataLossError  from the reader for a corrupt file.
  void Restore(const std::string& save_path);

  // checkpoint key -> variable, sorted by key.
  const std::map<std::string, Variable*>& variables() const { return variables_; }
  // The checkpoints this Saver wrote and still keeps, oldest first.
  std::vector<std::string> last_checkpoints() const;
  // Replaces that list (TF's set_last_checkpoints, e.g. after a restart):
  // these get an infinite timestamp, so when they leave the max_to_keep
  // window they are kept on disk for good, as TF does.
  void SetLastCheckpoints(const std::vector<std::string>& prefixes);
  // As above with each checkpoint's time in seconds since the epoch, which
  // keep_checkpoint_every_n_hours judges (set_last_checkpoints_with_time).
  void SetLastCheckpointsWithTime(const std::vector<std::pair<std::string, double>>& checkpoints);
  const SaverOptions& options() const { return options_; }
  // The graph this Saver belongs to, or nullptr (eager).
  Graph* graph() const { return graph_; }
  // Graph mode: the SaverDef its .meta files carry (for an imported Saver,
  // the file's).
  MetaSaverDef saver_def() const;

 private:
  friend std::unique_ptr<Saver> internal::SaverForImportedGraph(const MetaGraph& meta,
                                                                Graph& graph);
  struct Kept {
    std::string prefix;
    double time;  // seconds since the epoch
  };
  void RecordAndUpdateState(const std::string& prefix);
  void CheckSessionGraph(const Graph* graph) const;
  void WriteMetaGraphFile(const std::string& path) const;
  std::vector<internal::SaverGraphVariable> SaverVariables() const;
  int MaxToKeepForDef() const;
  int NumShards() const;
  void RestoreChecked(const std::string& save_path);

  std::map<std::string, Variable*> variables_;
  SaverOptions options_;
  std::vector<Kept> last_checkpoints_;  // oldest first
  std::vector<Kept> to_be_deleted_;     // left the window, not processed yet
  double next_checkpoint_time_;         // keep_checkpoint_every_n_hours bookkeeping
  Graph* graph_ = nullptr;              // graph mode
  std::string scope_;                   // graph mode: "save/", "save_1/", ...
  std::optional<MetaSaverDef> imported_saver_def_;
  std::optional<MetaSaverDef> own_saver_def_;  // graph mode: of the nodes it added
};

}  // namespace eager
