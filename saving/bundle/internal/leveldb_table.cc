#include "saving/bundle/internal/leveldb_table.h"

#include <leveldb/env.h>
#include <leveldb/options.h>
#include <leveldb/table_builder.h>

#include <exception>
#include <string>

#include "runtime/errors.h"

namespace eager::internal {
namespace {

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

leveldb::Options TfTableOptions() {
  leveldb::Options options;
  options.block_size = 256 * 1024;
  options.block_restart_interval = 16;
  options.compression = leveldb::kNoCompression;
  return options;
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

}  // namespace eager::internal
