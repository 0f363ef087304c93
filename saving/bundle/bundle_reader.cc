#include "saving/bundle/bundle_reader.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <filesystem>
#include <tuple>

#include "runtime/tensor_access.h"
#include "runtime/threads.h"
#include "saving/bundle/bundle_files.h"
#include "saving/bundle/coding.h"
#include "saving/bundle/crc32c.h"
#include "saving/bundle/internal/crc32c_poly.h"
#include "saving/bundle/internal/helper_thread.h"
#include "saving/bundle/internal/read_chunking.h"
#include "saving/bundle/internal/string_tensor_crc.h"
#include "saving/bundle/internal/table_reader.h"
#include "saving/bundle/partitioned_variables.h"
#include "saving/bundle/posix_file.h"
#include "saving/proto/tensor_bundle.pb.h"

namespace eager {
namespace {

namespace crc32c = internal::crc32c;

constexpr int kTensorBundleVersion = 1;  // the consumer version we implement
constexpr int kTfResource = 20;          // DT_RESOURCE (types.proto)
constexpr int kTfVariant = 21;           // DT_VARIANT
// Data files are named PREFIX.data-SSSSS-of-NNNNN (bundle_files.h).
constexpr int kMaxShards = 99999;
// Tensor bytes are read and checksummed in pieces (internal/read_chunking.h;
// 1 MiB by default), so that each piece is checksummed while it is still in
// cache. Fixed-size tensors from 4 MiB on (by default) are read by two
// threads at once when two are allowed. Why two threads: one pread(2) copies
// from the page cache at ~7 GB/s on one core (the kernel's copy), and the CRC
// of the same bytes, even at ~60 GB/s (carry-less multiply), adds ~10% on
// that core; two threads reading at once hide the CRC and use the second
// core's copy bandwidth too. Below that size the hand-off (~tens of us when
// the helper sleeps) would cost more than it saves. Chunks are shared out,
// not halves: on a loaded machine the helper may wake late or not at all.
using internal::ReadChunking;
// Joining the CRCs of whole chunks multiplies by this (crc32c::CombineShift).
constexpr uint32_t kDefaultChunkShift =
    crc32c::ZeroBytesMultiplier(ReadChunking::kDefaultChunkBytes);

// Whether `path` is a regular file ending in the LevelDB table magic.
bool IsTableFile(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  try {
    auto file = internal::RandomAccessFile::Open(path.string());
    char magic[8];
    return file->size() >= 48 && file->ReadAt(file->size() - 8, 8, magic) == 8 &&
           internal::DecodeFixed64(magic) == 0xdb4775248b80fb57ull;
  } catch (const Error&) {
    return false;
  }
}

// A V1 checkpoint is one or more TensorSlice tables named PREFIX or
// PREFIX-SSSSS-of-NNNNN (FORMAT.md 2.9).
bool LooksLikeV1Checkpoint(const std::string& prefix) {
  if (IsTableFile(prefix)) return true;
  const std::filesystem::path path(prefix);
  const std::string base = path.filename().string();
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  std::error_code ec;
  // increment(ec), not ++: nothing here may throw std::filesystem_error.
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::filesystem::path& item = it->path();
    const std::string name = item.filename().string();
    // BASE-00000-of-00001: 15 characters after BASE.
    if (name.size() == base.size() + 15 && name.compare(0, base.size(), base) == 0 &&
        name.compare(base.size(), 1, "-") == 0 && name.compare(base.size() + 6, 4, "-of-") == 0 &&
        IsTableFile(item)) {
      return true;
    }
  }
  return false;
}

// Throws the most helpful error when PREFIX.index is missing: a file name
// given as the prefix, a legacy V1 checkpoint, or plainly nothing there.
void CheckIndexFileExists(const std::string& prefix, const std::string& index_path) {
  if (internal::FileExists(index_path)) return;
  // A V2 file name passed as the prefix is the likely mistake, and the
  // .index file is itself a table: check this before the V1 test.
  if (prefix.ends_with(".index") || prefix.find(".data-") != std::string::npos) {
    throw NotFoundError(StrCat("Failed to find the checkpoint index file ", index_path,
                               ": pass the checkpoint prefix, without the .index or .data-* "
                               "suffix (got ",
                               prefix, ")"));
  }
  if (LooksLikeV1Checkpoint(prefix)) {
    throw UnimplementedError(
        StrCat("Checkpoint ", prefix,
               " is in the legacy V1 (TensorSlice) format, which is not "
               "supported; only V2 TensorBundles (PREFIX.index + PREFIX.data-*) can be read. "
               "Re-save it with a TensorFlow Saver using write_version=tf.train.SaverDef.V2"));
  }
  throw NotFoundError(StrCat("Failed to find the checkpoint index file ", index_path,
                             " for checkpoint prefix ", prefix));
}

struct BundleHeader {
  int num_shards = 0;
  bool big_endian = false;
};

// The BundleHeaderProto under the empty key (FORMAT.md 2.3), with TF's
// version checks.
BundleHeader ParseHeader(std::string_view value, const std::string& index_path) {
  eager::tfproto::BundleHeaderProto header;
  if (!header.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
    throw DataLossError(StrCat("Cannot parse the BundleHeaderProto in ", index_path));
  }
  if (header.num_shards() <= 0) {
    if (header.GetReflection()->GetUnknownFields(header).field_count() > 0) {
      throw UnimplementedError(
          StrCat(index_path,
                 " is a table but its header is not a BundleHeaderProto: it looks "
                 "like a legacy V1 (TensorSlice) checkpoint, which is not supported"));
    }
    throw DataLossError(StrCat("Checkpoint index ", index_path, " has num_shards ",
                               header.num_shards(), " in its header; expected >= 1"));
  }
  if (header.num_shards() > kMaxShards) {
    throw DataLossError(StrCat("Checkpoint index ", index_path, " has num_shards ",
                               header.num_shards(), " in its header; expected at most ", kMaxShards,
                               " (data file names number shards in 5 digits)"));
  }
  const auto& version = header.version();
  if (version.producer() < 0) {
    throw DataLossError(StrCat("Checkpoint ", index_path, " has producer version ",
                               version.producer(), ", below the minimum 0"));
  }
  if (version.min_consumer() > kTensorBundleVersion ||
      std::ranges::find(version.bad_consumers(), kTensorBundleVersion) !=
          version.bad_consumers().end()) {
    throw UnimplementedError(
        StrCat("Checkpoint ", index_path, " requires TensorBundle consumer version ",
               version.min_consumer(), " (bad consumers: ", version.bad_consumers_size(),
               "); this reader implements version ", kTensorBundleVersion));
  }
  return {.num_shards = header.num_shards(),
          .big_endian = header.endianness() == eager::tfproto::BundleHeaderProto::BIG};
}

// Appends the dims of `shape` to `dims` and sets `num_elements`; false for an
// unknown rank, a negative dim, or an element count that overflows int64.
bool ParseDims(const eager::tfproto::TensorShapeProto& shape, std::vector<int64_t>& dims,
               int64_t& num_elements) {
  bool valid = !shape.unknown_rank();
  num_elements = 1;
  for (const auto& dim : shape.dim()) {
    dims.push_back(dim.size());
    if (dim.size() < 0 || __builtin_mul_overflow(num_elements, dim.size(), &num_elements)) {
      valid = false;
    }
  }
  return valid;
}

// Where the bytes of an unsliced entry are, and whether `size` can hold its
// elements: exactly num_elements x dtype size for a fixed-size dtype, at
// least 4 + one byte per element for strings.
void CheckEntryLocation(std::string_view key, const BundleReader::Entry& entry,
                        int64_t num_elements, int num_shards, const std::string& index_path) {
  if (entry.shard_id < 0 || entry.shard_id >= num_shards) {
    throw DataLossError(StrCat("Key '", key, "' in ", index_path, " is in shard ", entry.shard_id,
                               " but the bundle has ", num_shards, " shards"));
  }
  if (entry.offset < 0 || entry.size < 0) {
    throw DataLossError(StrCat("Key '", key, "' in ", index_path, " has offset ", entry.offset,
                               " and size ", entry.size, "; expected both >= 0"));
  }
  if (entry.dtype && *entry.dtype != DType::kString) {
    int64_t expected = 0;
    if (__builtin_mul_overflow(num_elements, static_cast<int64_t>(DTypeSize(*entry.dtype)),
                               &expected) ||
        expected != entry.size) {
      throw DataLossError(StrCat("Invalid size in bundle entry: key '", key, "'; stored size ",
                                 entry.size, "; expected size ", expected, " for ",
                                 DimsToString(entry.dims), " ", *entry.dtype, " in ", index_path));
    }
  } else if (entry.dtype == DType::kString && (entry.size < 4 || entry.size - 4 < num_elements)) {
    throw DataLossError(StrCat("Invalid size in bundle entry: key '", key, "'; stored size ",
                               entry.size, " is below the minimum (4 + one byte per string) for ",
                               num_elements, " strings in ", index_path));
  }
}

// One BundleEntryProto (FORMAT.md 2.4), checked as far as the index alone
// allows; the data file's size is checked on Read.
BundleReader::Entry ParseEntry(std::string_view key, std::string_view value, int num_shards,
                               const std::string& index_path) {
  eager::tfproto::BundleEntryProto proto;
  if (!proto.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
    throw DataLossError(
        StrCat("Cannot parse the BundleEntryProto of key '", key, "' in ", index_path));
  }
  BundleReader::Entry entry;
  entry.tf_dtype = proto.dtype();
  entry.dtype = DTypeFromTfDataType(entry.tf_dtype);
  // A stored variant is a serialized VariantTensorDataProto: kept opaque,
  // as DT_RESOURCE's bytes are (eager's variants live in memory only).
  if (entry.dtype == DType::kVariant) entry.dtype = std::nullopt;
  entry.shard_id = proto.shard_id();
  entry.offset = proto.offset();
  entry.size = proto.size();
  entry.masked_crc32c = proto.crc32c();
  entry.num_slices = proto.slices_size();
  for (const auto& slice : proto.slices()) {
    TensorSlice extents;
    for (const auto& e : slice.extent()) {
      extents.push_back(
          {.start = e.start(),
           .length = e.has_length_case() == eager::tfproto::TensorSliceProto::Extent::kLength
                         ? e.length()
                         : SliceExtent::kWhole});
    }
    entry.slices.push_back(std::move(extents));
  }
  int64_t num_elements = 0;
  if (!ParseDims(proto.shape(), entry.dims, num_elements)) {
    throw DataLossError(
        StrCat("Invalid tensor shape: key '", key, "' has shape ",
               proto.shape().unknown_rank() ? "<unknown rank>" : DimsToString(entry.dims), " in ",
               index_path));
  }
  if (entry.num_slices == 0) CheckEntryLocation(key, entry, num_elements, num_shards, index_path);
  return entry;
}

}  // namespace

