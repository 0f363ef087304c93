#include "saving/internal/leveldb_table.h"

#include <leveldb/env.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/table.h>
#include <leveldb/table_builder.h>

#include <exception>
#include <string>

#include "runtime/errors.h"
#include "saving/internal/coding.h"
#include "saving/internal/crc32c.h"

namespace eager::internal {
namespace {

constexpr size_t kFooterSize = 48;  // two padded BlockHandles + 8-byte magic
constexpr size_t kBlockTrailerSize = 5;
constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;

// LevelDB code is not written for exceptions, so ours stop here and come back
// out (unchanged) once control is back in our code.
class LeveldbWritableFile final : public leveldb::WritableFile {
 public:
  explicit LeveldbWritableFile(internal::WritableFile* file) : file_(file) {}

  leveldb::Status Append(const leveldb::Slice& data) override {
    return Guard([&] { file_->Append(data.data(), data.size()); });
  }
  leveldb::Status Close() override { return leveldb::Status::OK(); }  // the owner closes
  leveldb::Status Flush() override { return leveldb::Status::OK(); }  // TableBuilder::Flush
  leveldb::Status Sync() override {
    return Guard([&] { file_->Sync(); });
  }

  void RethrowIfFailed() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  template <typename F>
  leveldb::Status Guard(F&& f) {
    try {
      f();
      return leveldb::Status::OK();
    } catch (...) {
      if (!error_) error_ = std::current_exception();
      return leveldb::Status::IOError(file_->path());
    }
  }

  internal::WritableFile* file_;
  std::exception_ptr error_;
};

class LeveldbRandomAccessFile final : public leveldb::RandomAccessFile {
 public:
  explicit LeveldbRandomAccessFile(const internal::RandomAccessFile& file) : file_(file) {}

  // A short read is not an error here: LevelDB sees the short result and
  // reports "truncated block read".
  leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result,
                       char* scratch) const override {
    try {
      const size_t got = offset >= file_.size() ? 0 : file_.ReadAt(offset, n, scratch);
      *result = leveldb::Slice(scratch, got);
      return leveldb::Status::OK();
    } catch (const std::exception& e) {
      *result = leveldb::Slice();
      return leveldb::Status::IOError(e.what());
    }
  }

 private:
  const internal::RandomAccessFile& file_;
};

leveldb::Options TfTableOptions() {
  leveldb::Options options;
  options.block_size = 256 * 1024;
  options.block_restart_interval = 16;
  options.compression = leveldb::kNoCompression;
  options.paranoid_checks = true;  // makes Table::Open verify the index block CRC
  return options;
}

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;
};

// Decodes a BlockHandle and checks that the block and its trailer lie inside
// [0, limit).
// Non-minimal varints (an 0x80 continuation before a zero byte) are refused
// too: no writer produces them, so they can only be corruption.
bool DecodeHandle(std::string_view& in, uint64_t limit, BlockHandle& handle) {
  const size_t before = in.size();
  if (!GetVarint64(in, handle.offset) || !GetVarint64(in, handle.size)) return false;
  if (before - in.size() !=
      static_cast<size_t>(VarintLength(handle.offset) + VarintLength(handle.size))) {
    return false;
  }
  return handle.offset <= limit && handle.size <= limit - handle.offset &&
         kBlockTrailerSize <= limit - handle.offset - handle.size;
}

}  // namespace

struct TableWriter::Impl {
  explicit Impl(internal::WritableFile* file)
      : adapter(file), options(TfTableOptions()), builder(options, &adapter) {}
  LeveldbWritableFile adapter;
  leveldb::Options options;
  leveldb::TableBuilder builder;
  std::string last_key;
  bool has_key = false;
  bool finished = false;
};

TableWriter::TableWriter(WritableFile* file) : impl_(std::make_unique<Impl>(file)) {}

TableWriter::~TableWriter() {
  if (!impl_->finished) impl_->builder.Abandon();
}

