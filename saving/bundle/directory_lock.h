#pragma once

// One writer per checkpoint directory at a time. Two CheckpointManagers, or
// two processes, saving into one directory would otherwise prune, overwrite
// and rename each other's files; the second one is refused instead. For
// saving's writers (bundle, checkpoint, saver); not installed (cmake/package.cmake): not user API.
//
// The lock is flock(2) on the directory itself (no lock file appears in it),
// so it is released by the kernel when its holder dies, SIGKILL included.
// Within this process it is held per thread and is reentrant there: a
// CheckpointManager save holds it around the Checkpoint save, which holds it
// around its BundleWriter and the state file update. Another thread, or
// another process (a forked child included), gets FailedPreconditionError
// naming the directory.
//
// Whoever takes the lock first (not a nested acquisition) also removes the
// temporary files that killed saves left in the directory: while nobody holds
// the lock, no save is in progress there, so every temporary file is an
// orphan. Temporary names are those of BundleWriter (`*.tempstate<digits>`),
// the state file (`*.tmp<32 hex digits>`) and the meta graph
// (`*.meta.tmp<digits>`).

#include <string>

namespace eager::internal {

class DirectoryLock {
 public:
  // Locks `dir` (created by the caller beforehand). Throws
  // FailedPreconditionError when another thread or process holds it, or the
  // OS error kind (posix_file.h) when `dir` cannot be opened.
  explicit DirectoryLock(const std::string& dir);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  std::string key_;  // the directory's device and inode
};

// A CheckpointManager's claim on its directory, held from its first save to
// its destruction (a DirectoryLock covers one save, so two managers on one
// directory could otherwise take turns overwriting and deleting each
// other's checkpoints). It is an open-file-description lock (F_OFD_SETLK)
// on the directory, taken shared on the byte at the owner's pid, beside
// DirectoryLock's flock (the two do not interact): the kernel drops it when
// the owner dies, and a claim that finds another one (in this process, or
// another) is refused with the owner's pid.
class DirectoryOwner {
 public:
  // Claims `dir` (which must exist). Throws FailedPreconditionError naming
  // `dir` and the owning process when another claim holds it, or the OS
  // error kind (posix_file.h) when `dir` cannot be opened.
  explicit DirectoryOwner(const std::string& dir);
  ~DirectoryOwner();
  DirectoryOwner(const DirectoryOwner&) = delete;
  DirectoryOwner& operator=(const DirectoryOwner&) = delete;

 private:
  int fd_ = -1;
};

// Whether `name` (a file name, no directory) is a temporary file one of our
// writers creates; exposed for tests.
bool IsTemporaryFileName(const std::string& name);

}  // namespace eager::internal
