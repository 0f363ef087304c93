#include "saving/bundle/directory_lock.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <thread>

#include "runtime/errors.h"
#include "saving/bundle/posix_file.h"

namespace eager::internal {
namespace {

struct Holder {
  pid_t pid = 0;  // a forked child inherits the registry but not the lock
  int fd = -1;
  std::thread::id thread;
  int depth = 0;
};

// Locks held by this process, by directory identity.
std::mutex& RegistryMutex() {
  static std::mutex mu;
  return mu;
}
std::map<std::string, Holder>& Registry() {
  static auto* holders = new std::map<std::string, Holder>;  // never destroyed
  return *holders;
}

bool AllOf(std::string_view s, bool (*pred)(char)) {
  for (char c : s) {
    if (!pred(c)) return false;
  }
  return !s.empty();
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f'); }

// True if `name` ends with `marker` followed by a run of characters all
// matching `pred` (of exactly `length` characters when length > 0).
bool EndsWithMarkerAnd(std::string_view name, std::string_view marker, bool (*pred)(char),
                       size_t length) {
  const size_t at = name.rfind(marker);
  if (at == std::string_view::npos || at == 0) return false;
  const std::string_view rest = name.substr(at + marker.size());
  return AllOf(rest, pred) && (length == 0 || rest.size() == length);
}

// Removes the orphaned temporary files of killed saves in `dir`.
void RemoveOrphanedTemporaries(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;  // best effort: the save itself reports real errors
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (IsTemporaryFileName(name)) RemoveFileNoThrow((dir + "/").append(name));
  }
  ::closedir(d);
}

}  // namespace

bool IsTemporaryFileName(const std::string& name) {
  return EndsWithMarkerAnd(name, ".tempstate", IsDigit, 0) ||  // BundleWriter
         EndsWithMarkerAnd(name, ".tmp", IsHex, 32) ||         // WriteCheckpointState
         EndsWithMarkerAnd(name, ".meta.tmp", IsDigit, 0);     // WriteMetaGraph
}

DirectoryLock::DirectoryLock(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) ThrowOsError(errno, "Cannot lock directory", dir);
  key_ = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);

  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto it = Registry().find(key_);
  if (it != Registry().end() && it->second.pid != ::getpid()) {
    ::close(it->second.fd);  // the parent's lock stays: its descriptor is still open
    Registry().erase(it);
    it = Registry().end();
  }
  if (it != Registry().end()) {
    if (it->second.thread != std::this_thread::get_id()) {
      throw FailedPreconditionError(
          StrCat("Cannot save into ", dir,
                 ": another thread of this process is saving a checkpoint there (two writers, "
                 "e.g. two CheckpointManagers, on one directory would corrupt each other's "
                 "checkpoints)"));
    }
    ++it->second.depth;
    return;
  }
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) ThrowOsError(errno, "Cannot lock directory", dir);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      throw FailedPreconditionError(
          StrCat("Cannot save into ", dir,
                 ": another process is saving a checkpoint there (it holds the directory's "
                 "lock); two writers on one directory would corrupt each other's checkpoints"));
    }
    ThrowOsError(err, "Cannot lock directory", dir);
  }
  Registry()[key_] =
      Holder{.pid = ::getpid(), .fd = fd, .thread = std::this_thread::get_id(), .depth = 1};
  RemoveOrphanedTemporaries(dir);
}

DirectoryLock::~DirectoryLock() {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto it = Registry().find(key_);
  if (it == Registry().end() || it->second.pid != ::getpid()) return;
  if (--it->second.depth == 0) {
    ::close(it->second.fd);  // releases the flock
    Registry().erase(it);
  }
}

// The claim is a shared lock on one byte, at kOwnerBase + the owner's pid;
// a newcomer takes its own byte first, then asks whether an exclusive lock
// of the whole range would conflict: only another claim can. Two claims made
// at the same instant may both be refused, never both granted.
constexpr off_t kOwnerBase = 1;

DirectoryOwner::DirectoryOwner(const std::string& dir) {
  fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) ThrowOsError(errno, "Cannot open checkpoint directory", dir);
  struct flock mine = {};
  mine.l_type = F_RDLCK;
  mine.l_whence = SEEK_SET;
  mine.l_start = kOwnerBase + ::getpid();
  mine.l_len = 1;
  struct flock probe = {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  probe.l_start = 0;
  probe.l_len = 0;  // to the end
  if (::fcntl(fd_, F_OFD_SETLK, &mine) != 0 || ::fcntl(fd_, F_OFD_GETLK, &probe) != 0) {
    const int err = errno;
    ::close(fd_);
    ThrowOsError(err, "Cannot lock checkpoint directory", dir);
  }
  if (probe.l_type == F_UNLCK) return;
  ::close(fd_);  // drops our byte
  const long long owner = static_cast<long long>(probe.l_start - kOwnerBase);
  throw FailedPreconditionError(StrCat(
      "Cannot save into ", dir, ": ",
      owner == ::getpid() ? "another CheckpointManager of this process"
                          : "a CheckpointManager of another process",
      " (pid ", owner,
      ") manages that directory; two managers on one directory would overwrite and delete each "
      "other's checkpoints. Use one manager per directory, or destroy the other one first"));
}

DirectoryOwner::~DirectoryOwner() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace eager::internal
