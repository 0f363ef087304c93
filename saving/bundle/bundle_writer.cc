#include "saving/bundle/bundle_writer.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <thread>

#include "saving/bundle/bundle_files.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/coding.h"
#include "saving/bundle/crc32c.h"
#include "saving/bundle/directory_lock.h"
#include "saving/bundle/internal/leveldb_table.h"
#include "saving/bundle/internal/string_tensor_crc.h"
#include "saving/bundle/posix_file.h"
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

void AppendData(internal::WritableFile& file, const void* data, size_t n, uint32_t& crc) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const size_t len = std::min(n, kChunkSize);
    crc = crc32c::Extend(crc, p, len);
    file.Append(p, len);
    p += len;
    n -= len;
  }
}

// Appends `tensor`'s bytes as TF lays them out; returns their masked CRC32C.
uint32_t AppendTensor(internal::WritableFile& file, const Tensor& tensor) {
  uint32_t crc = 0;
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
    file.Append(header.data(), header.size());
    for (const std::string& s : strings) AppendData(file, s.data(), s.size(), crc);
  } else {
    const std::span<const std::byte> bytes = tensor.bytes();
    AppendData(file, bytes.data(), bytes.size(), crc);
  }
  return crc32c::Mask(crc);
}

// About the bytes AppendTensor writes, for dealing tensors out to shards.
uint64_t ApproximateBytes(const Tensor& tensor) {
  if (tensor.dtype() != DType::kString) return tensor.bytes().size();
  uint64_t n = 0;
  for (const std::string& s : tensor.data<std::string>()) n += s.size() + 1;
  return n;
}

// Which shard each of `tensors` goes to: largest first to the shard with the
// fewest bytes so far (ties: the lower shard, the earlier tensor). Depends on
// the sizes and their order only.
std::vector<int> DealToShards(const std::vector<std::pair<std::string, Tensor>>& tensors,
                              int num_shards) {
  std::vector<uint64_t> bytes(tensors.size());
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    bytes[i] = ApproximateBytes(tensors[i].second);
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return bytes[a] > bytes[b]; });
  std::vector<uint64_t> load(static_cast<size_t>(num_shards), 0);
  std::vector<int> shard(tensors.size());
  for (size_t i : order) {
    const auto lightest = std::min_element(load.begin(), load.end()) - load.begin();
    shard[i] = static_cast<int>(lightest);
    load[static_cast<size_t>(lightest)] += bytes[i];
  }
  return shard;
}

}  // namespace

BundleWriter::BundleWriter(std::string prefix, BundleWriterOptions options)
    : prefix_(std::move(prefix)) {
  EAGER_CHECK(!prefix_.empty(), "BundleWriter: the checkpoint prefix is empty");
  EAGER_CHECK(options.num_shards >= 1 && options.num_shards <= 1024, "BundleWriter(", prefix_,
              "): num_shards must be in [1, 1024], got ", options.num_shards);
  dir_ = internal::DirName(prefix_);
  if (options.group != nullptr && options.group->size() > 1) {
    EAGER_CHECK(options.num_shards == 1, "BundleWriter(", prefix_,
                "): a distributed writer has one data file per member; num_shards must be 1, got ",
                options.num_shards);
    EAGER_CHECK(options.group->size() <= 1024, "BundleWriter(", prefix_,
                "): at most 1024 members write one bundle, got ", options.group->size());
    group_ = options.group;
    rank_ = group_->rank();
    StartInGroup();
    return;
  }
  internal::CreateDirectories(dir_);
  lock_ = std::make_unique<internal::DirectoryLock>(dir_);
  const int existing = ExistingShardCount(prefix_);
  overwriting_ = existing > 0;
  data_shards_ = options.num_shards;
  num_shards_ = existing == data_shards_ ? data_shards_ + 1 : data_shards_;
  index_path_ = IndexFilename(prefix_);
  const std::string suffix = ".tempstate" + std::to_string(internal::RandomUint64());
  for (int shard = 0; shard < num_shards_; ++shard) {
    data_paths_.push_back(DataFilename(prefix_, shard, num_shards_));
    temp_data_paths_.push_back(data_paths_.back() + suffix);
  }
  temp_index_path_ = index_path_ + suffix;
  try {
    for (int shard = 0; shard < data_shards_; ++shard) {
      data_.push_back(internal::WritableFile::Create(temp_data_paths_[static_cast<size_t>(shard)],
                                                     kDataBufferSize));
    }
  } catch (...) {
    Abort();
    throw;
  }
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
  data_.clear();
  pending_.clear();
  for (const std::string& path : temp_data_paths_) internal::RemoveFileNoThrow(path);
  internal::RemoveFileNoThrow(temp_index_path_);
  if (data_moved_ && !index_moved_) {  // a data or the index rename failed
    for (const std::string& path : data_paths_) internal::RemoveFileNoThrow(path);
  }
  lock_.reset();
}

