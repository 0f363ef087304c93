#include "saving/keras/internal/h5_file.h"

#include <fcntl.h>
#include <hdf5.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string_view>
#include <utility>

#include "runtime/errors.h"
#include "runtime/sanitizers.h"
#include "runtime/tensor_access.h"
#include "saving/bundle/posix_file.h"
#include "saving/keras/internal/reader_sandbox.h"

namespace eager::keras_internal {
namespace {

using internal::RandomAccessFile;

constexpr char kSignature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
constexpr int kMaxRank = 8;
constexpr uint32_t kMaxPath = 4096;
constexpr uint64_t kMaxObjects = 1'000'000;

// Error kinds the child reports, raised again in the parent.
enum class Kind : uint8_t { kDataLoss = 0, kInvalidArgument = 1, kResourceExhausted = 2 };

struct ChildError {
  Kind kind;
  std::string message;
};

// ---- the child: libhdf5 on the untrusted file, results over a pipe ----

class PipeOut {
 public:
  explicit PipeOut(int fd) : fd_(fd) {}
  void Put(const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) ::_exit(3);  // the parent went away
      p += w;
      n -= static_cast<size_t>(w);
    }
  }
  void PutU8(uint8_t v) { Put(&v, 1); }
  void PutU32(uint32_t v) { Put(&v, 4); }
  void PutU64(uint64_t v) { Put(&v, 8); }
  void PutString(const std::string& s) {
    PutU32(static_cast<uint32_t>(s.size()));
    Put(s.data(), s.size());
  }

 private:
  int fd_;
};

// The deepest message of libhdf5's error stack, or "".
std::string Hdf5Message() {
  std::string message;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* err, void* data) -> herr_t {
        auto* out = static_cast<std::string*>(data);
        if (err->desc != nullptr) *out = err->desc;
        return 0;
      },
      &message);
  return message;
}

class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

struct VisitState {
  PipeOut* out;
  uint64_t file_size;
  uint64_t objects = 0;
  uint64_t total_bytes = 0;
  std::optional<ChildError> error;
  uint64_t memory_budget = 0;  // the child's RLIMIT_AS budget; 0 if none
};

bool TypeIs(hid_t type, hid_t a, hid_t b) { return H5Tequal(type, a) > 0 || H5Tequal(type, b) > 0; }

