#pragma once

// Checkpoint: object-based saving and restoring, tf.train.Checkpoint.
//
//   MyModel model; eager::Adam optimizer;
//   eager::Checkpoint checkpoint({{"model", &model}, {"optimizer", &optimizer}});
//   std::string path = checkpoint.Save("./my_checkpoint/ckpt");   // "./my_checkpoint/ckpt-1"
//
//   MyModel new_model; eager::Adam new_optimizer;                  // fresh, unbuilt
//   eager::Checkpoint restored({{"model", &new_model}, {"optimizer", &new_optimizer}});
//   restored.Restore(*eager::LatestCheckpoint("./my_checkpoint")).AssertExistingObjectsMatched();
//   // new_model's Dense gets its saved kernel when it builds, and Adam its
//   // saved slots for it right then (TF's deferred slot restoration).
//
// Files are TensorFlow's (FORMAT.md 4): every value under
// "<object path>/.ATTRIBUTES/<attribute>", slots under ".OPTIMIZER_SLOT",
// the object graph under "_CHECKPOINTABLE_OBJECT_GRAPH", an int64
// "save_counter". Objects are matched by the path of local names from the
// root, never by variable name, so a model built twice in one process
// ("dense_1/kernel") restores from a checkpoint of the first.
//
// The objects given must outlive the Checkpoint (and any restore still
// waiting for objects to be created). Not thread-safe.
//
// Asynchronous saves (CheckpointOptions{.async = true}, checkpoint_options.h):
// Save/Write capture the values and return; the files are written on a
// background thread. Every later Save, Write, Restore, Read, Sync() and the
// destructor waits for that save first, and the next of them (Sync()
// included) throws its error, if it failed.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/trackable.h"
#include "runtime/variable.h"
#include "saving/checkpoint/checkpoint_options.h"
#include "saving/checkpoint/checkpoint_status.h"

namespace eager {

namespace internal {
class BackgroundSave;
}  // namespace internal

class Checkpoint final : public Trackable {
 public:
  // tf.train.Checkpoint(**kwargs): the root's children, listed in sorted
  // name order, then "save_counter" once it exists. Throws
  // InvalidArgumentError for an empty or duplicate name, a null object, or
  // the name "save_counter".
  explicit Checkpoint(std::vector<std::pair<std::string, Trackable*>> children);
  // `root` itself is the object graph's root (Keras model.save_weights
  // layout): no save_counter, so Save() is not available; use Write().
  explicit Checkpoint(Trackable& root);
  ~Checkpoint() override;

  // Increments save_counter, writes "<file_prefix>-<save_counter>" and
  // records it in the directory's `checkpoint` state file (as TF: only
  // this path listed, relative). Returns the path written.
  // With options.async, the state file is written by the background save
  // too, after the bundle.
  std::string Save(const std::string& file_prefix, const CheckpointOptions& options = {});
  // Writes exactly `file_prefix` (.index + .data-00000-of-00001); no
  // counter, no state file. Returns file_prefix.
  std::string Write(const std::string& file_prefix, const CheckpointOptions& options = {});

  // Waits for an asynchronous save still running; throws its error (see
  // above), or that of one that failed since the last call. tf.train.
  // Checkpoint.sync().
  void Sync();

  // Restores by structure (FORMAT.md 4.5); see CheckpointLoadStatus. A
  // bundle without an object graph is restored by variable names. A
  // SavedModel directory is read from its variables/variables. Throws
  // NotFoundError (TF's message) for a path without a checkpoint,
  // InvalidArgumentError naming the key, the saved and the expected dtype
  // and shape for a mismatch (then nothing is assigned).
  CheckpointLoadStatus Restore(const std::string& save_path);
  // tf.train.Checkpoint.restore(None): restores nothing; the status's
  // assertions fail with "No checkpoint specified (save_path=None)...".
  //   auto status = latest ? checkpoint.Restore(*latest) : checkpoint.Restore(std::nullopt);
  CheckpointLoadStatus Restore(std::nullopt_t);
  // Restore, without creating save_counter first.
  CheckpointLoadStatus Read(const std::string& save_path);

  // Adds the child `name` after construction, as assigning an attribute of a
  // tf.train.Checkpoint does (checkpoint.model = model): it is listed after
  // the children present now, and a restore still waiting for that name
  // (Restore() before this call) gives `object` and everything below it
  // their saved values now, or as they are created. `object` must outlive
  // the Checkpoint. Throws InvalidArgumentError as the constructor does (a
  // name taken included), FailedPreconditionError for a root-mode
  // Checkpoint.
  void Track(const std::string& name, Trackable& object);

  // The int64 counter Save() increments (created at 0 on first use).
  // REQUIRES: not a root-mode Checkpoint (FailedPreconditionError).
  Variable& save_counter();

  // Trackable.
  std::vector<Child> Children() override;
  // A root-mode Checkpoint has no children of its own: SetKerasLayout on it
  // sets the layout of its root and everything below (SetKerasLayout(root)).
  void UseKerasLayout(KerasLayout layout) override;

 private:
  friend class CheckpointManager;

  Trackable& root() { return root_ != nullptr ? *root_ : *this; }
  // Captures the values now, then writes the bundle (and runs `then`, e.g.
  // the state file update) under the directory's lock: here, or on the
  // background thread with options.async. `then(true)` may write files;
  // a distributed save calls it so on rank 0 and `then(false)` (bookkeeping
  // in memory only) on the other ranks.
  void WriteThen(const std::string& file_prefix, const CheckpointOptions& options,
                 std::function<void(bool writes_files)> then);
  // Whether `options` make a save of several processes (then only rank 0
  // takes the directory's lock).
  static bool IsGroupSave(const CheckpointOptions& options);

  std::vector<Child> children_;  // the constructor's sorted by name, then Track()'s
  // How many children save_counter follows: it is listed where it was
  // created, as TF tracks it then.
  size_t children_before_counter_ = 0;
  Trackable* root_ = nullptr;  // root mode
  std::unique_ptr<Variable> save_counter_;
  std::unique_ptr<internal::BackgroundSave> background_;
};

}  // namespace eager