Shape BundleReader::Entry::shape() const {
  if (dims.size() > static_cast<size_t>(Shape::kMaxRank)) {
    throw UnimplementedError(StrCat("Tensor shape ", DimsToString(dims), " has rank ", dims.size(),
                                    "; eager supports ranks up to ", Shape::kMaxRank));
  }
  return Shape(std::span<const int64_t>(dims.data(), dims.size()));
}

int64_t BundleReader::Entry::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;  // validated at load: no overflow
  return n;
}

BundleReader::BundleReader(std::string prefix, BundleReaderOptions options)
    : prefix_(std::move(prefix)), index_path_(IndexFilename(prefix_)) {
  if (options.num_threads < 0) {
    throw InvalidArgumentError(StrCat("BundleReaderOptions::num_threads must be >= 0, got ",
                                      options.num_threads, " (reading checkpoint ", prefix_, ")"));
  }
  num_threads_ = options.num_threads;
  CheckIndexFileExists(prefix_, index_path_);
  const auto index = internal::RandomAccessFile::Open(index_path_);
  std::optional<BundleHeader> header;
  internal::ReadTable(*index, [&](std::string_view key, std::string_view value) {
    if (key.empty()) {
      header = ParseHeader(value, index_path_);
      return;
    }
    if (!header) {
      throw DataLossError(StrCat("Checkpoint index ", index_path_,
                                 " has no header entry (the empty key) before key '", key, "'"));
    }
    auto [it, inserted] =
        entries_.emplace(std::string(key), ParseEntry(key, value, header->num_shards, index_path_));
    for (const TensorSlice& slice : it->second.slices) {
      slice_keys_.insert(internal::EncodeTensorNameSlice(key, slice));
    }
  });
  if (!header) {
    throw DataLossError(
        StrCat("Checkpoint index ", index_path_, " has no header entry (the empty key)"));
  }
  if (header->big_endian) {
    throw UnimplementedError(StrCat("Checkpoint ", prefix_,
                                    " stores its tensors big-endian; only little-endian "
                                    "bundles are supported"));
  }
  num_shards_ = header->num_shards;
  data_files_.resize(static_cast<size_t>(num_shards_));  // <= kMaxShards pointers
}

