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
// Sharded (BundleWriterOptions::num_shards = N > 1): the bytes are spread
// over N data files, PREFIX.data-0000k-of-0000N, and one index lists every
// key with its shard_id (TF's layout after MergeBundles, FORMAT.md 2.1;
// TF's reader and ours read it like any bundle). Add() then only keeps the
// tensor; Finish() deals them out by size (largest first, each to the
// shard with the fewest bytes so far, ties to the lower shard; in a shard
// they keep the order added) and writes and fsyncs the N files on N
// threads at once. An overwrite keeps the alternation above: over an
// N-shard bundle it writes N + 1 files, the last one empty.
//
// Distributed (BundleWriterOptions::group, a SaveGroup of N > 1 processes,
// save_group.h): every member constructs a writer for the same prefix,
// Add()s the same keys in the same order with tensors of the same dtypes and
// shapes (its own replica's values), and calls Finish(); the constructor and
// Finish() are collective. The tensors are dealt to N data files as above
// (the same deal on every member, from the sizes alone) and member r writes
// and fsyncs PREFIX.data-0000r-of-0000N, as a temporary file. Once every
// member's file is durable, member 0, the only one holding the directory's
// lock, renames them all into place, writes the merged index and renames it
// last, exactly as a sharded writer does (so an overwrite alternates layouts
// as above). A failure on any member (an I/O error, a different list of
// tensors) fails the constructor or Finish() on every member with the same
// error (AgreeOnOutcome), and the temporary files are removed. A member
// killed at any point leaves the directory as a kill of one writer would:
// the old bundle whole, temporary files that the next lock holder removes.
// Every member must see the directory at the same path (one machine, or a
// shared file system).
//
// The writer holds the directory's lock (directory_lock.h) from
// construction to Finish() or abort: a second writer on the directory, in
// another thread or process, is refused with FailedPreconditionError, and
// temporary files of killed saves there are removed when the lock is taken.
//
// Memory: tensor bytes are streamed from the tensors' own buffers to the data
// file (small tensors gathered in a 256 KiB buffer, big ones written from their
// own memory in 1 MiB checksummed pieces); for a string tensor only its length
// header is built in memory. Only the per-tensor metadata (~100 bytes each) is
// kept until Finish() (sharded: the Tensors themselves, which share their
// buffers with their owners). Not thread-safe.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/tensor.h"
#include "saving/bundle/save_group.h"

namespace eager {

namespace internal {
class WritableFile;
class DirectoryLock;
}  // namespace internal

struct BundleWriterOptions {
  // Data files to spread the tensor bytes over (see above); 1 <= num_shards
  // <= 1024.
  int num_shards = 1;
  // Distributed (see above): this writer is one member of `group`, which
  // writes one data file per member; num_shards must stay 1. nullptr or a
  // group of one: an ordinary writer.
  const SaveGroup* group = nullptr;
};

class BundleWriter {
 public:
  // Creates the parent directory of `prefix` if missing and opens the
  // temporary data files. Throws the OS error kind (posix_file.h)
  // naming the file when one cannot be created, InvalidArgumentError for a
  // num_shards out of range.
  explicit BundleWriter(std::string prefix, BundleWriterOptions options = {});
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
    int shard_id;
    int64_t offset;
    int64_t size;
    uint32_t masked_crc32c;
  };

  void CheckUsable(const char* method) const;
  void StartInGroup();
  void FinishInGroup();
  uint32_t PendingFingerprint() const;
  std::string WriteOwnShard();
  void MergeGroupEntries(const std::vector<std::string>& reports);
  void WriteShards();
  void WriteIndex();
  void MoveIntoPlace();
  void RemoveDataFilesOfOtherLayouts() const noexcept;
  void Abort() noexcept;

  std::string prefix_;
  std::string dir_;
  std::unique_ptr<internal::DirectoryLock> lock_;
  bool overwriting_ = false;             // PREFIX.index existed when the writer started
  int data_shards_ = 1;                  // files that get bytes: options.num_shards
  int num_shards_ = 1;                   // files in all: data_shards_, or one more when
                                         // overwriting a bundle of data_shards_ (see above)
  std::vector<std::string> data_paths_;  // final names, num_shards_ of them
  std::string index_path_;
  std::vector<std::string> temp_data_paths_;  // where the bytes go until Finish()
  std::string temp_index_path_;
  std::vector<std::unique_ptr<internal::WritableFile>> data_;  // data_shards_ of them
  std::map<std::string, EntryInfo, std::less<>> entries_;
  std::vector<std::pair<std::string, Tensor>> pending_;  // sharded: Add()ed, not written
  const SaveGroup* group_ = nullptr;                     // distributed: N > 1 members
  int rank_ = 0;                                         // this member's shard
  bool finished_ = false;
  bool aborted_ = false;
  // MoveIntoPlace progress: data files under their final names, but no index
  // names them yet (an Abort then removes them; no existing index uses them).
  bool data_moved_ = false;
  bool index_moved_ = false;
};

}  // namespace eager