// Checks and sends one dataset; sets state->error and returns false when it
// is not what Keras writes.
bool SendDataset(hid_t file, const char* name, VisitState* state) {
  auto fail = [&](Kind kind, std::string message) {
    state->error = ChildError{kind, std::move(message)};
    return false;
  };
  Handle ds(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
  if (!ds.ok())
    return fail(Kind::kDataLoss, StrCat("dataset '", name, "' cannot be opened: ", Hdf5Message()));
  Handle type(H5Dget_type(ds.get()), H5Tclose);
  if (!type.ok())
    return fail(Kind::kDataLoss, StrCat("dataset '", name, "' has an unreadable datatype"));
  DType dtype;
  hid_t mem_type;
  if (TypeIs(type.get(), H5T_IEEE_F32LE, H5T_IEEE_F32BE)) {
    dtype = DType::kFloat32, mem_type = H5T_NATIVE_FLOAT;
  } else if (TypeIs(type.get(), H5T_IEEE_F64LE, H5T_IEEE_F64BE)) {
    dtype = DType::kFloat64, mem_type = H5T_NATIVE_DOUBLE;
  } else if (TypeIs(type.get(), H5T_STD_I64LE, H5T_STD_I64BE)) {
    dtype = DType::kInt64, mem_type = H5T_NATIVE_INT64;
  } else if (TypeIs(type.get(), H5T_STD_I32LE, H5T_STD_I32BE)) {
    dtype = DType::kInt32, mem_type = H5T_NATIVE_INT32;
  } else {
    return fail(Kind::kInvalidArgument,
                StrCat("dataset '", name, "' has HDF5 type class ", H5Tget_class(type.get()),
                       " of ", H5Tget_size(type.get()),
                       " bytes; expected IEEE float32/float64 or int32/int64, as Keras writes"));
  }
  Handle space(H5Dget_space(ds.get()), H5Sclose);
  if (!space.ok())
    return fail(Kind::kDataLoss, StrCat("dataset '", name, "' has an unreadable dataspace"));
  const H5S_class_t space_class = H5Sget_simple_extent_type(space.get());
  if (space_class != H5S_SIMPLE && space_class != H5S_SCALAR) {
    return fail(Kind::kInvalidArgument,
                StrCat("dataset '", name, "' has a null dataspace; expected an array"));
  }
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0 || rank > kMaxRank) {
    return fail(Kind::kInvalidArgument,
                StrCat("dataset '", name, "' has rank ", rank, "; at most ", kMaxRank));
  }
  hsize_t dims[kMaxRank] = {};
  if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims, nullptr) != rank) {
    return fail(Kind::kDataLoss, StrCat("dataset '", name, "' has unreadable dimensions"));
  }
  const uint64_t element_size = static_cast<uint64_t>(DTypeSize(dtype));
  uint64_t nbytes = element_size;
  std::vector<int64_t> shape_dims;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] > static_cast<hsize_t>(std::numeric_limits<int64_t>::max()) ||
        (dims[i] != 0 && nbytes > state->file_size / dims[i])) {
      return fail(Kind::kInvalidArgument,
                  StrCat("dataset '", name, "' declares dimension ", i, " = ", dims[i],
                         ": more bytes than the whole file (", state->file_size, ") holds"));
    }
    nbytes *= dims[i];
    shape_dims.push_back(static_cast<int64_t>(dims[i]));
  }
  if (nbytes > state->file_size || state->total_bytes + nbytes > state->file_size) {
    return fail(Kind::kInvalidArgument,
                StrCat("dataset '", name, "' declares ", nbytes, " bytes, more than the file (",
                       state->file_size, " bytes) holds"));
  }
  Handle dcpl(H5Dget_create_plist(ds.get()), H5Pclose);
  if (!dcpl.ok())
    return fail(Kind::kDataLoss, StrCat("dataset '", name, "' has no creation properties"));
  const H5D_layout_t layout = H5Pget_layout(dcpl.get());
  if ((layout != H5D_CONTIGUOUS && layout != H5D_COMPACT) || H5Pget_nfilters(dcpl.get()) != 0) {
    return fail(Kind::kInvalidArgument,
                StrCat("dataset '", name, "' is chunked, virtual or filtered (layout ", layout,
                       "); Keras writes contiguous uncompressed datasets"));
  }
  if (H5Pget_external_count(dcpl.get()) != 0) {
    return fail(Kind::kInvalidArgument,
                StrCat("dataset '", name, "' keeps its data in external files; Keras writes none"));
  }
  PipeOut& out = *state->out;
  auto header = [&](char tag) {
    out.PutU8(static_cast<uint8_t>(tag));
    out.PutString(name);
    out.PutU8(static_cast<uint8_t>(dtype));
    out.PutU8(static_cast<uint8_t>(rank));
    for (int64_t d : shape_dims) out.PutU64(static_cast<uint64_t>(d));
    out.PutU64(nbytes);
  };
  if (nbytes > 0 && layout == H5D_CONTIGUOUS) {
    const haddr_t offset = H5Dget_offset(ds.get());
    if (offset == HADDR_UNDEF || H5Dget_storage_size(ds.get()) != nbytes ||
        offset > state->file_size || nbytes > state->file_size - offset) {
      return fail(Kind::kDataLoss, StrCat("dataset '", name, "' declares ", nbytes,
                                          " bytes that are not stored inside the file (",
                                          state->file_size, " bytes)"));
    }
    // Stored as this machine keeps them in memory (Keras writes native
    // little-endian): the parent reads the bytes from the file itself, one
    // copy instead of three (libhdf5's, the pipe's two), and the parent
    // checks the range against the file's size. Other byte orders are
    // converted by libhdf5 and sent below.
    if (H5Tequal(type.get(), mem_type) > 0) {
      state->total_bytes += nbytes;
      header('O');
      out.PutU64(offset);
      return true;
    }
  }
  std::vector<std::byte> bytes;
  try {
    bytes.resize(nbytes);
  } catch (const std::bad_alloc&) {  // over the child's budget; not through libhdf5's C frames
    return fail(Kind::kResourceExhausted,
                StrCat("dataset '", name, "' needs ", nbytes,
                       " bytes, more than is left of the reader's memory budget of ",
                       state->memory_budget, " bytes"));
  }
  if (nbytes > 0 && H5Dread(ds.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) < 0) {
    return fail(Kind::kDataLoss, StrCat("dataset '", name, "' cannot be read: ", Hdf5Message()));
  }
  state->total_bytes += nbytes;
  header('D');
  out.Put(bytes.data(), bytes.size());
  return true;
}

