#pragma once

// BundleReader: reads a TensorBundle checkpoint (PREFIX.index and
// PREFIX.data-SSSSS-of-NNNNN) written by TensorFlow or by BundleWriter.
//
//   BundleReader reader("/tmp/model/ckpt-1");
//   for (const std::string& key : reader.Keys()) { ... }
//   Tensor kernel = reader.Read("dense/kernel");
//
// The reader trusts nothing in the files: the index table's block checksums,
// every entry's dtype, shape, shard, offset and size are checked (against the
// data file's real size, before anything is allocated), and every tensor's
// CRC32C is verified on Read. Corruption throws DataLossError naming the file
// and the key. The index is read once at construction; data files are opened
// on first use, so an index whose data files are absent can still be listed.
//
// The index table is read by internal/table_reader.h, which bounds every
// length against the file. Memory while reading is the index's entries plus
// the tensor being read (data files are read with pread at the entry's
// offset, never whole). Files that are not regular (a FIFO, a device) are
// refused before anything blocks on them; a symlink loop, an over-long path
// or a NUL in a path is InvalidArgumentError.
//
// Accepts Snappy-compressed index blocks (some TF builds write them), any
// number of shards, and tensors of dtypes eager lacks (listed, not readable).
// Read() may be called from several threads at once.
//
// Speed (benchmarks/README.md, bundle_benchmark BM_Restore): bytes go from
// the page cache straight into the tensor's buffer in 1 MiB pieces, each
// checksummed while in cache by the fastest CRC32C kernel the CPU has
// (crc32c.h). A fixed-size tensor of 4 MiB and more is read by the
// calling thread and saving's helper thread (internal/helper_thread.h) at
// once, unless BundleReaderOptions or eager::SetNumThreads says one thread
// (BundleReaderOptions::num_threads): they take 1 MiB chunks
// from a shared counter, and the chunks' CRCs are joined in order
// (crc32c::Combine), so every byte is still checked before Read returns, and
// the tensor and any error are the same for any thread count (the first
// failing chunk's error, as when reading front to back).

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/dtype.h"
#include "runtime/shape.h"
#include "runtime/tensor.h"
#include "saving/bundle/tensor_slice.h"

namespace eager {

namespace internal {
class RandomAccessFile;
}  // namespace internal

struct BundleReaderOptions {
  // Threads one Read of a large fixed-size tensor may use: 1 reads on the
  // calling thread only, 2 (the most used) also on saving's helper thread.
  // 0: min(2, eager::GetNumThreads()) at the time of each Read, so that
  // eager::SetNumThreads (runtime/threads.h; by default the cores this process
  // may run on) governs restores as it governs ops. An explicit value wins
  // over SetNumThreads.
  int num_threads = 0;
};

class BundleReader {
 public:
  // One tensor's metadata, as the index records it (BundleEntryProto).
  struct Entry {
    int tf_dtype = 0;                 // TensorFlow's DataType value (DT_FLOAT = 1, ...)
    std::optional<DType> dtype;       // nullopt for a dtype eager does not support
    std::vector<int64_t> dims;        // validated: every dim >= 0, element count fits int64
    int shard_id = 0;                 // validated: 0 <= shard_id < num_shards()
    int64_t offset = 0;               // in the shard's data file
    int64_t size = 0;                 // bytes in the data file
    uint32_t masked_crc32c = 0;       // as stored (masked)
    int num_slices = 0;               // > 0: a partitioned variable's full-tensor entry
    std::vector<TensorSlice> slices;  // its slices (num_slices of them)

    // The dims as a Shape. Throws UnimplementedError for rank > Shape::kMaxRank.
    Shape shape() const;
    int64_t num_elements() const;
  };

  // Opens and parses PREFIX.index. Throws
  //   NotFoundError        when PREFIX.index does not exist;
  //   UnimplementedError   for a legacy V1 checkpoint (a TensorSlice table named
  //                        PREFIX or PREFIX-?????-of-?????) or big-endian data;
  //   DataLossError        when the index is truncated, corrupted or malformed
  //                        (an entry with an invalid shape, shard, offset or size,
  //                        num_shards outside [1, 99999]);
  //   ResourceExhaustedError for an index block above 64 MiB;
  //   InvalidArgumentError  for options.num_threads < 0.
  explicit BundleReader(std::string prefix, BundleReaderOptions options = {});
  ~BundleReader();
  BundleReader(const BundleReader&) = delete;
  BundleReader& operator=(const BundleReader&) = delete;

  const std::string& prefix() const { return prefix_; }
  int num_shards() const { return num_shards_; }

