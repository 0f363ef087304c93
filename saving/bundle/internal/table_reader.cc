#include "saving/bundle/internal/table_reader.h"

#include <snappy.h>

#include <optional>
#include <string>

#include "runtime/errors.h"
#include "saving/bundle/coding.h"
#include "saving/bundle/crc32c.h"

namespace eager::internal {
namespace {

constexpr uint64_t kFooterSize = 48;  // two padded BlockHandles + 8-byte magic
constexpr uint64_t kBlockTrailerSize = 5;
constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr uint8_t kNoCompression = 0;
constexpr uint8_t kSnappyCompression = 1;

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;  // contents only, without the 5-byte trailer
};

// One table being read: the file, the bytes a block may occupy, and the
// error messages, which all name the file.
class TableParser {
 public:
  explicit TableParser(const RandomAccessFile& file) : file_(file) {}

  [[noreturn]] void Fail(std::string_view what) const {
    throw DataLossError(StrCat("Cannot read checkpoint index ", file_.path(), ": ", what));
  }

  // Decodes a BlockHandle and checks that the block and its trailer end at or
  // before `limit`. Non-minimal varints are refused: no writer produces them.
  BlockHandle DecodeHandle(std::string_view& in, uint64_t limit, std::string_view name) const {
    BlockHandle h;
    const size_t before = in.size();
    if (!GetVarint64(in, h.offset) || !GetVarint64(in, h.size) ||
        before - in.size() != static_cast<size_t>(VarintLength(h.offset)) +
                                  static_cast<size_t>(VarintLength(h.size))) {
      Fail(StrCat("cannot decode the ", name, " block handle"));
    }
    if (h.offset > limit || h.size > limit - h.offset ||
        kBlockTrailerSize > limit - h.offset - h.size) {
      Fail(StrCat("the ", name, " block handle (offset ", h.offset, ", size ", h.size,
                  " + 5-byte trailer) runs past byte ", limit, " of the ", file_.size(),
                  "-byte file"));
    }
    return h;
  }

  // The block's contents after checking its trailer's CRC and undoing its
  // compression.
  std::string ReadBlock(const BlockHandle& h, std::string_view name) const {
    if (h.size > kMaxTableBlockSize) {
      throw ResourceExhaustedError(StrCat("Cannot read checkpoint index ", file_.path(), ": its ",
                                          name, " block claims ", h.size, " bytes, above the ",
                                          kMaxTableBlockSize, "-byte limit for an index block"));
    }
    std::string block(static_cast<size_t>(h.size + kBlockTrailerSize), '\0');
    if (file_.ReadAt(h.offset, block.size(), block.data()) != block.size()) {
      Fail(StrCat("short read of the ", name, " block (the file shrank while reading?)"));
    }
    const char* trailer = block.data() + h.size;
    const uint32_t stored = crc32c::Unmask(DecodeFixed32(trailer + 1));
    const uint32_t actual = crc32c::Value(block.data(), static_cast<size_t>(h.size) + 1);
    if (stored != actual) {
      Fail(StrCat(name, " block checksum mismatch (stored ", stored, ", computed ", actual, ")"));
    }
    const auto type = static_cast<uint8_t>(trailer[0]);
    block.resize(static_cast<size_t>(h.size));
    if (type == kNoCompression) return block;
    if (type != kSnappyCompression) {
      Fail(StrCat("bad block type ", int{type}, " for the ", name, " block (0 or 1 expected)"));
    }
    size_t length = 0;
    if (!snappy::GetUncompressedLength(block.data(), block.size(), &length)) {
      Fail(StrCat("corrupted Snappy header in the ", name, " block"));
    }
    if (length > kMaxTableBlockSize) {
      throw ResourceExhaustedError(StrCat("Cannot read checkpoint index ", file_.path(),
                                          ": its Snappy-compressed ", name, " block claims ",
                                          length, " uncompressed bytes, above the ",
                                          kMaxTableBlockSize, "-byte limit for an index block"));
    }
    std::string out(length, '\0');
    if (!snappy::RawUncompress(block.data(), block.size(), out.data())) {
      Fail(StrCat("corrupted Snappy data in the ", name, " block"));
    }
    return out;
  }

