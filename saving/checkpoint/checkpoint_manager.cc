#include "saving/checkpoint/checkpoint_manager.h"

#include <cstdio>
#include <filesystem>

#include "runtime/errors.h"
#include "runtime/variable.h"
#include "saving/bundle/checkpoint_retention.h"
#include "saving/bundle/directory_lock.h"
#include "saving/bundle/posix_file.h"
#include "saving/bundle/save_group.h"
#include "saving/checkpoint/internal/background_save.h"

namespace eager {
namespace {

internal::RetentionOptions ManagerOptions(std::optional<int> max_to_keep,
                                          std::optional<double> keep_hours) {
  internal::RetentionOptions options;
  options.max_to_keep = max_to_keep;
  options.keep_checkpoint_every_n_hours = keep_hours;
  return options;
}

int64_t StepOf(const Variable& step) {
  const Tensor value = step.value();
  EAGER_CHECK(value.num_elements() == 1 &&
                  (value.dtype() == DType::kInt64 || value.dtype() == DType::kInt32),
              "CheckpointManager: step_counter '", step.shared_name(),
              "' must be an int32 or int64 scalar, got ", value.dtype(), " of shape ",
              value.shape());
  return value.dtype() == DType::kInt64 ? value.scalar<int64_t>() : value.scalar<int32_t>();
}

// What killed saves and sweeps left in `directory`: temporary files (removed
// by taking the lock) and data files whose index is gone. Skipped when
// another writer holds the lock (its files are not leftovers) or the
// directory cannot be locked (e.g. it does not exist yet, or is read-only).
void RemoveLeftovers(const std::string& directory, const std::string& checkpoint_name) {
  std::error_code ec;
  if (!std::filesystem::is_directory(directory, ec)) return;
  try {
    const internal::DirectoryLock lock(directory);
    internal::RemoveOrphanedDataFiles(directory, checkpoint_name);
  } catch (const Error&) {
  }
}

}  // namespace

CheckpointManager::CheckpointManager(Checkpoint& checkpoint, const std::string& directory,
                                     std::optional<int> max_to_keep,
                                     std::optional<double> keep_checkpoint_every_n_hours,
                                     const std::string& checkpoint_name, Variable* step_counter,
                                     std::optional<int64_t> checkpoint_interval,
                                     std::function<void()> init_fn,
                                     std::optional<int64_t> last_checkpoint_step)
    : checkpoint_(checkpoint),
      prefix_((std::filesystem::path(directory) / checkpoint_name).string()),
      step_counter_(step_counter),
      checkpoint_interval_(checkpoint_interval),
      last_checkpoint_step_(checkpoint_interval ? last_checkpoint_step : std::nullopt),
      init_fn_(std::move(init_fn)),
      retention_(std::make_unique<internal::CheckpointRetention>(
          directory, ManagerOptions(max_to_keep, keep_checkpoint_every_n_hours))) {
  EAGER_CHECK(!checkpoint_interval || step_counter != nullptr,
              "CheckpointManager: checkpoint_interval needs a step_counter");
  EAGER_CHECK(!checkpoint_interval || *checkpoint_interval > 0,
              "CheckpointManager: checkpoint_interval must be positive, got ",
              checkpoint_interval.value_or(0));
  EAGER_CHECK(!checkpoint_name.empty(), "CheckpointManager: checkpoint_name must not be empty");
  for (const std::string& path : retention_->ignored_checkpoints()) {
    std::fprintf(stderr,
                 "WARNING: CheckpointManager(%s): the state file lists %s, which is outside the "
                 "directory; it is ignored (never deleted) and dropped from the list\n",
                 directory.c_str(), path.c_str());
  }
  // In a job of several processes (saving/bundle/save_group.h) only rank 0
  // cleans: another rank's cleanup would hold the directory's lock just when
  // rank 0 takes it for the first distributed save.
  const SaveGroup* group = CurrentSaveGroup();
  if (group == nullptr || group->rank() == 0) RemoveLeftovers(directory, checkpoint_name);
}

// A background save of ours uses retention_: it must end first.
CheckpointManager::~CheckpointManager() { checkpoint_.background_->Wait(); }

const std::optional<std::string>& CheckpointManager::latest_checkpoint() const {
  checkpoint_.background_->Wait();
  return retention_->latest_checkpoint();
}

std::vector<std::string> CheckpointManager::checkpoints() const {
  checkpoint_.background_->Wait();
  return retention_->checkpoints();
}

const std::string& CheckpointManager::directory() const { return retention_->directory(); }

const std::vector<std::string>& CheckpointManager::ignored_checkpoints() const {
  return retention_->ignored_checkpoints();
}

std::optional<std::string> CheckpointManager::Save(std::optional<int64_t> checkpoint_number,
                                                   bool check_interval,
                                                   const CheckpointOptions& options) {
  checkpoint_.Sync();
  if (checkpoint_interval_) {
    const int64_t step = StepOf(*step_counter_);
    if (last_checkpoint_step_) {
      if (step == *last_checkpoint_step_) return std::nullopt;
      if (check_interval && step < *last_checkpoint_step_ + *checkpoint_interval_) {
        return std::nullopt;
      }
    }
    last_checkpoint_step_ = step;
  }
  // One lock over the bundle, the state file and the retention deletions;
  // taken by the background thread for an asynchronous save.
  internal::CreateDirectories(directory());
  // From the first save on, the directory is this manager's (rank 0's, in a
  // job: the other ranks write no state file and delete nothing).
  const SaveGroup* group = CurrentSaveGroup();
  if (owner_ == nullptr && (group == nullptr || group->rank() == 0)) {
    owner_ = std::make_unique<internal::DirectoryOwner>(directory());
  }
  std::optional<internal::DirectoryLock> lock;
  if (!options.async && !Checkpoint::IsGroupSave(options)) lock.emplace(directory());
  Variable& counter = checkpoint_.save_counter();
  counter.AssignAdd(Tensor(int64_t{1}));
  const int64_t number = checkpoint_number ? *checkpoint_number : counter.value().scalar<int64_t>();
  const std::string path = StrCat(prefix_, "-", number);
  // The bundle is durable before the state file names it.
  // A distributed save: rank 0 writes the state file and deletes, the other
  // ranks keep the same list in memory.
  checkpoint_.WriteThen(path, options, [retention = retention_.get(), path](bool writes_files) {
    retention->Record(path, writes_files);
  });
  return path;
}

std::optional<std::string> CheckpointManager::RestoreOrInitialize() {
  const std::optional<std::string>& latest = latest_checkpoint();
  if (!latest) {
    if (init_fn_) init_fn_();
    return std::nullopt;
  }
  checkpoint_.Restore(*latest);
  // TF (checkpoint_management.py, restore_or_initialize): the restored step
  // is the last checkpoint step.
  if (checkpoint_interval_) last_checkpoint_step_ = StepOf(*step_counter_);
  return latest;
}

}  // namespace eager