void TableWriter::Add(std::string_view key, std::string_view value) {
  // LevelDB only asserts this in debug builds; a release build would write
  // a table nobody can search.
  EAGER_INTERNAL_CHECK(!impl_->has_key || key > std::string_view(impl_->last_key));
  impl_->last_key.assign(key);
  impl_->has_key = true;
  impl_->builder.Add(leveldb::Slice(key.data(), key.size()),
                     leveldb::Slice(value.data(), value.size()));
  impl_->adapter.RethrowIfFailed();
  if (!impl_->builder.status().ok()) {
    throw InternalError(StrCat("TableBuilder::Add: ", impl_->builder.status().ToString()));
  }
}

void TableWriter::Finish() {
  impl_->finished = true;
  const leveldb::Status status = impl_->builder.Finish();
  impl_->adapter.RethrowIfFailed();
  if (!status.ok()) throw InternalError(StrCat("TableBuilder::Finish: ", status.ToString()));
}

void ReadTable(const RandomAccessFile& file,
               const std::function<void(std::string_view, std::string_view)>& visit) {
  const uint64_t size = file.size();
  if (size < kFooterSize) {
    throw DataLossError(StrCat("Cannot read checkpoint index ", file.path(), ": the file has ",
                               size, " bytes, less than the 48-byte table footer (truncated?)"));
  }
  // The footer carries no checksum, so its handles are checked here: LevelDB
  // allocates a block's size before reading (and checksumming) it.
  char footer[kFooterSize];
  if (file.ReadAt(size - kFooterSize, kFooterSize, footer) != kFooterSize) {
    throw DataLossError(StrCat("Cannot read the footer of ", file.path()));
  }
  if (DecodeFixed64(footer + kFooterSize - 8) != kTableMagic) {
    throw DataLossError(StrCat("Cannot read checkpoint index ", file.path(),
                               ": not a table (bad magic number in the last 8 bytes)"));
  }
  std::string_view handles(footer, kFooterSize - 8);
  const uint64_t limit = size - kFooterSize;
  BlockHandle metaindex;
  BlockHandle index;
  if (!DecodeHandle(handles, limit, metaindex) || !DecodeHandle(handles, limit, index) ||
      handles.find_first_not_of('\0') != std::string_view::npos) {
    throw DataLossError(StrCat("Cannot read checkpoint index ", file.path(),
                               ": corrupted footer (block handles outside the ", size,
                               "-byte file, or non-zero padding)"));
  }
  // Readers never use the metaindex block (no filters in a bundle), so
  // LevelDB would not notice its corruption; TF's files always have a valid one.
  std::string block(metaindex.size + kBlockTrailerSize, '\0');
  if (file.ReadAt(metaindex.offset, block.size(), block.data()) != block.size() ||
      crc32c::Unmask(DecodeFixed32(block.data() + metaindex.size + 1)) !=
          crc32c::Value(block.data(), metaindex.size + 1)) {
    throw DataLossError(StrCat("Cannot read checkpoint index ", file.path(),
                               ": metaindex block checksum mismatch"));
  }

  LeveldbRandomAccessFile adapter(file);
  const leveldb::Options options = TfTableOptions();
  leveldb::Table* raw_table = nullptr;
  leveldb::Status status = leveldb::Table::Open(options, &adapter, size, &raw_table);
  std::unique_ptr<leveldb::Table> table(raw_table);
  if (!status.ok()) {
    throw DataLossError(
        StrCat("Cannot read checkpoint index ", file.path(), ": ", status.ToString()));
  }
  leveldb::ReadOptions read_options;
  read_options.verify_checksums = true;
  read_options.fill_cache = false;
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(read_options));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const leveldb::Slice key = it->key();
    const leveldb::Slice value = it->value();
    visit(std::string_view(key.data(), key.size()), std::string_view(value.data(), value.size()));
  }
  if (!it->status().ok()) {
    throw DataLossError(
        StrCat("Cannot read checkpoint index ", file.path(), ": ", it->status().ToString()));
  }
}

}  // namespace eager::internal