  // Every tensor key, in bytewise order (the header's empty key excluded).
  std::vector<std::string> Keys() const;
  bool Contains(std::string_view key) const;
  // Throws NotFoundError "Key <key> not found in checkpoint <prefix>".
  const Entry& GetEntry(std::string_view key) const;

  // The tensor stored under `key`. Throws NotFoundError for a missing key or a
  // missing data file; UnimplementedError naming the key and TF dtype name
  // for a dtype eager lacks (DT_VARIANT, DT_RESOURCE, quantized types);
  // DataLossError naming the file and key when the stored bytes do not match
  // the entry (short file, bad string lengths, checksum mismatch).
  //
  // A partitioned variable's key (FORMAT.md 2.8) reads as the full tensor
  // assembled from its slices' entries, each checksummed. A slice without an
  // entry, outside the full shape, of another dtype or shape than its
  // extent, overlapping another slice (in the tensor or in the data file), or
  // elements no slice covers: DataLossError naming the key and the slice
  // (partitioned_variables.h).
  Tensor Read(std::string_view key) const;

  // Checks the stored checksum of `key` whatever its dtype: a dtype eager
  // reads is Read in full; a fixed-size dtype eager lacks (qint8, ...) and
  // DT_RESOURCE are checksummed over their raw bytes, in pieces (memory
  // stays small); DT_VARIANT entries are walked element by element (each
  // element's own stored checksum too). Throws DataLossError on a mismatch,
  // and UnimplementedError naming the key when its checksum cannot be
  // checked (an unknown dtype, a sliced entry of a dtype eager lacks). A
  // partitioned variable is read whole: its slices' checksums and layout.
  void VerifyChecksum(std::string_view key) const;

  // Whether `key` is the entry of one slice of a partitioned variable listed
  // in this bundle (tf.train.list_variables shows only the variable).
  bool IsSliceOfPartitionedVariable(std::string_view key) const;

 private:
  // One entry's bytes in its data file, with the errors that name them.
  struct EntryBytes {
    std::string_view key;
    const Entry& entry;
    const internal::RandomAccessFile& file;
    // Reads n bytes at `at` within the entry; DataLossError if the file is short.
    void ReadExactly(uint64_t at, size_t n, void* dst) const;
    // DataLossError unless Mask(actual) is the entry's stored CRC.
    void CheckCrc(uint32_t actual) const;
    // All of the entry's bytes (at most the file's: DataFileOf checked).
    std::string ReadAll() const;
    // Consumes the varint64 length of `kind` element i ("string",
    // "DT_VARIANT") from the front of `rest`; DataLossError if it cannot.
    uint64_t ConsumeLength(std::string_view& rest, std::string_view kind, int64_t i) const;
  };

  const internal::RandomAccessFile& DataFile(int shard) const;
  // The entry's data file, checked to hold [offset, offset + size).
  const internal::RandomAccessFile& DataFileOf(std::string_view key, const Entry& entry) const;
  Tensor ReadPartitioned(std::string_view key, const Entry& entry) const;
  static Tensor ReadFixedSizeTensor(const EntryBytes& in, int threads);
  // Reads the entry's bytes [begin, end) into out + begin, chunk_bytes at a time,
  // each piece checksummed while in cache; returns the CRC of those bytes.
  static uint32_t ReadAndChecksum(const EntryBytes& in, char* out, uint64_t begin, uint64_t end,
                                  uint64_t chunk_bytes);
  // The same for [0, size), with saving's helper thread taking chunks too.
  // REQUIRES: size >= 1.
  static uint32_t ReadAndChecksumShared(const EntryBytes& in, char* out, uint64_t size,
                                        uint64_t chunk_bytes);
  // Checksum checks without a Tensor: raw bytes (fixed-size dtypes eager
  // lacks, DT_RESOURCE) and DT_VARIANT's per-element layout.
  static void CheckRawBytes(const EntryBytes& in);
  static void CheckVariantBytes(const EntryBytes& in);
  static Tensor ReadStringTensor(const EntryBytes& in);
  // Threads a Read of a large fixed-size tensor uses now: 1 or 2.
  int ReadThreads() const;

  std::string prefix_;
  std::string index_path_;
  int num_shards_ = 0;
  int num_threads_ = 0;  // BundleReaderOptions::num_threads
  std::map<std::string, Entry, std::less<>> entries_;
  std::set<std::string, std::less<>> slice_keys_;  // entries of listed slices
  mutable std::mutex data_mu_;                     // guards data_files_ (opened lazily)
  mutable std::vector<std::unique_ptr<internal::RandomAccessFile>> data_files_;
};

}  // namespace eager
