#pragma once

// Which checkpoints of a directory to keep, and the `checkpoint` state file
// that lists them: the bookkeeping behind tf.train.CheckpointManager
// (FORMAT.md 3.4), shared by CheckpointManager and Saver; not installed
// (cmake/package.cmake): not user API.
//
// The caller writes a checkpoint's files (durably: BundleWriter::Finish
// fsyncs and renames), then calls Record(prefix). Record keeps TF's
// CheckpointManager.save rules but not its order (TF writes the state file,
// deletes, then writes it again, so a kill in between leaves it listing a
// deleted checkpoint):
//   1. the prefix becomes the newest managed checkpoint (a prefix already
//      listed moves to the end);
//   2. while more than max_to_keep are managed, the oldest leaves the list:
//      preserved forever when keep_checkpoint_every_n_hours says so, else
//      doomed;
//   3. the state file is written (atomically, fsynced) listing the new
//      checkpoint and not the doomed ones;
//   4. only then are the doomed checkpoints' files deleted (PREFIX.index
//      first, then PREFIX.data-?????-of-????? and, if asked, PREFIX.meta;
//      nothing else).
// So at every instant (a SIGKILL included) each checkpoint the state file
// lists is complete. A kill during step 4 can leave data files whose index
// is gone; RemoveOrphanedDataFiles removes them.
// Only prefixes this object recorded or adopted from the state file at
// construction are ever deleted, never anything else in the directory, and
// never a prefix outside the directory: a state file's paths that resolve
// (after `..` and symlinks) outside it are ignored (ignored_checkpoints()).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace eager::internal {

struct RetentionOptions {
  // nullopt keeps every checkpoint; otherwise must be >= 1.
  std::optional<int> max_to_keep = 5;
  // Of the checkpoints leaving the list, keep one per this many hours.
  std::optional<double> keep_checkpoint_every_n_hours{};
  // Name of the state file in the directory.
  std::string state_filename = "checkpoint";
  // Store paths relative to the directory (CheckpointManager); otherwise as
  // given to Record (TF1 Saver's default).
  bool relative_paths = true;
  // Write all_model_checkpoint_timestamps and last_preserved_timestamp
  // (CheckpointManager) or not (TF1 Saver).
  bool write_timestamps = true;
  // Also delete PREFIX.meta (TF1 Saver writes one per checkpoint).
  bool delete_meta_files = false;
  // A state file listing paths without timestamps (a TF1 Saver's): TF's
  // CheckpointManager leaves them all alone (false); true adopts them as
  // managed, oldest first, stamped with the construction time.
  bool adopt_untimestamped_paths = false;
  // Seconds since the epoch; replaceable for tests.
  std::function<double()> clock{};
};

class CheckpointRetention {
 public:
  // Resumes from `directory`/state_filename if present, as TF does: paths
  // newer than its last_preserved_timestamp (timestamps clipped to now) are
  // managed; with no state file, last_preserved_timestamp = now - 1. Throws
  // InvalidArgumentError for max_to_keep <= 0 or a negative
  // keep_checkpoint_every_n_hours, DataLossError for a malformed state file.
  CheckpointRetention(std::string directory, RetentionOptions options = {});

  // Call once `prefix`'s files are durable; see the file comment. Returns
  // the prefixes whose files were deleted. With write_files false (the
  // ranks other than 0 of a distributed save) only the lists change: no
  // state file is written and nothing is deleted.
  std::vector<std::string> Record(const std::string& prefix, bool write_files = true);

  // The managed prefixes, oldest first (paths as TF's
  // get_checkpoint_state gives them: relative ones joined onto directory).
  std::vector<std::string> checkpoints() const;
  // The newest recorded prefix, or the state file's model_checkpoint_path at
  // construction (joined onto directory), or nullopt. It is only ever read,
  // so it may lie outside the directory.
  const std::optional<std::string>& latest_checkpoint() const { return latest_; }
  double last_preserved_timestamp() const { return last_preserved_; }
  // The state file's listed paths (joined onto directory) that resolve
  // outside the directory: neither managed nor deleted, and dropped from the
  // state file at the next Record.
  const std::vector<std::string>& ignored_checkpoints() const { return ignored_; }
  const std::string& directory() const { return directory_; }

 private:
  struct Entry {
    std::string path;
    double timestamp;
  };
  double Now() const;
  void WriteState() const;
  void DeleteFiles(const std::string& prefix) const;

  std::string directory_;
  RetentionOptions options_;
  std::vector<Entry> managed_;  // oldest first
  std::optional<std::string> latest_;
  double last_preserved_ = 0.0;
  std::vector<std::string> ignored_;
};

// Deletes PREFIX.index and every PREFIX.data-NNNNN-of-NNNNN (and PREFIX.meta
// when `meta`); missing files are fine. Returns how many files were removed.
int DeleteCheckpointFiles(const std::string& prefix, bool meta = false);
// The same for each of `names` (plain names, no '/') in `directory`: the
// indexes first, then one scan of the directory for all their data files.
// Every unlink is unlinkat(2) of a plain name on one descriptor of
// `directory`, so nothing outside it is reached, whatever its entries are
// renamed or symlinked to meanwhile.
int DeleteCheckpointsIn(const std::string& directory, const std::vector<std::string>& names,
                        bool meta = false);
// How many directory scans DeleteCheckpointsIn and RemoveOrphanedDataFiles
// have made in this process; for tests that bound them.
int64_t DirectoryScansForTest();

// Whether `prefix` names a checkpoint directly in `directory`, both resolved
// (`..`, symlinks of their existing parts) first. Never throws.
bool IsCheckpointInDirectory(const std::string& prefix, const std::string& directory);

// The leftovers of a killed retention sweep (or of a save killed between its
// data and index renames): every NAME-<digits>.data-NNNNN-of-NNNNN in
// `directory` whose NAME-<digits>.index is missing. A checkpoint without
// its index cannot be read, so nothing readable is removed. Call with the
// directory's lock held (directory_lock.h). Returns how many were removed.
int RemoveOrphanedDataFiles(const std::string& directory, const std::string& name);

}  // namespace eager::internal