// The attributes legacy Keras orders its weights by (h5_file.h).
constexpr const char* kStringListAttributes[] = {"layer_names", "weight_names"};

// Sends `object`'s string-list attributes named in kStringListAttributes
// ('A' records); sets state->error and returns false on one that is not a
// string list (h5py writes an empty list as a float64 array: taken as empty).
bool SendStringLists(hid_t object, const std::string& name, VisitState* state) {
  auto fail = [&](Kind kind, std::string message) {
    state->error = ChildError{kind, std::move(message)};
    return false;
  };
  for (const char* attr : kStringListAttributes) {
    if (H5Aexists(object, attr) <= 0) continue;
    const std::string where = StrCat("attribute '", attr, "' of '", name.empty() ? "/" : name, "'");
    Handle a(H5Aopen(object, attr, H5P_DEFAULT), H5Aclose);
    if (!a.ok()) return fail(Kind::kDataLoss, StrCat(where, " cannot be opened"));
    Handle type(H5Aget_type(a.get()), H5Tclose);
    Handle space(H5Aget_space(a.get()), H5Sclose);
    if (!type.ok() || !space.ok()) return fail(Kind::kDataLoss, StrCat(where, " is unreadable"));
    const hssize_t points = H5Sget_simple_extent_npoints(space.get());
    if (points < 0 || static_cast<uint64_t>(points) > kMaxObjects) {
      return fail(Kind::kInvalidArgument, StrCat(where, " has ", points, " elements"));
    }
    const auto n = static_cast<size_t>(points);
    std::vector<std::string> values;
    if (H5Tget_class(type.get()) != H5T_STRING) {
      if (n != 0) return fail(Kind::kInvalidArgument, StrCat(where, " is not a list of strings"));
    } else if (H5Tis_variable_str(type.get()) > 0) {
      Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
      if (!mem.ok() || H5Tset_size(mem.get(), H5T_VARIABLE) < 0 ||
          H5Tset_cset(mem.get(), H5Tget_cset(type.get())) < 0) {
        return fail(Kind::kDataLoss, StrCat(where, ": no memory type"));
      }
      std::vector<char*> pointers(n, nullptr);
      if (n > 0 && H5Aread(a.get(), mem.get(), pointers.data()) < 0) {
        return fail(Kind::kDataLoss, StrCat(where, " cannot be read: ", Hdf5Message()));
      }
      for (char* p : pointers)
        values.emplace_back(p == nullptr ? "" : p, p == nullptr ? 0 : ::strnlen(p, kMaxPath + 1));
      if (n > 0) H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, pointers.data());
    } else {
      const size_t size = H5Tget_size(type.get());
      if (size == 0 || size > kMaxPath || n * size > state->file_size) {
        return fail(Kind::kInvalidArgument, StrCat(where, " declares ", n, " strings of ", size,
                                                   " bytes, more than the file holds"));
      }
      std::vector<char> bytes(n * size);
      if (n > 0 && H5Aread(a.get(), type.get(), bytes.data()) < 0) {
        return fail(Kind::kDataLoss, StrCat(where, " cannot be read: ", Hdf5Message()));
      }
      for (size_t i = 0; i < n; ++i) {
        const char* p = bytes.data() + i * size;
        values.emplace_back(p, ::strnlen(p, size));
      }
    }
    uint64_t bytes = 0;
    for (const std::string& v : values) {
      if (v.size() > kMaxPath)
        return fail(Kind::kInvalidArgument, StrCat(where, ": a name over ", kMaxPath, " bytes"));
      bytes += v.size();
    }
    state->total_bytes += bytes;
    if (state->total_bytes > state->file_size) {
      return fail(Kind::kInvalidArgument, StrCat(where, ": more strings than the file holds"));
    }
    PipeOut& out = *state->out;
    out.PutU8('A');
    out.PutString(name);
    out.PutString(attr);
    out.PutU32(static_cast<uint32_t>(values.size()));
    for (const std::string& v : values) out.PutString(v);
  }
  return true;
}