  // Calls visit(key, value) for each entry of a block's contents. Keys are
  // rebuilt from their shared prefixes into `key`.
  template <typename Visit>
  void ParseBlock(std::string_view block, std::string_view name, Visit&& visit) const {
    uint32_t num_restarts = 0;
    if (block.size() < 4 || (num_restarts = DecodeFixed32(block.data() + block.size() - 4)) == 0 ||
        num_restarts > (block.size() - 4) / 4) {
      Fail(StrCat("the ", name, " block (", block.size(), " bytes) has a restart count ",
                  num_restarts, " that does not fit it (at least 1 expected)"));
    }
    const size_t entries_end = block.size() - 4 - 4 * static_cast<size_t>(num_restarts);
    const char* restarts = block.data() + entries_end;
    uint32_t next_restart = 0;  // index into the restart array
    std::string key;
    std::string_view in = block.substr(0, entries_end);
    while (!in.empty()) {
      const size_t at = entries_end - in.size();
      uint64_t shared = 0, non_shared = 0, value_length = 0;
      if (!GetVarint64(in, shared) || !GetVarint64(in, non_shared) ||
          !GetVarint64(in, value_length)) {
        Fail(StrCat("cannot decode the entry header at byte ", at, " of the ", name, " block"));
      }
      if (shared > key.size() || non_shared > in.size() || value_length > in.size() - non_shared) {
        Fail(StrCat("the entry at byte ", at, " of the ", name, " block shares ", shared,
                    " key bytes (previous key has ", key.size(), ") and holds ", non_shared, " + ",
                    value_length, " bytes, but only ", in.size(), " remain"));
      }
      if (next_restart < num_restarts && DecodeFixed32(restarts + 4 * next_restart) == at) {
        if (shared != 0) {
          Fail(StrCat("the restart entry at byte ", at, " of the ", name,
                      " block shares a key prefix"));
        }
        ++next_restart;
      } else if (at == 0) {
        Fail(StrCat("the ", name, " block's first restart offset is not 0"));
      }
      key.resize(static_cast<size_t>(shared));
      key.append(in.data(), static_cast<size_t>(non_shared));
      in.remove_prefix(static_cast<size_t>(non_shared));
      visit(std::string_view(key), in.substr(0, static_cast<size_t>(value_length)));
      in.remove_prefix(static_cast<size_t>(value_length));
    }
    // An empty block still has restart[0] = 0, pointing at its (empty) end.
    const bool empty_block_ok =
        entries_end == 0 && num_restarts == 1 && DecodeFixed32(restarts) == 0;
    if (next_restart != num_restarts && !empty_block_ok) {
      Fail(StrCat("the ", name, " block's restart array (", num_restarts,
                  " offsets) does not match its entries"));
    }
  }

  const RandomAccessFile& file_;
};

}  // namespace

void ReadTable(const RandomAccessFile& file,
               const std::function<void(std::string_view, std::string_view)>& visit) {
  TableParser table(file);
  const uint64_t size = file.size();
  if (size < kFooterSize) {
    table.Fail(StrCat("the file has ", size,
                      " bytes, less than the 48-byte table footer "
                      "(truncated?)"));
  }
  char footer[kFooterSize];
  if (file.ReadAt(size - kFooterSize, kFooterSize, footer) != kFooterSize) {
    table.Fail("short read of the footer");
  }
  if (DecodeFixed64(footer + kFooterSize - 8) != kTableMagic) {
    table.Fail("not a table (bad magic number in the last 8 bytes)");
  }
  // The footer carries no checksum: its handles are what we check hardest.
  std::string_view handles(footer, kFooterSize - 8);
  const uint64_t limit = size - kFooterSize;
  const BlockHandle metaindex = table.DecodeHandle(handles, limit, "metaindex");
  const BlockHandle index = table.DecodeHandle(handles, limit, "index");
  if (handles.find_first_not_of('\0') != std::string_view::npos) {
    table.Fail("non-zero bytes in the footer's padding");
  }
  // Bundles have no filter blocks, so the metaindex is unused; TF always
  // writes a valid one, so a bad one is corruption.
  table.ParseBlock(table.ReadBlock(metaindex, "metaindex"), "metaindex",
                   [](std::string_view, std::string_view) {});

  // Data blocks lie before the index block, in order, without overlapping.
  const std::string index_block = table.ReadBlock(index, "index");
  uint64_t next_block_start = 0;
  std::optional<std::string> last_key;
  int block_number = 0;
  table.ParseBlock(index_block, "index", [&](std::string_view separator, std::string_view value) {
    const std::string name = StrCat("data block ", block_number++);
    const BlockHandle h = table.DecodeHandle(value, index.offset, name);
    if (!value.empty()) table.Fail(StrCat("trailing bytes after the handle of ", name));
    if (h.offset < next_block_start) {
      table.Fail(StrCat(name, " starts at byte ", h.offset, ", inside the block before it (which ",
                        "ends at ", next_block_start, ")"));
    }
    next_block_start = h.offset + h.size + kBlockTrailerSize;
    table.ParseBlock(
        table.ReadBlock(h, name), name, [&](std::string_view key, std::string_view entry) {
          if (last_key && key <= std::string_view(*last_key)) {
            table.Fail(
                StrCat("keys are not in strictly increasing order at '", key, "' in ", name));
          }
          if (key > separator) {
            table.Fail(StrCat("key '", key, "' in ", name, " is beyond its index separator"));
          }
          last_key.emplace(key);
          visit(key, entry);
        });
  });
}

}  // namespace eager::internal
