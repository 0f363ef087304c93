#include "saving/tools/inspect_checkpoint.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <type_traits>

#include "saving/bundle/bundle_files.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/bundle/partitioned_variables.h"
#include "saving/bundle/posix_file.h"
#include "saving/tools/internal/json_text.h"
#include "saving/tools/keras_file_bundle.h"

namespace eager {

std::string ResolveCheckpointPath(const std::string& path) {
  namespace fs = std::filesystem;
  // A plain file goes to BundleReader too: it explains a legacy V1 table or
  // a ".index" file name given where a prefix was expected.
  // internal::FileExists throws our error kinds for a symlink loop or an
  // over-long path; the std::filesystem calls take an error_code, so nothing
  // escapes as std::filesystem_error.
  std::error_code ec;
  if (internal::FileExists(IndexFilename(path)) || fs::is_regular_file(path, ec)) return path;
  if (fs::is_directory(path, ec)) {
    if (std::optional<std::string> latest = LatestCheckpoint(path)) return *latest;
    throw NotFoundError(StrCat("No checkpoint in directory ", path,
                               ": no `checkpoint` state file naming a checkpoint whose .index "
                               "file exists"));
  }
  throw NotFoundError(StrCat("No checkpoint at ", path, ": expected a prefix with a file ",
                             IndexFilename(path), ", or a directory with a `checkpoint` file"));
}

namespace {

// The keys to list: every tensor, with a partitioned variable's slice
// entries folded into the variable (as tf.train.list_variables shows it).
std::vector<std::string> ListedKeys(const BundleReader& reader) {
  std::vector<std::string> keys;
  for (const std::string& key : reader.Keys()) {
    if (!reader.IsSliceOfPartitionedVariable(key)) keys.push_back(key);
  }
  return keys;
}

// Bytes stored for `key`: a partitioned variable's are its slices'.
int64_t StoredBytes(const BundleReader& reader, const std::string& key) {
  const BundleReader::Entry& entry = reader.GetEntry(key);
  if (entry.num_slices == 0) return entry.size;
  int64_t bytes = 0;
  for (const TensorSlice& slice : entry.slices) {
    const std::string slice_key = internal::EncodeTensorNameSlice(key, slice);
    if (reader.Contains(slice_key)) bytes += reader.GetEntry(slice_key).size;
  }
  return bytes;
}

}  // namespace

void ListCheckpoint(const BundleReader& reader, std::ostream& out) {
  const std::vector<std::string> keys = ListedKeys(reader);
  out << ckpt_tool::ShownPrefix(reader) << ": " << keys.size() << " tensors in "
      << reader.num_shards() << (reader.num_shards() == 1 ? " shard\n" : " shards\n");
  for (const std::string& key : keys) {
    const BundleReader::Entry& entry = reader.GetEntry(key);
    out << key << "  "
        << (entry.dtype ? std::string(DTypeName(*entry.dtype)) : TfDataTypeName(entry.tf_dtype))
        << "  " << DimsToString(entry.dims) << "  " << StoredBytes(reader, key) << " bytes";
    if (entry.num_slices > 0) out << "  (partitioned into " << entry.num_slices << " slices)";
    out << "\n";
  }
}

void ListCheckpointJson(const BundleReader& reader, std::ostream& out) {
  out << "{\"prefix\":" << internal::JsonString(ckpt_tool::ShownPrefix(reader))
      << ",\"shards\":" << reader.num_shards() << ",\"tensors\":[";
  bool first = true;
  for (const std::string& key : ListedKeys(reader)) {
    const BundleReader::Entry& entry = reader.GetEntry(key);
    out << (first ? "" : ",") << "{\"key\":" << internal::JsonString(key) << ",\"dtype\":"
        << internal::JsonString(entry.dtype ? std::string(DTypeName(*entry.dtype))
                                            : TfDataTypeName(entry.tf_dtype))
        << ",\"shape\":" << internal::JsonDims(entry.dims)
        << ",\"bytes\":" << StoredBytes(reader, key) << ",\"slices\":" << entry.num_slices << "}";
    first = false;
  }
  out << "]}\n";
}

namespace {

// An entry eager keeps as opaque bytes (DT_VARIANT, DT_RESOURCE, a dtype it
// lacks): its checksum is checked (VerifyChecksum throws otherwise).
bool IsOpaque(const BundleReader& reader, const std::string& key) {
  const BundleReader::Entry& entry = reader.GetEntry(key);
  if (entry.dtype || entry.num_slices > 0) return false;
  reader.VerifyChecksum(key);
  return true;
}

}  // namespace

void DumpTensorJson(const BundleReader& reader, const std::string& key, int64_t max_elements,
                    std::ostream& out) {
  if (IsOpaque(reader, key)) {
    const BundleReader::Entry& entry = reader.GetEntry(key);
    out << "{\"key\":" << internal::JsonString(key)
        << ",\"dtype\":" << internal::JsonString(TfDataTypeName(entry.tf_dtype))
        << ",\"shape\":" << internal::JsonDims(entry.dims) << ",\"opaque\":true"
        << ",\"bytes\":" << entry.size << ",\"checksum\":\"ok\"}\n";
    return;
  }
  const Tensor tensor = reader.Read(key);
  const int64_t n =
      max_elements > 0 ? std::min(max_elements, tensor.num_elements()) : tensor.num_elements();
  out << "{\"key\":" << internal::JsonString(key)
      << ",\"dtype\":" << internal::JsonString(std::string(DTypeName(tensor.dtype())))
      << ",\"shape\":" << internal::JsonDims(tensor.shape().dims())
      << ",\"elements\":" << tensor.num_elements() << ",\"values\":[";
  VisitDType(tensor.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto values = tensor.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      if (i > 0) out << ",";
      if constexpr (std::is_same_v<T, std::string>) {
        out << internal::JsonString(values[i]);
      } else if constexpr (std::is_same_v<T, bool>) {
        out << (values[i] ? "true" : "false");
      } else if constexpr (std::is_same_v<T, float>) {
        out << (std::isfinite(values[i]) ? internal::ShortestNumber(values[i]) : "null");
      } else if constexpr (requires(const T& v) { v.imag(); }) {  // complex: [real, imag]
        out << "[" << internal::JsonNumber(static_cast<double>(values[i].real())) << ","
            << internal::JsonNumber(static_cast<double>(values[i].imag())) << "]";
      } else {
        out << internal::JsonNumber(static_cast<double>(values[i]));
      }
    }
  });
  out << "]}\n";
}

void DumpTensor(const BundleReader& reader, const std::string& key, int64_t max_elements,
                std::ostream& out) {
  if (IsOpaque(reader, key)) {
    const BundleReader::Entry& entry = reader.GetEntry(key);
    out << key << ": opaque " << TfDataTypeName(entry.tf_dtype) << " " << DimsToString(entry.dims)
        << ", " << entry.size << " bytes, checksum ok\n";
    return;
  }
  const Tensor tensor = reader.Read(key);
  out << key << ": " << tensor.DebugString(max_elements > 0 ? max_elements : tensor.num_elements())
      << "\n";
}

VerifyResult VerifyCheckpoint(const BundleReader& reader) {
  VerifyResult result;
  for (const std::string& key : reader.Keys()) {
    const BundleReader::Entry& entry = reader.GetEntry(key);
    try {
      reader.VerifyChecksum(key);
    } catch (const UnimplementedError& e) {
      result.unchecked.push_back(StrCat(key, ": ", e.what()));
      continue;
    }
    ++result.tensors;
    if (entry.num_slices == 0) result.bytes += entry.size;  // slices count as their own entries
  }
  return result;
}

}  // namespace eager