void BundleWriter::Add(std::string_view key, const Tensor& tensor) {
  CheckUsable("Add");
  EAGER_CHECK(!key.empty(), "BundleWriter::Add(", prefix_,
              "): the empty key is reserved for the bundle header");
  EAGER_CHECK(!entries_.contains(key), "BundleWriter::Add(", prefix_, "): key '", key,
              "' was already added");
  EntryInfo info{.tf_dtype = TfDataType(tensor.dtype()),
                 .shape = tensor.shape(),
                 .shard_id = 0,
                 .offset = 0,
                 .size = 0,
                 .masked_crc32c = 0};
  if (data_shards_ > 1) {      // written by Finish()
    ApproximateBytes(tensor);  // throws here, not in Finish(), for a tensor without values
    pending_.emplace_back(std::string(key), tensor);
    entries_.emplace(std::string(key), info);
    return;
  }
  internal::WritableFile& file = *data_[0];
  info.offset = static_cast<int64_t>(file.size());
  try {
    info.masked_crc32c = AppendTensor(file, tensor);
  } catch (...) {
    Abort();
    throw;
  }
  info.size = static_cast<int64_t>(file.size()) - info.offset;
  entries_.emplace(std::string(key), info);
}

// Sharded: each data shard's tensors, in the order added, written and
// fsynced on a thread of its own (shard 0 on this one), so the files' writes,
// checksums and fsyncs overlap. Unsharded: the streamed file's fsync.
void BundleWriter::WriteShards() {
  if (data_shards_ == 1) {
    data_[0]->Sync();
    data_[0]->Close();
    return;
  }
  const std::vector<int> shard_of = DealToShards(pending_, data_shards_);
  std::vector<std::exception_ptr> errors(static_cast<size_t>(data_shards_));
  auto write_shard = [&](int shard) {
    try {
      internal::WritableFile& file = *data_[static_cast<size_t>(shard)];
      for (size_t i = 0; i < pending_.size(); ++i) {
        if (shard_of[i] != shard) continue;
        EntryInfo& info = entries_.find(pending_[i].first)->second;
        info.shard_id = shard;
        info.offset = static_cast<int64_t>(file.size());
        info.masked_crc32c = AppendTensor(file, pending_[i].second);
        info.size = static_cast<int64_t>(file.size()) - info.offset;
      }
      file.Sync();
      file.Close();
    } catch (...) {
      errors[static_cast<size_t>(shard)] = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> threads;
    for (int shard = 1; shard < data_shards_; ++shard) threads.emplace_back(write_shard, shard);
    write_shard(0);
  }  // joined
  for (const std::exception_ptr& error : errors) {
    if (error != nullptr) std::rethrow_exception(error);
  }
  pending_.clear();
}

void BundleWriter::Finish() {
  CheckUsable("Finish");
  if (group_ != nullptr) {
    FinishInGroup();
    return;
  }
  try {
    WriteShards();
    data_.clear();
    for (int shard = data_shards_; shard < num_shards_; ++shard) {  // the overwrite's extra one
      auto empty = internal::WritableFile::Create(temp_data_paths_[static_cast<size_t>(shard)], 1);
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

// Distributed: member 0 takes the lock and reads which layout the save
// replaces; every member learns it and the temporary names' random part, so
// that member 0 can rename every member's file at the end. No file is made
// yet: a failure to make one is reported by Finish() on every member.
void BundleWriter::StartInGroup() {
  const std::string what = StrCat("Distributed save of ", prefix_);
  std::string layout;  // member 0's "<existing shard count> <random>"
  std::exception_ptr error;
  if (rank_ == 0) {
    try {
      internal::CreateDirectories(dir_);
      lock_ = std::make_unique<internal::DirectoryLock>(dir_);
      layout = StrCat(ExistingShardCount(prefix_), " ", internal::RandomUint64());
    } catch (...) {
      error = std::current_exception();
    }
  }
  AgreeOnOutcome(*group_, error, what);
  layout = group_->AllGather(layout)[0];
  const size_t space = layout.find(' ');
  const int existing = std::stoi(layout.substr(0, space));
  const std::string suffix = ".tempstate" + layout.substr(space + 1);
  overwriting_ = existing > 0;
  data_shards_ = group_->size();
  num_shards_ = existing == data_shards_ ? data_shards_ + 1 : data_shards_;
  index_path_ = IndexFilename(prefix_);
  for (int shard = 0; shard < num_shards_; ++shard) {
    data_paths_.push_back(DataFilename(prefix_, shard, num_shards_));
    temp_data_paths_.push_back(data_paths_.back() + suffix);
  }
  temp_index_path_ = index_path_ + suffix;
}

// A fingerprint of the tensors added (keys, dtypes, shapes, in order), so
// that member 0 can tell a member that added different ones.
uint32_t BundleWriter::PendingFingerprint() const {
  uint32_t crc = 0;
  for (const auto& [key, tensor] : pending_) {
    std::string record = key;
    internal::PutVarint64(record, static_cast<uint64_t>(TfDataType(tensor.dtype())));
    for (int64_t d : tensor.shape().dims()) internal::PutVarint64(record, static_cast<uint64_t>(d));
    internal::PutVarint64(record, ApproximateBytes(tensor));
    crc = crc32c::Extend(crc, record.data(), record.size());
  }
  return crc;
}

// This member's data file (shard rank_), written and fsynced as a temporary
// file; member 0 also makes an overwrite's extra empty one. Returns what
// member 0 needs for the index: the fingerprint, the count, and per tensor
// written here its position, offset, size and checksum.
std::string BundleWriter::WriteOwnShard() {
  const std::vector<int> shard_of = DealToShards(pending_, data_shards_);
  std::string report;
  internal::PutFixed32(report, PendingFingerprint());
  internal::PutVarint64(report, pending_.size());
  {
    auto file = internal::WritableFile::Create(temp_data_paths_[static_cast<size_t>(rank_)],
                                               kDataBufferSize);
    for (size_t i = 0; i < pending_.size(); ++i) {
      if (shard_of[i] != rank_) continue;
      const uint64_t offset = file->size();
      const uint32_t crc = AppendTensor(*file, pending_[i].second);
      internal::PutVarint64(report, i);
      internal::PutVarint64(report, offset);
      internal::PutVarint64(report, file->size() - offset);
      internal::PutFixed32(report, crc);
    }
    file->Sync();
    file->Close();
  }
  if (rank_ == 0) {
    for (int shard = data_shards_; shard < num_shards_; ++shard) {
      auto empty = internal::WritableFile::Create(temp_data_paths_[static_cast<size_t>(shard)], 1);
      empty->Sync();
      empty->Close();
    }
  }
  return report;
}

// Member 0: every member's report into entries_.
void BundleWriter::MergeGroupEntries(const std::vector<std::string>& reports) {
  const std::vector<int> shard_of = DealToShards(pending_, data_shards_);
  const uint32_t fingerprint = PendingFingerprint();
  for (size_t rank = 0; rank < reports.size(); ++rank) {
    std::string_view in = reports[rank];
    uint32_t theirs = 0;
    uint64_t count = 0;
    EAGER_INTERNAL_CHECK(internal::GetFixed32(in, theirs) && internal::GetVarint64(in, count));
    if (theirs != fingerprint || count != pending_.size()) {
      throw InvalidArgumentError(StrCat(
          "BundleWriter(", prefix_, "): rank ", rank, " added ", count, " tensors, rank 0 added ",
          pending_.size(), theirs != fingerprint ? ", and their keys, dtypes or shapes differ" : "",
          ": every member must add the same tensors in the same order"));
    }
    while (!in.empty()) {
      uint64_t i = 0, offset = 0, size = 0;
      uint32_t crc = 0;
      EAGER_INTERNAL_CHECK(internal::GetVarint64(in, i) && internal::GetVarint64(in, offset) &&
                           internal::GetVarint64(in, size) && internal::GetFixed32(in, crc) &&
                           i < pending_.size() && shard_of[i] == static_cast<int>(rank));
      EntryInfo& info = entries_.find(pending_[i].first)->second;
      info.shard_id = static_cast<int>(rank);
      info.offset = static_cast<int64_t>(offset);
      info.size = static_cast<int64_t>(size);
      info.masked_crc32c = crc;
    }
  }
}

// Each member writes its file; once all are durable member 0 renames them
// into place under the merged index; each step's failure anywhere is every
// member's (AgreeOnOutcome), and every member then aborts.
void BundleWriter::FinishInGroup() {
  const std::string what = StrCat("Distributed save of ", prefix_);
  std::exception_ptr error;
  std::string report;
  try {
    report = WriteOwnShard();
  } catch (...) {
    error = std::current_exception();
  }
  try {
    AgreeOnOutcome(*group_, error, what);
    const std::vector<std::string> reports = group_->AllGather(report);
    if (rank_ == 0) {
      try {
        MergeGroupEntries(reports);
        WriteIndex();
        MoveIntoPlace();
      } catch (...) {
        error = std::current_exception();
      }
    }
    AgreeOnOutcome(*group_, error, what);
  } catch (...) {
    Abort();
    throw;
  }
  finished_ = true;
  pending_.clear();
  if (rank_ == 0) RemoveDataFilesOfOtherLayouts();
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
      proto.set_shard_id(info.shard_id);
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
  for (size_t shard = 0; shard < data_paths_.size(); ++shard) {
    internal::RenameFile(temp_data_paths_[shard], data_paths_[shard]);
    data_moved_ = true;
  }
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
