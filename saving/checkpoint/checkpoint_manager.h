#pragma once

// CheckpointManager: numbered checkpoints in a directory with TensorFlow's
// retention, tf.train.CheckpointManager (FORMAT.md 3.4).
//
//   eager::Checkpoint checkpoint({{"model", &model}, {"optimizer", &optimizer}});
//   eager::CheckpointManager manager(checkpoint, "/tmp/run", /*max_to_keep=*/3);
//   if (auto latest = manager.latest_checkpoint()) checkpoint.Restore(*latest);
//   ...
//   manager.Save();   // "/tmp/run/ckpt-1", then -2, ...; the oldest beyond 3 deleted
//
// Each Save writes DIR/NAME-N (N = the checkpoint's save_counter after it is
// incremented, or the number given), records it in DIR/checkpoint (with
// timestamps, and already without the checkpoints about to be deleted), and
// only then deletes what fell out of the list: a kill at any point leaves
// every listed checkpoint complete. A manager made on a directory that has a
// state file resumes its list; it deletes only checkpoints it saved or found
// listed there, and only those directly in its directory (after resolving
// `..` and symlinks): a listed path elsewhere is ignored, reported by
// ignored_checkpoints() and a warning on stderr.
//
// Making a manager also removes what a killed save or sweep left in the
// directory (temporary files, data files whose index is gone), unless
// another writer holds the directory (directory_lock.h), or this process is
// a rank other than 0 of a job (CurrentSaveGroup(), saving/bundle/save_group.h:
// rank 0 cleans the directory they share).
//
// One manager per directory: from its first Save until it is destroyed a
// manager owns its directory (internal::DirectoryOwner,
// saving/bundle/directory_lock.h), and another manager's Save there, in
// this process or another, throws FailedPreconditionError naming the
// directory and the owner's pid (a manager that only reads, e.g. an
// evaluator's latest_checkpoint(), is never refused).
//
// With CheckpointOptions{.async = true} the write, the state file and the
// deletions run on the Checkpoint's background thread (checkpoint.h); the
// accessors below wait for it first, and the next Save (or the Checkpoint's
// Sync/Restore) throws its error.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "saving/checkpoint/checkpoint.h"

namespace eager {

class Variable;
namespace internal {
class CheckpointRetention;
class DirectoryOwner;
}  // namespace internal

class CheckpointManager {
 public:
  // max_to_keep: nullopt keeps every checkpoint; else >= 1.
  // keep_checkpoint_every_n_hours: of the checkpoints leaving the list, one
  // per that many hours is kept for good.
  // step_counter and checkpoint_interval: with both, Save() does nothing
  // until the step counter has advanced checkpoint_interval past the last
  // saved step (last_checkpoint_step at first: nullopt lets the first Save
  // through, as TF).
  // init_fn: what RestoreOrInitialize() runs when there is no checkpoint
  // (e.g. loading pretrained weights), as TF's init_fn.
  // Throws InvalidArgumentError for max_to_keep <= 0, a checkpoint_interval
  // without step_counter, or a Checkpoint made for a root object;
  // DataLossError for a malformed state file.
  CheckpointManager(Checkpoint& checkpoint, const std::string& directory,
                    std::optional<int> max_to_keep,
                    std::optional<double> keep_checkpoint_every_n_hours = std::nullopt,
                    const std::string& checkpoint_name = "ckpt", Variable* step_counter = nullptr,
                    std::optional<int64_t> checkpoint_interval = std::nullopt,
                    std::function<void()> init_fn = nullptr,
                    std::optional<int64_t> last_checkpoint_step = std::nullopt);
  ~CheckpointManager();
  CheckpointManager(const CheckpointManager&) = delete;
  CheckpointManager& operator=(const CheckpointManager&) = delete;

  // Saves and returns the path, or nullopt when the interval says not yet.
  std::optional<std::string> Save(std::optional<int64_t> checkpoint_number = std::nullopt,
                                  bool check_interval = true,
                                  const CheckpointOptions& options = {});

  // The newest checkpoint (saved by this manager or found in the state
  // file), or nullopt. These three wait for an asynchronous save (they never
  // throw its error).
  const std::optional<std::string>& latest_checkpoint() const;
  // The managed checkpoints, oldest first.
  std::vector<std::string> checkpoints() const;
  const std::string& directory() const;
  // The state file's listed paths that resolve outside directory(), at
  // construction: never managed, never deleted.
  const std::vector<std::string>& ignored_checkpoints() const;

  // tf.train.CheckpointManager.restore_or_initialize: restores
  // latest_checkpoint() if there is one and returns its path; with a
  // checkpoint_interval it then records the step counter's (restored) value
  // as the last checkpoint step, so a Save() at that same step writes
  // nothing. Without a checkpoint it runs init_fn (if given) and returns
  // nullopt.
  std::optional<std::string> RestoreOrInitialize();

  // The step of the last checkpoint saved or restored, for the interval
  // check; nullopt without a checkpoint_interval or before the first.
  std::optional<int64_t> last_checkpoint_step() const { return last_checkpoint_step_; }

 private:
  Checkpoint& checkpoint_;
  std::string prefix_;
  Variable* step_counter_;
  std::optional<int64_t> checkpoint_interval_;
  std::optional<int64_t> last_checkpoint_step_;
  std::function<void()> init_fn_;
  std::unique_ptr<internal::CheckpointRetention>
      retention_;                                    // saving/bundle/checkpoint_retention.h
  std::unique_ptr<internal::DirectoryOwner> owner_;  // from the first Save on
};

}  // namespace eager
