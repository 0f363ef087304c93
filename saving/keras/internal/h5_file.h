#pragma once

// The subset of HDF5 that Keras 3's `.weights.h5` uses: groups, a string
// attribute "name" on the `vars` groups, and uncompressed numeric datasets
// (float32, float64, int64, int32). Private to saving/keras/.
//
// Reading: libhdf5 is not hardened against hostile files (its CVE list has
// heap overflows and infinite loops on malformed object headers, B-trees and
// datatypes). ReadH5File therefore
//  1. checks the file itself first: a regular file, at most `max_file_bytes`,
//     beginning with HDF5's signature (no user block: h5py writes none);
//  2. hands it to libhdf5 only in a forked child process, which walks every
//     link (refusing soft and external links: an external link would make
//     libhdf5 open another file) and checks each dataset before reading it (a dtype listed
//     above, rank <= 8, contiguous or compact layout without filters, so the
//     bytes it declares are bytes stored in the file: its size bounds every
//     allocation, and external storage is refused), and streams what it
//     found to the parent over a pipe: for a dataset stored in native byte
//     order (what Keras writes) its offset in the file, which the parent
//     reads itself from the descriptor it opened (the child opens the same
//     one), for others the bytes libhdf5 converted;
//  3. in the parent, parses that stream with every length and offset checked
//     against what is left of the file's size, and turns a child that crashed, was
//     killed, used up its CPU budget or ran past `timeout_seconds` into
//     DataLossError naming the file.
// A crash or hang inside libhdf5 on a crafted file thus costs a child, not
// the caller's process (which may be training). The cost is one fork (a
// few ms); the weights are read once, by the caller.
//
// Writing runs in-process (eager's own values, no untrusted input) into a
// temporary file that the caller syncs and renames.

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/dtype.h"
#include "runtime/shape.h"
#include "runtime/tensor.h"

namespace eager::keras_internal {

struct H5Dataset {
  DType dtype = DType::kFloat32;
  Shape shape;
  // The values, read straight into a tensor of `shape` and `dtype` (native
  // byte order), so that a variable can take it without a copy.
  Tensor value;
};

// Of the attributes, only the string lists legacy Keras (tf_keras's `.h5`)
// orders its weights by are read: "layer_names" and "weight_names" on any
// group, keyed (group, name) with "" for the root group. Keras 3's loader
// needs none.
struct H5Contents {
  std::set<std::string> groups;               // "layers", "layers/dense/vars", ...
  std::map<std::string, H5Dataset> datasets;  // "layers/dense/vars/0" -> value
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> string_lists;
};

struct H5ReadLimits {
  uint64_t max_file_bytes = uint64_t{16} << 30;
  // Wall-clock backstop (a child stuck in I/O); loops are caught by the CPU
  // budget below long before.
  int timeout_seconds = 600;
  // CPU seconds the reading child may use (RLIMIT_CPU, set in the child
  // only): some malformed files send libhdf5 into an endless loop (a 43 KB
  // one found by the fuzzer), and a wall-clock deadline long enough for a
  // big file on a loaded machine would be minutes of hang for a small one.
  // CPU time does not run while the machine is busy with other work, so the
  // budget can be tight. 0: 2 s plus 1 s per 32 MiB of file (reading and
  // copying through the pipe take well under a second per GiB).
  int max_reader_cpu_seconds = 0;
  // Address space the reading child may add to what it inherits from the
  // caller (RLIMIT_AS, set in the child only): libhdf5 trusts sizes in a
  // file's headers and allocates them (a 20 KB crafted file asks for 412 GB),
  // so the child's memory is bounded by the file, not by the file's claims.
  // 0: the file's size plus 1 GiB (libhdf5's caches and one dataset at a
  // time need less). Not applied in sanitizer builds, whose shadow memory
  // cannot live under an address-space limit.
  uint64_t max_reader_bytes = 0;
};

// Throws NotFoundError (missing file), DataLossError (not HDF5, malformed,
// libhdf5 failed or crashed: the message names `path` and what was wrong),
// InvalidArgumentError (a dataset of a dtype or layout Keras does not write,
// naming its path), ResourceExhaustedError (over the limits, including
// libhdf5 failing to allocate within `max_reader_bytes`).
H5Contents ReadH5File(const std::string& path, const H5ReadLimits& limits = {});

// Creates `path` (which must not exist) and writes groups, attributes and
// datasets in the order given. Throws FailedPreconditionError naming the
// path when libhdf5 refuses.
class H5Writer {
 public:
  explicit H5Writer(const std::string& path);
  ~H5Writer();  // closes the file if Close() was not called; never throws
  H5Writer(const H5Writer&) = delete;
  H5Writer& operator=(const H5Writer&) = delete;

  // Creates group `path` (its parents must exist), with a variable-length
  // UTF-8 string attribute "name" when `name_attr` is not empty (as h5py).
  void CreateGroup(const std::string& path, const std::string& name_attr = "");
  // A contiguous dataset of `value`'s dtype (float32/64, int32/64) and shape.
  void WriteDataset(const std::string& path, const Tensor& value);
  void Close();

 private:
  std::string path_;
  int64_t file_ = -1;  // hid_t
};

}  // namespace eager::keras_internal
