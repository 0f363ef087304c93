#pragma once

// CheckpointLoadStatus: what Checkpoint::Restore returns, with TensorFlow's
// four checks (FORMAT.md 4.5). Failures throw FailedPreconditionError naming
// objects by their TF pretty path, e.g. "(root).model.dense.kernel".
//
//   checkpoint.Restore(path).AssertConsumed();             // everything used
//   checkpoint.Restore(path).AssertExistingObjectsMatched();  // for a model not built yet
//   checkpoint.Restore(path).ExpectPartial();              // loading part of a file
//
// The restore stays active after the status is gone: objects created later
// still get their saved values. A restore that is neither asserted nor
// ExpectPartial()-ed and leaves checkpointed values unused warns once on
// stderr when its last pending object lets go of it, as TF does on garbage
// collection.

#include <memory>
#include <string>

namespace eager {

class Trackable;

namespace internal {
class RestoreCoordinator;
class NameBasedRestore;
}  // namespace internal

class CheckpointLoadStatus {
 public:
  // Every check first looks at the live objects reachable from the root
  // again, so it sees objects created since the restore.

  // AssertExistingObjectsMatched, then: every checkpoint value found a live
  // object (none unresolved, no slot restoration pending, no unused
  // attribute).
  CheckpointLoadStatus& AssertConsumed();
  // Every live object with values (variables, slots) was matched to the
  // checkpoint and assigned. Unbuilt layers (no variables yet) pass.
  CheckpointLoadStatus& AssertExistingObjectsMatched();
  // Something besides the root was matched.
  CheckpointLoadStatus& AssertNontrivialMatch();
  // No check; silences the warning about unused values.
  CheckpointLoadStatus& ExpectPartial();

  // False for Restore(std::nullopt), which restores nothing.
  bool restoring() const { return coordinator_ != nullptr || name_based_ != nullptr; }
  // For a name-based restore (a bundle without an object graph): true.
  bool name_based() const { return name_based_ != nullptr; }
  const std::string& save_path() const;

  CheckpointLoadStatus(CheckpointLoadStatus&&) noexcept;
  CheckpointLoadStatus& operator=(CheckpointLoadStatus&&) noexcept;
  ~CheckpointLoadStatus();

 private:
  friend class Checkpoint;
  // Restore(std::nullopt): every assertion fails (TF's InitializationOnlyStatus).
  explicit CheckpointLoadStatus(Trackable& root);
  CheckpointLoadStatus(Trackable& root, std::shared_ptr<internal::RestoreCoordinator> coordinator);
  CheckpointLoadStatus(Trackable& root, std::shared_ptr<internal::NameBasedRestore> name_based);

  Trackable* root_;
  std::shared_ptr<internal::RestoreCoordinator> coordinator_;
  std::shared_ptr<internal::NameBasedRestore> name_based_;
};

}  // namespace eager