herr_t VisitLink(hid_t file, const char* name, const H5L_info_t* info, void* data) {
  auto* state = static_cast<VisitState*>(data);
  if (++state->objects > kMaxObjects) {
    state->error =
        ChildError{Kind::kResourceExhausted, StrCat("more than ", kMaxObjects, " objects")};
    return -1;
  }
  if (std::strlen(name) > kMaxPath) {
    state->error =
        ChildError{Kind::kInvalidArgument, StrCat("an object path longer than ", kMaxPath)};
    return -1;
  }
  if (info->type != H5L_TYPE_HARD) {
    state->error = ChildError{Kind::kInvalidArgument,
                              StrCat("'", name, "' is a soft or external link; Keras writes none")};
    return -1;
  }
  Handle object(H5Oopen(file, name, H5P_DEFAULT), H5Oclose);
  if (!object.ok()) {
    state->error = ChildError{Kind::kDataLoss,
                              StrCat("object '", name, "' cannot be opened: ", Hdf5Message())};
    return -1;
  }
  const H5I_type_t type = H5Iget_type(object.get());
  if (type == H5I_GROUP) {
    state->out->PutU8('G');
    state->out->PutString(name);
    return SendStringLists(object.get(), name, state) ? 0 : -1;
  }
  if (type == H5I_DATASET) return SendDataset(file, name, state) ? 0 : -1;
  return 0;  // a committed datatype: nothing Keras reads
}

// Whether libhdf5's current error stack says an allocation failed.
bool Hdf5OutOfMemory() {
  bool out_of_memory = false;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* err, void* data) -> herr_t {
        if (err->maj_num == H5E_RESOURCE || err->min_num == H5E_CANTALLOC ||
            err->min_num == H5E_NOSPACE) {
          *static_cast<bool*>(data) = true;
        }
        return 0;
      },
      &out_of_memory);
  return out_of_memory;
}

// The child's virtual memory size now (what it inherited), from
// /proc/self/statm; 0 when unknown.
uint64_t InheritedAddressSpace() {
  std::FILE* f = std::fopen("/proc/self/statm", "re");
  if (f == nullptr) return 0;
  unsigned long long pages = 0;
  const bool ok = std::fscanf(f, "%llu", &pages) == 1;
  std::fclose(f);
  const long page = ::sysconf(_SC_PAGESIZE);
  return ok && page > 0 ? pages * static_cast<uint64_t>(page) : 0;
}

// Bounds the child's address space to what it has plus `budget` bytes.
// Returns the limit set, or 0 when none could be set.
uint64_t LimitChildMemory(uint64_t budget) {
  if (kSanitizerShadowMemory) return 0;
  const uint64_t inherited = InheritedAddressSpace();
  if (inherited == 0) return 0;
  const uint64_t limit = inherited + budget < inherited ? RLIM_INFINITY : inherited + budget;
  rlimit rl{};
  if (::getrlimit(RLIMIT_AS, &rl) != 0) return 0;
  if (rl.rlim_max != RLIM_INFINITY && limit > rl.rlim_max) return 0;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur <= limit) return 0;  // already tighter
  rl.rlim_cur = limit;
  return ::setrlimit(RLIMIT_AS, &rl) == 0 ? budget : 0;
}

// The child is a sandbox for libhdf5: its crash must reach the parent as an
// exit status, not run handlers the caller installed for its own crashes (a
// crash reporter, a fuzzer's or sanitizer's report of its own process).
void DefaultCrashSignals() {
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS, SIGXCPU})
    ::signal(sig, SIG_DFL);
}