BundleReader::~BundleReader() = default;

std::vector<std::string> BundleReader::Keys() const {
  std::vector<std::string> keys;
  keys.reserve(entries_.size());
  for (const auto& [key, entry] : entries_) keys.push_back(key);
  return keys;
}

bool BundleReader::Contains(std::string_view key) const { return entries_.contains(key); }

const BundleReader::Entry& BundleReader::GetEntry(std::string_view key) const {
  const auto it = entries_.find(key);
  if (it == entries_.end()) {
    throw NotFoundError(StrCat("Key ", key, " not found in checkpoint ", prefix_));
  }
  return it->second;
}

const internal::RandomAccessFile& BundleReader::DataFile(int shard) const {
  std::lock_guard<std::mutex> lock(data_mu_);
  auto& file = data_files_[static_cast<size_t>(shard)];
  if (!file) file = internal::RandomAccessFile::Open(DataFilename(prefix_, shard, num_shards_));
  return *file;
}

bool BundleReader::IsSliceOfPartitionedVariable(std::string_view key) const {
  return slice_keys_.contains(key);
}

// Read at each Read, not at construction: SetNumThreads applies from the
// next piece of work on, for readers already open too.
int BundleReader::ReadThreads() const {
  return std::min(2, num_threads_ == 0 ? GetNumThreads() : num_threads_);
}

