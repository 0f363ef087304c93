#include "saving/bundle_writer.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "saving/bundle_files.h"
#include "saving/bundle_reader.h"
#include "saving/internal/coding.h"
#include "saving/internal/crc32c.h"
#include "saving/internal/directory_lock.h"
#include "saving/internal/leveldb_table.h"
#include "saving/internal/posix_file.h"
#include "saving/internal/string_tensor_crc.h"
#include "saving/proto/tensor_bundle.pb.h"

namespace eager {
namespace {

namespace crc32c = internal::crc32c;

// Small tensors are gathered into one write; bigger ones are written from
// their own buffers in 1 MiB pieces, each checksummed just before it is
// written while it is still in cache.
constexpr size_t kDataBufferSize = 256 * 1024;
constexpr size_t kChunkSize = 1024 * 1024;
constexpr int kTensorBundleVersion = 1;  // BundleHeaderProto.version.producer

std::string SerializedHeader(int num_shards) {
  eager::tfproto::BundleHeaderProto header;
  header.set_num_shards(num_shards);
  header.set_endianness(eager::tfproto::BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(kTensorBundleVersion);
  return header.SerializeAsString();
}

// The shard count of the bundle already at `prefix`, or 0 when there is
// none (or it cannot be read, so no reader can be using its data files).
int ExistingShardCount(const std::string& prefix) {
  if (!internal::FileExists(IndexFilename(prefix))) return 0;
  try {
    return BundleReader(prefix).num_shards();
  } catch (const Error&) {
    return 0;
  }
}

}  // namespace

BundleWriter::BundleWriter(std::string prefix) : prefix_(std::move(prefix)) {
  EAGER_CHECK(!prefix_.empty(), "BundleWriter: the checkpoint prefix is empty");
  dir_ = internal::DirName(prefix_);
  internal::CreateDirectories(dir_);
  lock_ = std::make_unique<internal::DirectoryLock>(dir_);
  const int existing = ExistingShardCount(prefix_);
  overwriting_ = existing > 0;
  num_shards_ = existing == 1 ? 2 : 1;
  data_path_ = DataFilename(prefix_, 0, num_shards_);
  index_path_ = IndexFilename(prefix_);
  const std::string suffix = ".tempstate" + std::to_string(internal::RandomUint64());
  temp_data_path_ = data_path_ + suffix;
  if (num_shards_ == 2) temp_empty_shard_path_ = DataFilename(prefix_, 1, 2) + suffix;
  temp_index_path_ = index_path_ + suffix;
  data_ = internal::WritableFile::Create(temp_data_path_, kDataBufferSize);
}

BundleWriter::~BundleWriter() {
  if (!finished_ && !aborted_) Abort();
}

void BundleWriter::CheckUsable(const char* method) const {
  if (finished_ || aborted_) {
    throw FailedPreconditionError(StrCat("BundleWriter::", method, ": the writer for ", prefix_,
                                         " has already ",
                                         finished_ ? "finished" : "failed and was aborted"));
  }
}

void BundleWriter::Abort() noexcept {
  aborted_ = true;
  data_.reset();
  internal::RemoveFileNoThrow(temp_data_path_);
  if (!temp_empty_shard_path_.empty()) internal::RemoveFileNoThrow(temp_empty_shard_path_);
  internal::RemoveFileNoThrow(temp_index_path_);
  if (data_moved_ && !index_moved_) {  // the index rename failed
    internal::RemoveFileNoThrow(data_path_);
    if (num_shards_ == 2) internal::RemoveFileNoThrow(DataFilename(prefix_, 1, 2));
  }
  lock_.reset();
}

void BundleWriter::AppendData(const void* data, size_t n, uint32_t& crc) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const size_t len = std::min(n, kChunkSize);
    crc = crc32c::Extend(crc, p, len);
    data_->Append(p, len);
    p += len;
    n -= len;
  }
}