// Bounds the child's CPU time: at `seconds` the kernel sends SIGXCPU (which
// ends it; the parent names the budget), a second later SIGKILL. No core
// file: a looping libhdf5 is not worth one.
void LimitChildCpu(int seconds) {
  rlimit core{0, 0};
  ::setrlimit(RLIMIT_CORE, &core);
  rlimit rl{};
  if (::getrlimit(RLIMIT_CPU, &rl) != 0) return;
  const auto soft = static_cast<rlim_t>(seconds);
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur <= soft) return;  // already tighter
  if (rl.rlim_max != RLIM_INFINITY && soft + 1 > rl.rlim_max) return;
  rl.rlim_cur = soft;
  rl.rlim_max = soft + 1;
  ::setrlimit(RLIMIT_CPU, &rl);
}

// The default CPU budget: 2 s, plus 1 s per 32 MiB.
int CpuBudget(const H5ReadLimits& limits, uint64_t file_size) {
  if (limits.max_reader_cpu_seconds > 0) return limits.max_reader_cpu_seconds;
  return 2 + static_cast<int>(std::min<uint64_t>(file_size >> 25, 1 << 20));
}

[[noreturn]] void RunChild(const std::string& path, uint64_t file_size, uint64_t memory_budget,
                           int cpu_seconds, int fd) {
  DefaultCrashSignals();
  LimitChildCpu(cpu_seconds);
  const uint64_t limited = LimitChildMemory(memory_budget);
  PipeOut out(fd);
  auto send_error = [&](Kind kind, const std::string& message) {
    std::string text = message;
    if (kind == Kind::kDataLoss && Hdf5OutOfMemory()) {
      kind = Kind::kResourceExhausted;
      text += limited > 0 ? StrCat(
                                " (libhdf5 could not allocate memory: the file's headers ask "
                                "for more than the reader's budget of ",
                                limited, " bytes)")
                          : std::string(" (libhdf5 could not allocate memory)");
    }
    out.PutU8('E');
    out.PutU8(static_cast<uint8_t>(kind));
    out.PutString(text);
    ::_exit(0);
  };
  try {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    if (!file.ok()) send_error(Kind::kDataLoss, StrCat("libhdf5 cannot open it: ", Hdf5Message()));
    // From here on libhdf5 parses the file's structures: a bug it has on a
    // crafted file must not reach the user's files (reader_sandbox.h).
    // Sanitizers need system calls of their own to report; they go without.
    if (!kSanitizerShadowMemory) ConfineToReading(fd);
    VisitState state{&out, file_size, 0, 0, std::nullopt, limited};
    if (!SendStringLists(file.get(), "", &state))
      send_error(state.error->kind, state.error->message);
    const herr_t status = H5Lvisit(file.get(), H5_INDEX_NAME, H5_ITER_INC, VisitLink, &state);
    if (state.error) send_error(state.error->kind, state.error->message);
    if (status < 0)
      send_error(Kind::kDataLoss, StrCat("libhdf5 cannot list its objects: ", Hdf5Message()));
    out.PutU8('Z');
  } catch (const std::bad_alloc&) {
    send_error(Kind::kResourceExhausted,
               StrCat("the reader ran out of memory (its budget: ", limited, " bytes)"));
  } catch (const std::exception& e) {
    send_error(Kind::kDataLoss, e.what());
  }
  ::_exit(0);
}

// ---- the parent: a bounded parser of the child's stream ----

class PipeIn {
 public:
  PipeIn(int fd, pid_t child, std::string path, int timeout_seconds)
      : fd_(fd),
        child_(child),
        path_(std::move(path)),
        deadline_(std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds)),
        timeout_seconds_(timeout_seconds) {}

  // False at the end of the stream (the child exited or crashed).
  bool Get(void* data, size_t n) {
    char* p = static_cast<char*>(data);
    while (n > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline_ - std::chrono::steady_clock::now())
                            .count();
      if (left <= 0) TimedOut();
      pollfd pfd{fd_, POLLIN, 0};
      const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left, 1 << 30)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) TimedOut();
      ssize_t r = ::read(fd_, p, n);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        ended_ = true;
        return false;
      }
      p += r;
      n -= static_cast<size_t>(r);
    }
    return true;
  }
  // True once the child closed its end: it exited or was killed, so its
  // status says why the stream stopped.
  bool ended() const { return ended_; }

  [[noreturn]] void TimedOut() {
    ::kill(child_, SIGKILL);
    timed_out_ = true;
    throw DataLossError(StrCat("Keras weights file '", path_,
                               "': libhdf5 did not finish reading it in ", timeout_seconds_,
                               " s (a malformed file can make it loop); stopped"));
  }

 private:
  int fd_;
  pid_t child_;
  std::string path_;
  std::chrono::steady_clock::time_point deadline_;
  int timeout_seconds_;
  bool timed_out_ = false;
  bool ended_ = false;
};