Tensor BundleReader::Read(std::string_view key) const {
  const Entry& entry = GetEntry(key);
  if (entry.num_slices > 0 && entry.dtype) return ReadPartitioned(key, entry);
  if (!entry.dtype) {
    throw UnimplementedError(StrCat("Key ", key, " in checkpoint ", prefix_, " has dtype ",
                                    TfDataTypeName(entry.tf_dtype),
                                    ", which eager does not support"));
  }
  const EntryBytes bytes{key, entry, DataFileOf(key, entry)};
  if (*entry.dtype == DType::kString) return ReadStringTensor(bytes);
  return ReadFixedSizeTensor(bytes, ReadThreads());
}

Tensor BundleReader::ReadPartitioned(std::string_view key, const Entry& entry) const {
  std::vector<internal::StoredSlice> stored;
  std::vector<std::string> slice_keys;
  struct Range {
    int shard;
    int64_t offset, size;
    size_t slice;
  };
  std::vector<Range> ranges;
  for (const TensorSlice& slice : entry.slices) {
    std::string slice_key = internal::EncodeTensorNameSlice(key, slice);
    const auto it = entries_.find(slice_key);
    if (it == entries_.end() || it->second.num_slices > 0) {
      throw DataLossError(StrCat("Partitioned variable ", key, " in checkpoint ", prefix_,
                                 ": slice \"", SliceToString(slice), "\" ",
                                 it == entries_.end() ? "has no entry in " : "is itself sliced in ",
                                 index_path_, " (expected an entry under the slice's key)"));
    }
    (void)DataFileOf(key, it->second);  // inside its data file, before anything is allocated
    ranges.push_back({it->second.shard_id, it->second.offset, it->second.size, stored.size()});
    stored.push_back({slice, it->second.tf_dtype, it->second.dims});
    slice_keys.push_back(std::move(slice_key));
  }
  // Slices never share data-file bytes (TF writes each once), so the full
  // tensor is no larger than the data files: check it before allocating.
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    return std::tie(a.shard, a.offset) < std::tie(b.shard, b.offset);
  });
  for (size_t i = 1; i < ranges.size(); ++i) {
    const Range& a = ranges[i - 1];
    const Range& b = ranges[i];
    if (a.shard == b.shard && a.size > 0 && b.size > 0 && b.offset < a.offset + a.size) {
      throw DataLossError(StrCat("Partitioned variable ", key, " in checkpoint ", prefix_,
                                 ": slices \"", SliceToString(entry.slices[a.slice]), "\" and \"",
                                 SliceToString(entry.slices[b.slice]), "\" share bytes of ",
                                 DataFilename(prefix_, a.shard, num_shards_)));
    }
  }
  return internal::AssembleSlices(key, prefix_, *entry.dtype, entry.shape(), stored,
                                  [&](size_t i) { return Read(slice_keys[i]); });
}

