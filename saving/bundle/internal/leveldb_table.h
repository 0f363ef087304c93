#pragma once

// Writes the .index file as a LevelDB table (FORMAT.md 2.2) through LevelDB's
// own TableBuilder, whose bytes match TF's, on top of our POSIX files. The
// LevelDB types stay in leveldb_table.cc. Reading is table_reader.h: LevelDB's
// Table trusts its input, our reader does not.

#include <memory>
#include <string_view>

#include "saving/bundle/posix_file.h"

namespace eager::internal {

// Writes (key, value) pairs, in strictly increasing bytewise key order, as a
// table with TensorFlow's BundleWriter options: no compression, 256 KiB
// blocks, restart interval 16. `file` must outlive the writer; Finish() writes
// the index block and footer but does not sync or close the file.
class TableWriter {
 public:
  explicit TableWriter(WritableFile* file);
  ~TableWriter();
  TableWriter(const TableWriter&) = delete;
  TableWriter& operator=(const TableWriter&) = delete;

  // REQUIRES: key > every key added before (checked: InternalError otherwise).
  void Add(std::string_view key, std::string_view value);
  void Finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace eager::internal
