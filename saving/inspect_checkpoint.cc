#include "saving/inspect_checkpoint.h"

#include <filesystem>

#include "saving/bundle_files.h"
#include "saving/checkpoint_state.h"
#include "saving/internal/posix_file.h"

namespace eager {
namespace {

bool Readable(const BundleReader::Entry& entry) {
  return entry.dtype.has_value() && entry.num_slices == 0 &&
         entry.dims.size() <= static_cast<size_t>(Shape::kMaxRank);
}

std::string DimsString(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

}  // namespace

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

void ListCheckpoint(const BundleReader& reader, std::ostream& out) {
  out << reader.prefix() << ": " << reader.Keys().size() << " tensors in " << reader.num_shards()
      << (reader.num_shards() == 1 ? " shard\n" : " shards\n");
  for (const std::string& key : reader.Keys()) {
    const BundleReader::Entry& entry = reader.GetEntry(key);
    out << key << "  "
        << (entry.dtype ? std::string(DTypeName(*entry.dtype)) : TfDataTypeName(entry.tf_dtype))
        << "  " << DimsString(entry.dims) << "  " << entry.size << " bytes";
    if (entry.num_slices > 0) out << "  (partitioned into " << entry.num_slices << " slices)";
    out << "\n";
  }
}

void DumpTensor(const BundleReader& reader, const std::string& key, int64_t max_elements,
                std::ostream& out) {
  const Tensor tensor = reader.Read(key);
  out << key << ": " << tensor.DebugString(max_elements > 0 ? max_elements : tensor.num_elements())
      << "\n";
}

VerifyResult VerifyCheckpoint(const BundleReader& reader) {
  VerifyResult result;
  for (const std::string& key : reader.Keys()) {
    const BundleReader::Entry& entry = reader.GetEntry(key);
    if (!Readable(entry)) {
      ++result.skipped;
      continue;
    }
    reader.Read(key);
    ++result.tensors;
    result.bytes += entry.size;
  }
  return result;
}

}  // namespace eager