void BundleReader::VerifyChecksum(std::string_view key) const {
  const Entry& entry = GetEntry(key);
  if (entry.dtype && entry.dims.size() <= static_cast<size_t>(Shape::kMaxRank)) {
    (void)Read(key);
    return;
  }
  if (entry.num_slices == 0 && entry.tf_dtype == kTfVariant) {
    CheckVariantBytes(EntryBytes{key, entry, DataFileOf(key, entry)});
    return;
  }
  if (entry.num_slices == 0 && entry.tf_dtype == kTfResource) {
    // TF's writer stores a resource tensor's raw in-memory bytes (never
    // restorable) and their CRC; the size is the writer's, not ours to check.
    CheckRawBytes(EntryBytes{key, entry, DataFileOf(key, entry)});
    return;
  }
  const int width = TfDataTypeSize(entry.tf_dtype);
  if (width == 0 || entry.num_slices > 0) {
    throw UnimplementedError(StrCat(
        "Key ", key, " in checkpoint ", prefix_, " has dtype ", TfDataTypeName(entry.tf_dtype),
        entry.num_slices > 0 ? " and is sliced" : "", ", whose checksum eager cannot check"));
  }
  int64_t expected = 1;
  for (int64_t d : entry.dims) expected *= d;  // validated at load: no overflow
  if (__builtin_mul_overflow(expected, int64_t{width}, &expected) || expected != entry.size) {
    throw DataLossError(StrCat("Invalid size in bundle entry: key '", key, "'; stored size ",
                               entry.size, "; expected size ", expected, " for ",
                               DimsToString(entry.dims), " ", TfDataTypeName(entry.tf_dtype),
                               " in ", index_path_));
  }
  CheckRawBytes(EntryBytes{key, entry, DataFileOf(key, entry)});
}

void BundleReader::CheckRawBytes(const EntryBytes& in) {
  const int64_t size = in.entry.size;
  const auto chunk_bytes = static_cast<int64_t>(
      std::min(internal::CurrentReadChunking().chunk_bytes, static_cast<uint64_t>(size)));
  std::string chunk(static_cast<size_t>(chunk_bytes), '\0');
  uint32_t crc = 0;
  for (int64_t done = 0; done < size;) {
    const size_t len = static_cast<size_t>(std::min<int64_t>(size - done, chunk_bytes));
    in.ReadExactly(static_cast<uint64_t>(done), len, chunk.data());
    crc = crc32c::Extend(crc, chunk.data(), len);
    done += static_cast<int64_t>(len);
  }
  in.CheckCrc(crc);
}

