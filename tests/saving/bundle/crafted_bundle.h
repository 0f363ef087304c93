#pragma once

// Bundles built entry by entry for tests: what TensorFlow writes but
// BundleWriter does not (DT_VARIANT, DT_RESOURCE, partitioned variables), and
// hostile variations of it. The BundleEntryProto wire format is spelled out
// here by hand (FORMAT.md 2.4, 2.8), independent of our protobuf code; the
// table itself goes through the writer's TableWriter.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "runtime/tensor.h"
#include "saving/bundle/bundle_files.h"
#include "saving/bundle/coding.h"
#include "saving/bundle/crc32c.h"
#include "saving/bundle/internal/leveldb_table.h"
#include "saving/bundle/posix_file.h"
#include "saving/bundle/tensor_slice.h"
#include "tests/saving/saving_test_util.h"
#include "tests/testing/protobuf_wire.h"

namespace eager::testing {

struct CraftedEntry {
  int dtype = 1;  // TensorFlow's DataType value
  std::vector<int64_t> dims;
  int64_t offset = 0;
  int64_t size = 0;
  uint32_t masked_crc = 0;
  std::vector<TensorSlice> slices;  // non-empty: a partitioned variable's entry
};

// BundleEntryProto: dtype 1, shape 2 (dim 2 { size 1 }), offset 4, size 5,
// crc32c 6 (fixed32), slices 7 (TensorSliceProto { extent 1 { start 1,
// length 2 } }, a whole dimension being an empty extent).
inline std::string EncodeCraftedEntry(const CraftedEntry& e) {
  using wire::Field;
  using wire::VarintField;
  std::string shape;
  for (int64_t d : e.dims) shape += Field(2, 2, VarintField(1, d));
  std::string out = VarintField(1, e.dtype) + Field(2, 2, shape);
  if (e.offset) out += VarintField(4, e.offset);
  if (e.size) out += VarintField(5, e.size);
  std::string crc;
  internal::PutFixed32(crc, e.masked_crc);
  out += Field(6, 5, crc);
  for (const TensorSlice& slice : e.slices) {
    std::string extents;
    for (const SliceExtent& x : slice) {
      std::string extent;
      if (!x.whole()) {
        if (x.start) extent += VarintField(1, x.start);
        extent += VarintField(2, x.length);  // a oneof: written even when 0
      }
      extents += Field(1, 2, extent);
    }
    out += Field(7, 2, extents);
  }
  return out;
}

class CraftedBundle {
 public:
  // An entry for `bytes`, appended to the data file, with their CRC32C.
  CraftedEntry& AddBytes(const std::string& key, int dtype, std::vector<int64_t> dims,
                         const std::string& bytes) {
    CraftedEntry& e = entries[key];
    e = {.dtype = dtype,
         .dims = std::move(dims),
         .offset = static_cast<int64_t>(data.size()),
         .size = static_cast<int64_t>(bytes.size()),
         .masked_crc = internal::crc32c::Mask(internal::crc32c::Value(bytes.data(), bytes.size())),
         .slices = {}};
    data += bytes;
    return e;
  }
  // A fixed-size tensor's element bytes.
  CraftedEntry& AddTensor(const std::string& key, const Tensor& t) {
    const auto bytes = t.bytes();
    return AddBytes(key, TfDataType(t.dtype()), t.shape().ToVector(),
                    std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  // PREFIX.index (header: 1 shard, little-endian, producer 1) and
  // PREFIX.data-00000-of-00001, replacing any already there.
  void Write(const std::string& prefix) const {
    std::filesystem::remove(IndexFilename(prefix));  // a rewrite replaces the bundle
    {
      auto file = internal::WritableFile::Create(IndexFilename(prefix), 4096);
      internal::TableWriter table(file.get());
      table.Add("", std::string("\x08\x01\x1a\x02\x08\x01", 6));
      for (const auto& [key, e] : entries) table.Add(key, EncodeCraftedEntry(e));
      table.Finish();
      file->Close();
    }
    WriteFile(DataFilename(prefix, 0, 1), data);
  }

  std::string data;
  std::map<std::string, CraftedEntry> entries;  // bytewise key order, as the table needs
};

}  // namespace eager::testing