// Waits for the child; a signal or a non-zero exit becomes DataLossError.
void ReapChild(pid_t child, const std::string& path, int cpu_seconds) {
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU) {
    throw DataLossError(StrCat("Keras weights file '", path, "': libhdf5 used up the reader's ",
                               cpu_seconds,
                               " s of CPU time without finishing it (a malformed file can make "
                               "it loop); stopped"));
  }
  if (WIFSIGNALED(status)) {
    throw DataLossError(StrCat("Keras weights file '", path,
                               "': libhdf5 crashed reading it (signal ", WTERMSIG(status),
                               " in the reading child process): the file is malformed"));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw DataLossError(StrCat("Keras weights file '", path,
                               "': the reading child process failed (exit status ",
                               WEXITSTATUS(status), ")"));
  }
}

// Reads `n` bytes at `offset` of `file` (a dataset the child located); a
// file that shrank meanwhile is DataLossError naming it.
void ReadAt(const RandomAccessFile& file, std::byte* out, uint64_t n, uint64_t offset,
            const std::string& name) {
  if (file.ReadAt(offset, n, out) != n) {
    throw DataLossError(StrCat("Keras weights file '", file.path(), "': dataset '", name,
                               "' cannot be read at offset ", offset, ": the file is shorter"));
  }
}

// `text` with its control characters (a crafted file's object names can
// hold escape sequences) written as \xNN, so that a message is safe to print.
std::string Printable(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    } else {
      out += c;
    }
  }
  return out;
}

// `file`: the file open for reading in the parent, for the datasets the
// child located ('O' records) instead of sending.
H5Contents ParseStream(PipeIn& in, const std::string& path, const RandomAccessFile& file,
                       uint64_t file_size) {
  auto truncated = [&]() -> DataLossError {
    return DataLossError(
        StrCat("Keras weights file '", path,
               "': the reading child process stopped before the end (libhdf5 crashed "
               "or the file is malformed)"));
  };
  auto bad = [&](std::string_view what) {
    return DataLossError(StrCat("Keras weights file '", path, "': ", what));
  };
  auto get = [&](void* p, size_t n) {
    if (!in.Get(p, n)) throw truncated();
  };
  auto get_string = [&]() {
    uint32_t n = 0;
    get(&n, 4);
    if (n > kMaxPath) throw bad("an object path over the limit");
    std::string s(n, '\0');
    get(s.data(), n);
    return s;
  };
  // Object names end up in messages; Keras writes none with control
  // characters.
  auto get_name = [&]() {
    std::string name = get_string();
    if (Printable(name) != name) {
      throw bad(StrCat("object name '", Printable(name), "' has control characters"));
    }
    return name;
  };
  H5Contents contents;
  uint64_t total = 0;
  for (;;) {
    uint8_t tag = 0;
    get(&tag, 1);
    if (tag == 'Z') return contents;
    if (tag == 'G') {
      contents.groups.insert(get_name());
    } else if (tag == 'A') {
      std::string group = get_name();
      std::string name = get_name();
      uint32_t n = 0;
      get(&n, 4);
      if (n > kMaxObjects || n > file_size) throw bad("a string list over the limit");
      std::vector<std::string> values;
      for (uint32_t i = 0; i < n; ++i) {
        values.push_back(get_string());
        total += values.back().size() + 1;
        if (total > file_size + kMaxObjects) throw bad("more strings than the file holds");
      }
      contents.string_lists[{std::move(group), std::move(name)}] = std::move(values);
    } else if (tag == 'E') {
      uint8_t kind = 0;
      get(&kind, 1);
      uint32_t n = 0;
      get(&n, 4);
      if (n > 1 << 16) throw bad("an over-long error message");
      std::string message(n, '\0');
      get(message.data(), n);
      message = StrCat("Keras weights file '", path, "': ", Printable(message));
      if (kind == static_cast<uint8_t>(Kind::kInvalidArgument)) throw InvalidArgumentError(message);
      if (kind == static_cast<uint8_t>(Kind::kResourceExhausted))
        throw ResourceExhaustedError(message);
      throw DataLossError(message);
    } else if (tag == 'D' || tag == 'O') {
      std::string name = get_name();
      uint8_t dtype = 0, rank = 0;
      get(&dtype, 1);
      get(&rank, 1);
      if (rank > kMaxRank) throw bad("a rank over the limit");
      std::vector<int64_t> dims(rank);
      for (auto& d : dims) {
        uint64_t v = 0;
        get(&v, 8);
        if (v > file_size) throw bad("a dimension over the file size");
        d = static_cast<int64_t>(v);
      }
      uint64_t nbytes = 0;
      get(&nbytes, 8);
      if (nbytes > file_size - std::min(total, file_size))
        throw bad("more data than the file holds");
      total += nbytes;
      H5Dataset ds;
      ds.dtype = static_cast<DType>(dtype);
      if (ds.dtype != DType::kFloat32 && ds.dtype != DType::kFloat64 && ds.dtype != DType::kInt32 &&
          ds.dtype != DType::kInt64) {
        throw bad("an unknown dtype from the reading child process");
      }
      uint64_t expected = DTypeSize(ds.dtype);
      for (int64_t d : dims) {
        if (__builtin_mul_overflow(expected, static_cast<uint64_t>(d), &expected)) {
          throw bad("a dataset whose element count overflows");
        }
      }
      if (expected != nbytes) throw bad("a dataset whose byte count does not match its shape");
      ds.shape = Shape(dims);
      ds.value = internal::NewTensor(ds.shape, ds.dtype);
      auto* bytes = static_cast<std::byte*>(internal::MutableRawData(ds.value));
      if (tag == 'D') {
        get(bytes, nbytes);
      } else {
        uint64_t offset = 0;
        get(&offset, 8);
        if (offset > file_size || nbytes > file_size - offset) {
          throw bad(StrCat("dataset '", name, "' at offset ", offset, " with ", nbytes,
                           " bytes lies outside the file"));
        }
        ReadAt(file, bytes, nbytes, offset, name);
      }
      contents.datasets[name] = std::move(ds);
    } else {
      throw bad("an unknown record from the reading child process");
    }
  }
}