// DT_VARIANT (TF's WriteVariantTensor): per element a varint64 length, the
// serialized VariantTensorDataProto, then the masked running CRC so far; the
// running CRC covers each length as a little-endian uint64, the bytes, and
// each stored 4-byte checksum. Memory: the entry's bytes (at most the file's).
void BundleReader::CheckVariantBytes(const EntryBytes& in) {
  const std::string_view key = in.key;
  const std::string& path = in.file.path();
  const std::string raw = in.ReadAll();
  std::string_view rest(raw);
  const int64_t n = in.entry.num_elements();
  uint32_t crc = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t len = in.ConsumeLength(rest, "DT_VARIANT", i);
    if (len > rest.size() || rest.size() - len < 4) {
      throw DataLossError(StrCat("Key ", key, " in ", path, ": DT_VARIANT element ", i,
                                 " has length ", len, " but only ", rest.size(),
                                 " bytes of the entry remain (with its 4-byte checksum)"));
    }
    std::string len_bytes;
    internal::PutFixed64(len_bytes, len);
    crc = crc32c::Extend(crc, len_bytes.data(), len_bytes.size());
    crc = crc32c::Extend(crc, rest.data(), static_cast<size_t>(len));
    rest.remove_prefix(static_cast<size_t>(len));
    const char* stored_bytes = rest.data();
    uint32_t stored = 0;
    internal::GetFixed32(rest, stored);
    if (crc32c::Unmask(stored) != crc) {
      throw DataLossError(StrCat("Checksum does not match for key ", key, " in ", path,
                                 ": DT_VARIANT element ", i, " stores ", crc32c::Unmask(stored),
                                 " vs. calculated on the restored bytes ", crc));
    }
    crc = crc32c::Extend(crc, stored_bytes, 4);
  }
  if (!rest.empty()) {
    throw DataLossError(StrCat("Key ", key, " in ", path, ": its ", n, " DT_VARIANT elements end ",
                               rest.size(), " bytes before the entry's size ", in.entry.size));
  }
  in.CheckCrc(crc);
}

const internal::RandomAccessFile& BundleReader::DataFileOf(std::string_view key,
                                                           const Entry& entry) const {
  const internal::RandomAccessFile* file = nullptr;
  try {
    file = &DataFile(entry.shard_id);
  } catch (const NotFoundError& e) {
    throw NotFoundError(StrCat(e.what(), " (the data file of key ", key, ")"));
  }
  const auto offset = static_cast<uint64_t>(entry.offset);
  const auto size = static_cast<uint64_t>(entry.size);
  if (offset > file->size() || size > file->size() - offset) {
    throw DataLossError(StrCat("Key ", key, " needs bytes [", offset, ", ", offset + size, ") of ",
                               file->path(), ", which has only ", file->size(),
                               " bytes (truncated?)"));
  }
  return *file;
}

// DataFileOf checked the entry against the file's size when it was opened, so
// a short read here means the file shrank since.
void BundleReader::EntryBytes::ReadExactly(uint64_t at, size_t n, void* dst) const {
  const uint64_t offset = static_cast<uint64_t>(entry.offset) + at;
  const size_t got = file.ReadAt(offset, n, dst);
  if (got != n) {
    throw DataLossError(StrCat("Short read of key ", key, " from ", file.path(), ": expected ", n,
                               " bytes at offset ", offset, " (the key's bytes are [", entry.offset,
                               ", ", entry.offset + entry.size, ")), got ", got,
                               "; the file shrank while reading?"));
  }
}

