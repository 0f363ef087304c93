#include "saving/checkpoint/checkpoint_status.h"

#include "runtime/errors.h"
#include "saving/checkpoint/internal/name_based_restore.h"
#include "saving/checkpoint/internal/restore_coordinator.h"

namespace eager {

namespace {

[[noreturn]] void NothingRestored() {
  throw FailedPreconditionError(
      "No checkpoint specified (save_path=None); nothing is being restored.");
}

const std::string kNoPath;

}  // namespace

CheckpointLoadStatus::CheckpointLoadStatus(Trackable& root) : root_(&root) {}

CheckpointLoadStatus::CheckpointLoadStatus(
    Trackable& root, std::shared_ptr<internal::RestoreCoordinator> coordinator)
    : root_(&root), coordinator_(std::move(coordinator)) {}

CheckpointLoadStatus::CheckpointLoadStatus(Trackable& root,
                                           std::shared_ptr<internal::NameBasedRestore> name_based)
    : root_(&root), name_based_(std::move(name_based)) {}

CheckpointLoadStatus::CheckpointLoadStatus(CheckpointLoadStatus&&) noexcept = default;
CheckpointLoadStatus& CheckpointLoadStatus::operator=(CheckpointLoadStatus&&) noexcept = default;
CheckpointLoadStatus::~CheckpointLoadStatus() = default;

const std::string& CheckpointLoadStatus::save_path() const {
  if (coordinator_) return coordinator_->save_path();
  return name_based_ ? name_based_->save_path() : kNoPath;
}

CheckpointLoadStatus& CheckpointLoadStatus::AssertConsumed() {
  if (!restoring()) NothingRestored();
  if (coordinator_) {
    coordinator_->AssertConsumed(*root_);
  } else {
    name_based_->AssertConsumed(*root_);
  }
  return *this;
}

CheckpointLoadStatus& CheckpointLoadStatus::AssertExistingObjectsMatched() {
  if (!restoring()) NothingRestored();
  if (coordinator_) {
    coordinator_->AssertExistingObjectsMatched(*root_);
  } else {
    name_based_->AssertConsumed(*root_);
  }
  return *this;
}

CheckpointLoadStatus& CheckpointLoadStatus::AssertNontrivialMatch() {
  if (!restoring()) NothingRestored();
  if (coordinator_) {
    coordinator_->AssertNontrivialMatch(*root_);
  } else {
    name_based_->AssertConsumed(*root_);
  }
  return *this;
}

CheckpointLoadStatus& CheckpointLoadStatus::ExpectPartial() {
  if (coordinator_) coordinator_->ExpectPartial();
  return *this;
}

}  // namespace eager