void Check(herr_t status, const std::string& path, std::string_view what) {
  if (status < 0) {
    throw FailedPreconditionError(
        StrCat("writing Keras weights file '", path, "': ", what, ": ", Hdf5Message()));
  }
}

hid_t CheckId(hid_t id, const std::string& path, std::string_view what) {
  if (id < 0) Check(-1, path, what);
  return id;
}

}  // namespace

H5Contents ReadH5File(const std::string& path, const H5ReadLimits& limits) {
  // Opened once (never blocking on a FIFO, refusing what is not a regular
  // file): the parent reads the datasets the child locates from it.
  std::unique_ptr<RandomAccessFile> file;
  try {
    file = RandomAccessFile::Open(path);
  } catch (const NotFoundError&) {
    throw NotFoundError(StrCat("Keras weights file '", path, "' does not exist"));
  }
  const uint64_t file_size = file->size();
  if (file_size > limits.max_file_bytes) {
    throw ResourceExhaustedError(StrCat("Keras weights file '", path, "' has ", file_size,
                                        " bytes, over the limit of ", limits.max_file_bytes));
  }
  {
    char head[8] = {};
    if (file->ReadAt(0, sizeof head, head) != sizeof head ||
        std::memcmp(head, kSignature, sizeof head) != 0) {
      throw DataLossError(StrCat("Keras weights file '", path, "' is not an HDF5 file (", file_size,
                                 " bytes, no HDF5 signature at offset 0)"));
    }
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw ResourceExhaustedError(
        StrCat("reading Keras weights file '", path, "': pipe: ", std::strerror(errno)));
  }
  const int cpu_seconds = CpuBudget(limits, file_size);
  const pid_t child = ::fork();
  if (child < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw ResourceExhaustedError(
        StrCat("reading Keras weights file '", path, "': fork: ", std::strerror(err)));
  }
  if (child == 0) {
    ::close(fds[0]);
    ::signal(SIGPIPE, SIG_DFL);
    const uint64_t budget =
        limits.max_reader_bytes > 0 ? limits.max_reader_bytes : file_size + (uint64_t{1} << 30);
    // The child opens the parent's descriptor, not the path again: the
    // offsets it reports are then offsets of the file the parent reads,
    // even if the path was replaced meanwhile.
    const std::string same_file = StrCat("/proc/self/fd/", file->fd());
    RunChild(::access(same_file.c_str(), R_OK) == 0 ? same_file : path, file_size, budget,
             cpu_seconds, fds[1]);
  }
  ::close(fds[1]);
  PipeIn in(fds[0], child, path, limits.timeout_seconds);
  H5Contents contents;
  try {
    contents = ParseStream(in, path, *file, file_size);
  } catch (...) {
    ::close(fds[0]);
    // A child whose stream ended early has exited or died: its status (a
    // crash, the CPU budget) says more than the short stream does.
    const bool ended = in.ended();
    ::kill(child, SIGKILL);
    try {
      ReapChild(child, path, cpu_seconds);
    } catch (const DataLossError&) {
      if (ended) throw;
      // Killed above; the first error says why.
    }
    throw;
  }
  ::close(fds[0]);
  ReapChild(child, path, cpu_seconds);
  return contents;
}

