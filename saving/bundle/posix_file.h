#pragma once

// The few POSIX file operations saving/ needs, throwing eager's error kinds;
// for every saving/ folder (bundle, checkpoint, saver, summary, tools); not
// installed (cmake/package.cmake): not user API.
// Every message names the path and the OS error. Error kinds: a missing file
// or directory is NotFoundError, a file-size limit (EFBIG) OutOfRangeError, a
// full disk or quota (ENOSPC, EDQUOT) ResourceExhaustedError, a
// symlink loop or over-long path (ELOOP, ENAMETOOLONG) or a path containing a
// NUL byte InvalidArgumentError, anything else the OS refuses
// FailedPreconditionError. Nothing here throws std::filesystem_error.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace eager::internal {

// Throws the error kind for `err` (an errno value): "<what> <path>: <strerror>".
[[noreturn]] void ThrowOsError(int err, std::string_view what, const std::string& path);

// A file created new (it must not exist) and written front to back. Small
// appends are gathered in a buffer; appends larger than the buffer go
// straight to write(2) from the caller's memory. Not thread-safe.
class WritableFile {
 public:
  static std::unique_ptr<WritableFile> Create(const std::string& path, size_t buffer_size);
  ~WritableFile();  // closes the descriptor if Close() was not called; never throws
  WritableFile(const WritableFile&) = delete;
  WritableFile& operator=(const WritableFile&) = delete;

  void Append(const void* data, size_t n);
  void Flush();
  // Flush + fsync: the bytes are on disk when this returns.
  void Sync();
  void Close();

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }  // bytes appended so far

 private:
  WritableFile(std::string path, int fd, size_t buffer_size);
  void WriteAll(const char* data, size_t n);

  std::string path_;
  int fd_;
  std::unique_ptr<char[]> buffer_;
  size_t capacity_;
  size_t used_ = 0;
  uint64_t size_ = 0;
  static constexpr uint64_t kWritebackBytes = 8 << 20;
  uint64_t written_ = 0;            // bytes handed to write(2)
  uint64_t writeback_started_ = 0;  // bytes whose writeback has been started
};

// A file read with pread(2) at arbitrary offsets; its size is taken once at
// Open. Read methods are const and may be called from several threads.
class RandomAccessFile {
 public:
  // Throws NotFoundError when `path` does not exist, InvalidArgumentError
  // when it is not a regular file (checked without blocking on a FIFO).
  static std::unique_ptr<RandomAccessFile> Open(const std::string& path);
  ~RandomAccessFile();
  RandomAccessFile(const RandomAccessFile&) = delete;
  RandomAccessFile& operator=(const RandomAccessFile&) = delete;

  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // The open descriptor (owned here), for a child process that reads the
  // same file through /proc/self/fd/N.
  int fd() const { return fd_; }
  // Reads up to n bytes at `offset`; returns how many were read (fewer only
  // at the end of the file).
  size_t ReadAt(uint64_t offset, size_t n, void* dst) const;

 private:
  RandomAccessFile(std::string path, int fd, uint64_t size);

  std::string path_;
  int fd_;
  uint64_t size_;
};

// False for ENOENT/ENOTDIR; any other stat failure (a symlink loop, a path
// too long, EACCES) throws as above.
bool FileExists(const std::string& path);
// The whole file. Throws NotFoundError when it does not exist,
// ResourceExhaustedError when it is larger than `max_size` bytes.
std::string ReadFileToString(const std::string& path, uint64_t max_size);
void RenameFile(const std::string& from, const std::string& to);
// Removes `path` if it exists; never throws (used on error paths). Returns
// whether a file was removed.
bool RemoveFileNoThrow(const std::string& path) noexcept;
// Removes the entry `name` (a plain name: no '/', not "." or "..") of the
// directory open as `dir_fd`, with unlinkat(2): nothing in `name` is resolved
// but the name itself, and a symlink is removed, never followed. `shown` is
// the path the test hook and messages see. Never throws; returns whether an
// entry was removed.
bool RemoveFileAtNoThrow(int dir_fd, const std::string& name, const std::string& shown) noexcept;
// fsync of a directory, so that renames in it survive a crash.
void SyncDirectory(const std::string& dir);
// fsync of a file another library wrote (HDF5, libzip), before the rename
// that publishes it.
void SyncFile(const std::string& path);
// Creates `dir` and its parents if missing.
void CreateDirectories(const std::string& dir);
// "a/b" for "a/b/c", "." for "c", "/" for "/c".
std::string DirName(const std::string& path);
// A random value for temporary file names; processes forked from one parent
// get different sequences.
uint64_t RandomUint64();

// Temporaries that name their writer: `stem` + "<pid>-<random hex>" (a file
// or directory a writer renames into place when done). A killed writer's
// temporary stays behind; RemoveTemporariesOfDeadProcesses(dir, stem) removes
// those in `dir` whose pid is no live process (recursively for directories),
// leaving any of a live writer, this process's included. Best effort, never
// throws: what cannot be removed is left for the next writer.
std::string TemporaryNameWithPid(const std::string& stem);
void RemoveTemporariesOfDeadProcesses(const std::string& dir, const std::string& stem) noexcept;

// Test seam for crash and I/O-error tests (tests/saving/bundle/kill_test.cc,
// io_error_test.cc): when set, `hook` is called just before every system call
// that changes files here: creating a file, each write(2), fsync, close,
// rename, unlink, a directory's fsync or creation. `step` says which. It
// returns 0 to let the call run, or an errno value (EIO, ENOSPC) to make the
// call fail with that error without running it, as if the OS had refused.
// A kill test's hook counts the calls and SIGKILLs the process at the Nth;
// an I/O-error test's returns EIO at the Nth. nullptr (the default) turns it
// off. Set it before any thread writes.
using FileStepHook = int (*)(std::string_view step, const std::string& path);
void SetFileStepHook(FileStepHook hook);

}  // namespace eager::internal