void BundleWriter::Add(std::string_view key, const Tensor& tensor) {
  CheckUsable("Add");
  EAGER_CHECK(!key.empty(), "BundleWriter::Add(", prefix_,
              "): the empty key is reserved for the bundle header");
  EAGER_CHECK(!entries_.contains(key), "BundleWriter::Add(", prefix_, "): key '", key,
              "' was already added");
  EntryInfo info{.tf_dtype = TfDataType(tensor.dtype()),
                 .shape = tensor.shape(),
                 .offset = static_cast<int64_t>(data_->size()),
                 .size = 0,
                 .masked_crc32c = 0};
  uint32_t crc = 0;
  try {
    if (tensor.dtype() == DType::kString) {
      // TF's layout (FORMAT.md 2.7): varint64 lengths, the masked CRC of the
      // lengths (internal/string_tensor_crc.h), then the bytes.
      const std::span<const std::string> strings = tensor.data<std::string>();
      std::string header;
      for (const std::string& s : strings) {
        internal::PutVarint64(header, s.size());
        crc = internal::ExtendCrcWithStringLength(crc, s.size());
      }
      std::string masked;
      internal::PutFixed32(masked, crc32c::Mask(crc));
      crc = crc32c::Extend(crc, masked.data(), masked.size());
      header += masked;
      data_->Append(header.data(), header.size());
      for (const std::string& s : strings) AppendData(s.data(), s.size(), crc);
    } else {
      const std::span<const std::byte> bytes = tensor.bytes();
      AppendData(bytes.data(), bytes.size(), crc);
    }
  } catch (...) {
    Abort();
    throw;
  }
  info.size = static_cast<int64_t>(data_->size()) - info.offset;
  info.masked_crc32c = crc32c::Mask(crc);
  entries_.emplace(std::string(key), info);
}

void BundleWriter::Finish() {
  CheckUsable("Finish");
  try {
    data_->Sync();
    data_->Close();
    data_.reset();
    if (num_shards_ == 2) {
      auto empty = internal::WritableFile::Create(temp_empty_shard_path_, 1);
      empty->Sync();
      empty->Close();
    }
    WriteIndex();
    MoveIntoPlace();
  } catch (...) {
    Abort();
    throw;
  }
  finished_ = true;
  RemoveDataFilesOfOtherLayouts();
  lock_.reset();
}

// PREFIX.index.tempstate*: the header, then every entry in key order, synced.
void BundleWriter::WriteIndex() {
  auto index = internal::WritableFile::Create(temp_index_path_, 64 * 1024);
  {
    internal::TableWriter table(index.get());
    table.Add("", SerializedHeader(num_shards_));
    eager::tfproto::BundleEntryProto proto;
    std::string value;
    for (const auto& [key, info] : entries_) {  // std::map: bytewise key order
      proto.Clear();
      proto.set_dtype(static_cast<eager::tfproto::DataType>(info.tf_dtype));
      auto* shape = proto.mutable_shape();  // always present, `12 00` for a scalar
      for (int64_t d : info.shape.dims()) shape->add_dim()->set_size(d);
      proto.set_offset(info.offset);
      proto.set_size(info.size);
      proto.set_crc32c(info.masked_crc32c);
      value.clear();
      proto.SerializeToString(&value);
      table.Add(key, value);
    }
    table.Finish();
  }
  index->Sync();
  index->Close();
}

// Data under names no existing index uses, then (durably, when an old index
// could otherwise be left pointing at them after a power loss) the index.
void BundleWriter::MoveIntoPlace() {
  internal::RenameFile(temp_data_path_, data_path_);
  data_moved_ = true;
  if (num_shards_ == 2) internal::RenameFile(temp_empty_shard_path_, DataFilename(prefix_, 1, 2));
  if (overwriting_) internal::SyncDirectory(dir_);
  internal::RenameFile(temp_index_path_, index_path_);
  index_moved_ = true;
  internal::SyncDirectory(dir_);
}

// After an overwrite: the old layout's data files (and those of overwrites
// killed before their index rename), PREFIX.data-?????-of-M for M other than
// our shard count. Best effort; nothing reads them any more.
void BundleWriter::RemoveDataFilesOfOtherLayouts() const noexcept {
  const std::string base = prefix_.substr(prefix_.find_last_of('/') + 1);
  char ours[10];  // "-of-0000N"
  std::snprintf(ours, sizeof(ours), "-of-%05d", num_shards_);
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    // BASE.data-SSSSS-of-NNNNN
    if (name.size() == base.size() + 20 && name.starts_with(base) &&
        name.compare(base.size(), 6, ".data-") == 0 &&
        name.compare(base.size() + 11, 4, "-of-") == 0 &&
        name.compare(base.size() + 11, 9, ours) != 0) {
      internal::RemoveFileNoThrow(it->path().string());
    }
  }
}

}  // namespace eager