H5Writer::H5Writer(const std::string& path) : path_(path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  file_ = CheckId(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT), path, "create");
}

H5Writer::~H5Writer() {
  if (file_ >= 0) H5Fclose(file_);
}

void H5Writer::CreateGroup(const std::string& path, const std::string& name_attr) {
  Handle group(CheckId(H5Gcreate2(file_, path.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                       path_, StrCat("group '", path, "'")),
               H5Gclose);
  if (name_attr.empty()) return;
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  Check(H5Tset_size(type.get(), H5T_VARIABLE), path_, "string type");
  Check(H5Tset_cset(type.get(), H5T_CSET_UTF8), path_, "string type");
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle attr(
      CheckId(H5Acreate2(group.get(), "name", type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
              path_, StrCat("attribute '", path, "/name'")),
      H5Aclose);
  const char* value = name_attr.c_str();
  Check(H5Awrite(attr.get(), type.get(), &value), path_, StrCat("attribute '", path, "/name'"));
}

void H5Writer::WriteDataset(const std::string& path, const Tensor& value) {
  hid_t file_type, mem_type;
  switch (value.dtype()) {
    case DType::kFloat32:
      file_type = H5T_IEEE_F32LE, mem_type = H5T_NATIVE_FLOAT;
      break;
    case DType::kFloat64:
      file_type = H5T_IEEE_F64LE, mem_type = H5T_NATIVE_DOUBLE;
      break;
    case DType::kInt64:
      file_type = H5T_STD_I64LE, mem_type = H5T_NATIVE_INT64;
      break;
    case DType::kInt32:
      file_type = H5T_STD_I32LE, mem_type = H5T_NATIVE_INT32;
      break;
    default:
      throw InvalidArgumentError(StrCat("writing Keras weights file '", path_, "': dataset '", path,
                                        "' has dtype ", value.dtype(),
                                        "; Keras files hold float32, float64, int32, int64"));
  }
  std::vector<hsize_t> dims(static_cast<size_t>(value.rank()));
  for (int i = 0; i < value.rank(); ++i)
    dims[static_cast<size_t>(i)] = static_cast<hsize_t>(value.shape().dim(i));
  Handle space(value.rank() == 0 ? H5Screate(H5S_SCALAR)
                                 : H5Screate_simple(value.rank(), dims.data(), nullptr),
               H5Sclose);
  Handle ds(CheckId(H5Dcreate2(file_, path.c_str(), file_type, space.get(), H5P_DEFAULT,
                               H5P_DEFAULT, H5P_DEFAULT),
                    path_, StrCat("dataset '", path, "'")),
            H5Dclose);
  if (value.num_elements() > 0) {
    Check(H5Dwrite(ds.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, internal::RawData(value)),
          path_, StrCat("dataset '", path, "'"));
  }
}

void H5Writer::Close() {
  const hid_t file = file_;
  file_ = -1;
  Check(H5Fclose(file), path_, "close");
}

}  // namespace eager::keras_internal
