#pragma once

// What the eager-ckpt command line tool does, as functions (TensorFlow's
// inspect_checkpoint): list a checkpoint's tensors, print one, and verify
// that every tensor's bytes match their checksum.
//
//   eager-ckpt list   PATH [--json]      key, dtype, shape and size of every tensor
//   eager-ckpt dump   PATH KEY [--json]  one tensor's values
//   eager-ckpt verify PATH           read every tensor (checks every CRC32C)
//
// PATH is a checkpoint prefix ("/tmp/model/ckpt-3") or a directory, which
// means its latest checkpoint (the `checkpoint` state file, as
// tf.train.latest_checkpoint resolves it).

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "saving/bundle/bundle_reader.h"

namespace eager {

// `path` itself when PATH.index exists or PATH is a file (BundleReader then
// explains what it is); for a directory, its latest
// checkpoint. Throws NotFoundError naming `path` and what was looked for.
std::string ResolveCheckpointPath(const std::string& path);

// One line per tensor, in key order: "<key>  <dtype>  <shape>  <bytes> bytes"
// (TensorFlow's DataType name for dtypes eager cannot read), after a header
// line with the prefix and the number of shards. A partitioned variable is
// one line with its full shape, its slices' bytes and "(partitioned into N
// slices)"; its slices' own entries are not listed.
void ListCheckpoint(const BundleReader& reader, std::ostream& out);

// The same as one JSON object: {"prefix", "shards", "tensors": [{"key",
// "dtype", "shape", "bytes", "slices"}]}.
void ListCheckpointJson(const BundleReader& reader, std::ostream& out);

// The tensor under `key` as "tf.Tensor(..., shape=..., dtype=...)", at most
// `max_elements` values (0: all). Errors as BundleReader::Read. An entry kept
// as opaque bytes (DT_VARIANT, DT_RESOURCE) has its checksum checked and is
// shown as "KEY: opaque DT_VARIANT [], 40 bytes, checksum ok".
void DumpTensor(const BundleReader& reader, const std::string& key, int64_t max_elements,
                std::ostream& out);

// The same as one JSON object: {"key", "dtype", "shape", "elements",
// "values": the first `max_elements` (0: all) in row-major order}; numbers
// as JSON numbers (NaN and Inf as null), complex as [real, imag], strings as
// JSON strings. Opaque entries: {"key", "dtype", "shape", "opaque": true,
// "bytes", "checksum": "ok"}.
void DumpTensorJson(const BundleReader& reader, const std::string& key, int64_t max_elements,
                    std::ostream& out);

struct VerifyResult {
  int64_t tensors = 0;  // entries whose checksum was checked
  int64_t bytes = 0;    // stored bytes checked
  // "key: why" for each entry whose checksum could not be checked (an unknown
  // dtype): a failure, never reported as OK.
  std::vector<std::string> unchecked;
};
// Checks every entry's checksum whatever its dtype (BundleReader::
// VerifyChecksum): tensors eager reads are read in full (sizes, string
// lengths and bool bytes checked too); fixed-size dtypes eager lacks (qint8,
// ...) and DT_RESOURCE over their raw bytes, DT_VARIANT element by element. Throws the first
// DataLossError (naming file and key). A partitioned variable is assembled
// from its slices (checking their layout); its slices are entries of their
// own and are checked as such too.
VerifyResult VerifyCheckpoint(const BundleReader& reader);

}  // namespace eager
