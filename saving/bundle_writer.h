#pragma once

// BundleWriter: writes a TensorBundle checkpoint (PREFIX.index +
// PREFIX.data-00000-of-00001) that TensorFlow reads, byte for byte what TF's
// own BundleWriter writes for the same tensors added in the same order.
//
//   BundleWriter writer("/tmp/model/ckpt-1");
//   writer.Add("dense/kernel", kernel);
//   writer.Add("dense/bias", bias);
//   writer.Finish();   // now ckpt-1.index and ckpt-1.data-00000-of-00001 exist
//
// Crash safety: bytes go to PREFIX.data-00000-of-0000N.tempstate<random> and
// PREFIX.index.tempstate<random>; Finish() fsyncs both, renames them to the
// final names (data first, index last: the index is what makes a checkpoint
// visible) and fsyncs the directory. If anything throws, or the writer is
// destroyed without Finish(), the temporary files are removed and files
// already under the final names are left untouched.
//
// Overwriting an existing prefix is atomic too, which renaming the data and
// then the index under TF's fixed names cannot be (a kill between the two
// renames would leave the old index over the new data). So an overwrite
// alternates the data file names: over a 1-shard bundle the new one is a
// 2-shard bundle (data in PREFIX.data-00000-of-00002, an empty
// PREFIX.data-00001-of-00002; TF reads multi-shard bundles, FORMAT.md 2.1),
// over any other a 1-shard one. The new data files never replace a file the
// old index uses, the single index rename switches old to new, and the old
// data files are removed after it. A fresh prefix gets exactly TF's layout.
//
// The writer holds the directory's lock (internal/directory_lock.h) from
// construction to Finish() or abort: a second writer on the directory, in
// another thread or process, is refused with FailedPreconditionError, and
// temporary files of killed saves there are removed when the lock is taken.
//
// Memory: tensor bytes are streamed from the tensors' own buffers to the data
// file (small tensors gathered in a 256 KiB buffer, big ones written from their
// own memory in 1 MiB checksummed pieces); for a string tensor only its length
// header is built in memory. Only the per-tensor metadata (~100 bytes each) is
// kept until Finish(). Not thread-safe.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/tensor.h"

namespace eager {

namespace internal {
class WritableFile;
class DirectoryLock;
}  // namespace internal

class BundleWriter {
 public:
  // Creates the parent directory of `prefix` if missing and opens the
  // temporary data file. Throws the OS error kind (internal/posix_file.h)
  // naming the file when it cannot be created.
  explicit BundleWriter(std::string prefix);
  // Without a successful Finish(): removes the temporary files.
  ~BundleWriter();
  BundleWriter(const BundleWriter&) = delete;
  BundleWriter& operator=(const BundleWriter&) = delete;

  // Appends `tensor`'s bytes to the data file under `key`. Tensors are laid
  // out in the order added; the index lists them in key order.
  // Throws InvalidArgumentError for an empty key (reserved for the header) or
  // a key already added; the writer stays usable after those. Any I/O error
  // aborts the writer (temporary files removed) and is rethrown; later calls
  // then throw FailedPreconditionError.
  void Add(std::string_view key, const Tensor& tensor);

  // Writes the index, syncs and renames both files into place. REQUIRES: not
  // finished or aborted (FailedPreconditionError otherwise). On error the
  // writer aborts as in Add().
  void Finish();

  const std::string& prefix() const { return prefix_; }

 private:
  struct EntryInfo {
    int tf_dtype;
    Shape shape;
    int64_t offset;
    int64_t size;
    uint32_t masked_crc32c;
  };

  void CheckUsable(const char* method) const;
  void AppendData(const void* data, size_t n, uint32_t& crc);
  void WriteIndex();
  void MoveIntoPlace();
  void RemoveDataFilesOfOtherLayouts() const noexcept;
  void Abort() noexcept;

  std::string prefix_;
  std::string dir_;
  std::unique_ptr<internal::DirectoryLock> lock_;
  bool overwriting_ = false;  // PREFIX.index existed when the writer started
  int num_shards_ = 1;        // 2 when overwriting a 1-shard bundle (see above)
  std::string data_path_;     // final names
  std::string index_path_;
  std::string temp_data_path_;         // where the bytes go until Finish()
  std::string temp_empty_shard_path_;  // num_shards_ == 2: the empty shard 1
  std::string temp_index_path_;
  std::unique_ptr<internal::WritableFile> data_;
  std::map<std::string, EntryInfo, std::less<>> entries_;
  bool finished_ = false;
  bool aborted_ = false;
  // MoveIntoPlace progress: data files under their final names, but no index
  // names them yet (an Abort then removes them; no existing index uses them).
  bool data_moved_ = false;
  bool index_moved_ = false;
};

}  // namespace eager
