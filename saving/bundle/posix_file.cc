#include "saving/bundle/posix_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <random>
#include <system_error>
#include <vector>

#include "runtime/errors.h"

namespace eager::internal {
namespace {

void CheckPathHasNoNul(const std::string& path) {
  if (path.find('\0') != std::string::npos) {
    std::string shown = path;
    for (char& c : shown) c = c == '\0' ? '?' : c;
    throw InvalidArgumentError(StrCat(
        "File path \"", shown, "\" contains a NUL byte (shown as '?'); no file has that name"));
  }
}

// Atomic: set by a test's thread, read by background save threads.
std::atomic<FileStepHook> file_step_hook = nullptr;

// Runs the test hook before a file-changing call: false, with errno set to
// the injected error, when the call must fail instead of running.
bool Step(std::string_view step, const std::string& path) {
  const FileStepHook hook = file_step_hook.load();
  if (hook == nullptr) return true;
  const int err = hook(step, path);
  if (err == 0) return true;
  errno = err;
  return false;
}

}  // namespace

void SetFileStepHook(FileStepHook hook) { file_step_hook = hook; }

void ThrowOsError(int err, std::string_view what, const std::string& path) {
  const std::string message = StrCat(what, " ", path, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      throw NotFoundError(message);
    case EFBIG:
      throw OutOfRangeError(message);
    case ENOSPC:  // a full disk or quota: TensorFlow's RESOURCE_EXHAUSTED too
    case EDQUOT:
      throw ResourceExhaustedError(message);
    case ELOOP:         // a symlink loop
    case ENAMETOOLONG:  // a path or component beyond PATH_MAX / NAME_MAX
      throw InvalidArgumentError(message);
    default:
      throw FailedPreconditionError(message);
  }
}

WritableFile::WritableFile(std::string path, int fd, size_t buffer_size)
    : path_(std::move(path)), fd_(fd), buffer_(new char[buffer_size]), capacity_(buffer_size) {}

std::unique_ptr<WritableFile> WritableFile::Create(const std::string& path, size_t buffer_size) {
  CheckPathHasNoNul(path);
  const int fd = Step("create", path)
                     ? ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)
                     : -1;
  if (fd < 0) ThrowOsError(errno, "Cannot create file", path);
  return std::unique_ptr<WritableFile>(
      new WritableFile(path, fd, buffer_size == 0 ? 1 : buffer_size));
}

WritableFile::~WritableFile() {
  if (fd_ >= 0) ::close(fd_);
}

void WritableFile::WriteAll(const char* data, size_t n) {
  written_ += n;
  while (n > 0) {
    // Linux writes at most ~2 GiB per call; larger tensors take several.
    const ssize_t written = Step("write", path_) ? ::write(fd_, data, n) : -1;
    if (written < 0) {
      if (errno == EINTR) continue;
      ThrowOsError(errno, "Cannot write to", path_);
    }
    data += written;
    n -= static_cast<size_t>(written);
  }
  // Start writeback of what is complete so far, without waiting for it: the
  // disk works while we produce the next bytes, and the final fsync has little
  // left to do (RocksDB's bytes_per_sync). Best effort: errors surface at fsync.
  if (written_ - writeback_started_ >= kWritebackBytes) {
#if defined(__linux__)
    ::sync_file_range(fd_, static_cast<off_t>(writeback_started_),
                      static_cast<off_t>(written_ - writeback_started_), SYNC_FILE_RANGE_WRITE);
#endif
    writeback_started_ = written_;
  }
}

void WritableFile::Append(const void* data, size_t n) {
  EAGER_INTERNAL_CHECK(fd_ >= 0);
  const char* p = static_cast<const char*>(data);
  size_ += n;
  if (n >= capacity_) {
    Flush();
    WriteAll(p, n);  // big pieces go straight from the caller's buffer
    return;
  }
  if (used_ + n > capacity_) Flush();
  std::memcpy(buffer_.get() + used_, p, n);
  used_ += n;
}

void WritableFile::Flush() {
  if (used_ > 0) {
    const size_t n = used_;
    used_ = 0;
    WriteAll(buffer_.get(), n);
  }
}

void WritableFile::Sync() {
  Flush();
  if (!Step("fsync", path_) || ::fsync(fd_) != 0) ThrowOsError(errno, "Cannot fsync", path_);
}

void WritableFile::Close() {
  if (fd_ < 0) return;
  Flush();
  const int fd = fd_;
  fd_ = -1;
  const bool run = Step("close", path_);
  const int err = errno;
  if (::close(fd) != 0) ThrowOsError(errno, "Cannot close", path_);  // closed either way
  if (!run) ThrowOsError(err, "Cannot close", path_);
}

RandomAccessFile::RandomAccessFile(std::string path, int fd, uint64_t size)
    : path_(std::move(path)), fd_(fd), size_(size) {}

