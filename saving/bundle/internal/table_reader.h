#pragma once

// Reads a .index file: an immutable LevelDB-format table (FORMAT.md 2.2).
//
// Our own reader, not LevelDB's Table: LevelDB trusts the files it wrote
// itself, and a crafted CRC-valid table crashed it (a block handle whose
// `size + trailer` wraps, a Snappy header claiming terabytes, an entry whose
// `shared + non_shared + value_length` wraps in 32 bits). Here every varint,
// length, offset and count is checked in 64-bit arithmetic against the bytes
// actually present, before it is used or anything is allocated for it:
//
//   - the footer's handles, and each data block's handle from the index
//     block, must lie inside the file, before the footer, and data blocks
//     must follow one another without overlap (so the total work is bounded
//     by the file size, whatever the index says);
//   - every block's masked CRC32C (over contents + type byte) is verified,
//     the metaindex block's too;
//   - a block is at most kMaxTableBlockSize bytes, stored or (Snappy)
//     uncompressed: a bundle index block holds 256 KiB of ~100-byte entries;
//   - the restart array must fit the block, start at 0, increase, and point
//     at entries with no shared key prefix;
//   - keys must strictly increase across the whole table.
//
// Anything else is DataLossError naming the file and what was expected; a
// block larger than the bound is ResourceExhaustedError. Writing stays with
// LevelDB's TableBuilder (leveldb_table.h), whose bytes match TF's.

#include <cstdint>
#include <functional>
#include <string_view>

#include "saving/bundle/posix_file.h"

namespace eager::internal {

inline constexpr uint64_t kMaxTableBlockSize = 64ull << 20;

// Calls visit(key, value) for every entry of the table in `file`, in key
// order. The views are valid only during the call.
void ReadTable(const RandomAccessFile& file,
               const std::function<void(std::string_view key, std::string_view value)>& visit);

}  // namespace eager::internal