void BundleReader::EntryBytes::CheckCrc(uint32_t actual) const {
  if (crc32c::Mask(actual) != entry.masked_crc32c) {
    throw DataLossError(StrCat("Checksum does not match for key ", key, " in ", file.path(),
                               ": stored ", crc32c::Unmask(entry.masked_crc32c),
                               " vs. calculated on the restored bytes ", actual));
  }
}

std::string BundleReader::EntryBytes::ReadAll() const {
  std::string raw(static_cast<size_t>(entry.size), '\0');
  ReadExactly(0, raw.size(), raw.data());
  return raw;
}

uint64_t BundleReader::EntryBytes::ConsumeLength(std::string_view& rest, std::string_view kind,
                                                 int64_t i) const {
  uint64_t len = 0;
  if (!internal::GetVarint64(rest, len)) {
    throw DataLossError(StrCat("Key ", key, " in ", file.path(), ": cannot decode the length of ",
                               kind, " element ", i, " of ", entry.num_elements()));
  }
  return len;
}

uint32_t BundleReader::ReadAndChecksum(const EntryBytes& in, char* out, uint64_t begin,
                                       uint64_t end, uint64_t chunk_bytes) {
  uint32_t crc = 0;
  for (uint64_t done = begin; done < end;) {
    const size_t len = static_cast<size_t>(std::min<uint64_t>(end - done, chunk_bytes));
    in.ReadExactly(done, len, out + done);
    crc = crc32c::Extend(crc, out + done, len);
    done += len;
  }
  return crc;
}

// The chunks are claimed in order from one counter by this thread and the
// helper; each chunk's CRC is kept and the CRCs are joined in order at the
// end. A failing chunk stops further claims, and the error of the first
// failing chunk is thrown: every chunk before it was claimed, so read, and
// the error is the one a front-to-back read would have thrown.
uint32_t BundleReader::ReadAndChecksumShared(const EntryBytes& in, char* out, uint64_t size,
                                             uint64_t chunk_bytes) {
  struct Shared {
    const EntryBytes& in;
    char* out;
    uint64_t size;
    uint64_t chunk_bytes;
    std::vector<uint32_t> crcs;
    std::vector<std::exception_ptr> errors;
    std::atomic<uint64_t> next{0};
    std::atomic<bool> failed{false};

    static void Work(void* context) {
      auto& s = *static_cast<Shared*>(context);
      for (;;) {
        if (s.failed.load(std::memory_order_relaxed)) return;
        const uint64_t chunk = s.next.fetch_add(1, std::memory_order_relaxed);
        if (chunk >= s.crcs.size()) return;
        const uint64_t begin = chunk * s.chunk_bytes;
        try {
          s.crcs[chunk] = ReadAndChecksum(s.in, s.out, begin,
                                          std::min(s.size, begin + s.chunk_bytes), s.chunk_bytes);
        } catch (...) {
          s.errors[chunk] = std::current_exception();
          s.failed.store(true, std::memory_order_relaxed);
        }
      }
    }
  };
  const uint64_t chunks = (size - 1) / chunk_bytes + 1;  // size >= 1, <= the file's
  Shared shared{in,
                out,
                size,
                chunk_bytes,
                std::vector<uint32_t>(chunks),
                std::vector<std::exception_ptr>(chunks)};
  internal::RunShared(&Shared::Work, &shared);  // returns after the helper's last chunk
  for (const std::exception_ptr& error : shared.errors) {
    if (error) std::rethrow_exception(error);
  }
  const uint32_t shift = chunk_bytes == ReadChunking::kDefaultChunkBytes
                             ? kDefaultChunkShift
                             : crc32c::CombineShift(chunk_bytes);
  uint32_t crc = shared.crcs[0];
  for (uint64_t i = 1; i + 1 < chunks; ++i) {
    crc = crc32c::CombineWithShift(crc, shared.crcs[i], shift);
  }
  if (chunks > 1)
    crc = crc32c::Combine(crc, shared.crcs[chunks - 1], size - (chunks - 1) * chunk_bytes);
  return crc;
}