std::unique_ptr<RandomAccessFile> RandomAccessFile::Open(const std::string& path) {
  CheckPathHasNoNul(path);
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer
  // forever; its type is refused below. It changes nothing for regular files.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) ThrowOsError(errno, "Cannot open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    ThrowOsError(err, "Cannot stat", path);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InvalidArgumentError(StrCat("Cannot open ", path,
                                      ": not a regular file (a directory, FIFO, socket or "
                                      "device cannot be a checkpoint file)"));
  }
  return std::unique_ptr<RandomAccessFile>(
      new RandomAccessFile(path, fd, static_cast<uint64_t>(st.st_size)));
}

RandomAccessFile::~RandomAccessFile() { ::close(fd_); }

size_t RandomAccessFile::ReadAt(uint64_t offset, size_t n, void* dst) const {
  char* out = static_cast<char*>(dst);
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      ThrowOsError(errno, "Cannot read", path_);
    }
    if (got == 0) break;  // end of file
    done += static_cast<size_t>(got);
  }
  return done;
}

bool FileExists(const std::string& path) {
  CheckPathHasNoNul(path);
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return true;
  if (errno == ENOENT || errno == ENOTDIR) return false;
  ThrowOsError(errno, "Cannot stat", path);
}

std::string ReadFileToString(const std::string& path, uint64_t max_size) {
  auto file = RandomAccessFile::Open(path);
  if (file->size() > max_size) {
    throw ResourceExhaustedError(StrCat("File ", path, " has ", file->size(),
                                        " bytes, more than the ", max_size,
                                        " this reader accepts for it"));
  }
  std::string contents(file->size(), '\0');
  contents.resize(file->ReadAt(0, contents.size(), contents.data()));
  return contents;
}

void RenameFile(const std::string& from, const std::string& to) {
  if (!Step("rename", to) || ::rename(from.c_str(), to.c_str()) != 0) {
    ThrowOsError(errno, StrCat("Cannot rename ", from, " to"), to);
  }
}

bool RemoveFileNoThrow(const std::string& path) noexcept {
  return Step("unlink", path) && ::unlink(path.c_str()) == 0;
}

bool RemoveFileAtNoThrow(int dir_fd, const std::string& name, const std::string& shown) noexcept {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    return false;
  }
  return Step("unlink", shown) && ::unlinkat(dir_fd, name.c_str(), 0) == 0;
}

namespace {

// open + fsync + close of `path`, a file or (O_DIRECTORY) a directory; `what`
// names it in the step and the messages.
void SyncPath(const std::string& path, int flags, std::string_view what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | flags);
  if (fd < 0) ThrowOsError(errno, StrCat("Cannot open ", what), path);
  const int rc = Step(StrCat("fsync ", what), path) ? ::fsync(fd) : -1;
  const int err = errno;
  ::close(fd);
  if (rc != 0) ThrowOsError(err, StrCat("Cannot fsync ", what), path);
}

}  // namespace

void SyncDirectory(const std::string& dir) { SyncPath(dir, O_DIRECTORY, "directory"); }

void SyncFile(const std::string& path) { SyncPath(path, 0, "file"); }

void CreateDirectories(const std::string& dir) {
  if (!Step("create directories", dir)) ThrowOsError(errno, "Cannot create directory", dir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) ThrowOsError(ec.value(), "Cannot create directory", dir);
}

std::string DirName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

uint64_t RandomUint64() {
  // Reseeded in a forked child: it inherits the parent's engine state, and
  // two children would otherwise pick the same temporary names.
  static thread_local pid_t seeded_for = 0;
  static thread_local std::mt19937_64 engine;
  if (seeded_for != ::getpid()) {
    seeded_for = ::getpid();
    std::random_device device;
    engine.seed((static_cast<uint64_t>(device()) << 32) ^ device() ^
                static_cast<uint64_t>(seeded_for));
  }
  return engine();
}

std::string TemporaryNameWithPid(const std::string& stem) {
  char hex[17];
  const auto end = std::to_chars(hex, hex + sizeof(hex), RandomUint64(), 16).ptr;
  return StrCat(stem, ::getpid(), "-", std::string_view(hex, static_cast<size_t>(end - hex)));
}

void RemoveTemporariesOfDeadProcesses(const std::string& dir, const std::string& stem) noexcept {
  try {
    std::error_code error;
    std::vector<std::filesystem::path> dead;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
      const std::string name = entry.path().filename().string();
      if (name.size() <= stem.size() || name.compare(0, stem.size(), stem) != 0) continue;
      pid_t pid = 0;
      const auto [end, ec] =
          std::from_chars(name.data() + stem.size(), name.data() + name.size(), pid);
      if (ec != std::errc() || pid <= 0 || end == name.data() + name.size() || *end != '-' ||
          pid == ::getpid()) {
        continue;
      }
      if (::kill(pid, 0) != 0 && errno == ESRCH) dead.push_back(entry.path());
    }
    for (const auto& path : dead) {
      if (Step("unlink", path.string())) std::filesystem::remove_all(path, error);
    }
  } catch (...) {  // std::bad_alloc: best effort
  }
}

}  // namespace eager::internal
