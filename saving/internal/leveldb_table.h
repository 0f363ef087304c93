#pragma once

// The .index file as a LevelDB table (FORMAT.md 2.2), through LevelDB's own
// TableBuilder and Table on top of our POSIX files. The LevelDB types stay in
// leveldb_table.cc; callers see keys and values as string_views.

#include <functional>
#include <memory>
#include <string_view>

#include "saving/internal/posix_file.h"

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

// Calls visit(key, value) for every entry of the table in `file`, in key
// order. Block checksums are verified; a truncated or corrupted table throws
// DataLossError naming the file. The footer's block handles are checked
// against the file size before LevelDB allocates anything for them.
void ReadTable(const RandomAccessFile& file,
               const std::function<void(std::string_view key, std::string_view value)>& visit);

}  // namespace eager::internal
