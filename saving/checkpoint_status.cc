#include "saving/checkpoint_status.h"

#include "saving/internal/name_based_restore.h"
#include "saving/internal/restore_coordinator.h"

namespace eager {

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
  return coordinator_ ? coordinator_->save_path() : name_based_->save_path();
}

CheckpointLoadStatus& CheckpointLoadStatus::AssertConsumed() {
  if (coordinator_) {
    coordinator_->AssertConsumed(*root_);
  } else {
    name_based_->AssertConsumed(*root_);
  }
  return *this;
}

CheckpointLoadStatus& CheckpointLoadStatus::AssertExistingObjectsMatched() {
  if (coordinator_) {
    coordinator_->AssertExistingObjectsMatched(*root_);
  } else {
    name_based_->AssertConsumed(*root_);
  }
  return *this;
}

CheckpointLoadStatus& CheckpointLoadStatus::AssertNontrivialMatch() {
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