// Memory: the tensor itself; the bytes are read into it in chunks, each
// checksummed while still in cache.
Tensor BundleReader::ReadFixedSizeTensor(const EntryBytes& in, int threads) {
  const DType dtype = *in.entry.dtype;
  Tensor tensor = internal::NewTensor(in.entry.shape(), dtype);
  auto* out = static_cast<char*>(internal::MutableRawData(tensor));
  const auto size = static_cast<uint64_t>(in.entry.size);  // == the tensor's bytes (checked)
  const ReadChunking chunking = internal::CurrentReadChunking();
  uint32_t crc = 0;
  if (threads >= 2 && size >= chunking.split_min_bytes) {
    crc = ReadAndChecksumShared(in, out, size, chunking.chunk_bytes);
  } else {
    crc = ReadAndChecksum(in, out, 0, size, chunking.chunk_bytes);
  }
  in.CheckCrc(crc);
  if (dtype == DType::kBool) {
    // A byte other than 0 or 1 is not a bool value; reading it as one is UB.
    const auto* bytes = reinterpret_cast<const uint8_t*>(out);
    for (uint64_t i = 0; i < size; ++i) {
      if (bytes[i] > 1) {
        throw DataLossError(StrCat("Key ", in.key, " in ", in.file.path(), ": bool element ", i,
                                   " has byte value ", int{bytes[i]}, "; expected 0 or 1"));
      }
    }
  }
  return tensor;
}

// Strings (FORMAT.md 2.7): varint64 lengths, the masked CRC of the lengths,
// then the bytes. Memory: the entry's bytes (at most the file's, checked),
// then the tensor built from them.
Tensor BundleReader::ReadStringTensor(const EntryBytes& in) {
  const std::string_view key = in.key;
  const std::string& path = in.file.path();
  const std::string raw = in.ReadAll();
  std::string_view rest(raw);
  const int64_t n = in.entry.num_elements();
  std::vector<uint64_t> lengths(static_cast<size_t>(n));  // n <= size - 4 (checked at load)
  uint32_t crc = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t len = in.ConsumeLength(rest, "string", i);
    lengths[static_cast<size_t>(i)] = len;
    crc = internal::ExtendCrcWithStringLength(crc, len);
  }
  uint32_t masked_length_crc = 0;
  const char* masked_bytes = rest.data();
  if (!internal::GetFixed32(rest, masked_length_crc)) {
    throw DataLossError(
        StrCat("Key ", key, " in ", path, ": string tensor ends before its length checksum"));
  }
  if (crc32c::Unmask(masked_length_crc) != crc) {
    throw DataLossError(StrCat("The length checksum does not match for key ", key, " in ", path,
                               ": expected ", crc32c::Unmask(masked_length_crc), " but actual is ",
                               crc));
  }
  crc = crc32c::Extend(crc, masked_bytes, 4);
  uint64_t remaining = rest.size();
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t len = lengths[static_cast<size_t>(i)];
    if (len > remaining) {
      throw DataLossError(StrCat("Key ", key, " in ", path, ": string element ", i, " has length ",
                                 len, " but only ", remaining, " bytes of the entry remain"));
    }
    remaining -= len;
  }
  if (remaining != 0) {
    throw DataLossError(StrCat("Key ", key, " in ", path, ": the string lengths add up to ",
                               rest.size() - remaining, " bytes but the entry holds ",
                               rest.size()));
  }
  in.CheckCrc(crc32c::Extend(crc, rest.data(), rest.size()));
  Tensor tensor = internal::NewTensor(in.entry.shape(), DType::kString);
  std::string* out = internal::MutableData<std::string>(tensor);
  for (int64_t i = 0; i < n; ++i) {
    const auto len = static_cast<size_t>(lengths[static_cast<size_t>(i)]);
    out[i].assign(rest.data(), len);
    rest.remove_prefix(len);
  }
  return tensor;
}

}  // namespace eager
