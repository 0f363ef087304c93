// Crafted hostile checkpoint files, one per class of attack found by fuzzing
// and by hand (issue 10): every table here has valid block checksums, so only
// the reader's own bounds checks stand between it and a crash, a hang or an
// unbounded allocation. Each must give a clear error of a documented kind
// naming the file. Run under -DEAGER_SANITIZE=ON too.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <sstream>

#include "saving/bundle/bundle_files.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/bundle/coding.h"
#include "saving/bundle/crc32c.h"
#include "saving/bundle/internal/table_reader.h"
#include "saving/tools/inspect_checkpoint.h"
#include "tests/saving/saving_test_util.h"
#include "tests/testing/protobuf_wire.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
namespace crc32c = internal::crc32c;
using ::eager::testing::TempDir;
using ::eager::testing::WriteFile;

// ---------------------------------------------------------------------------
// A table spelled out byte by byte (FORMAT.md 2.2), so that any field can lie.

using ::eager::testing::wire::Varint;

// One block entry: varint shared, non_shared, value_length, then the bytes.
// `value_length` may lie about value.size().
std::string Entry(uint64_t shared, const std::string& suffix, const std::string& value,
                  std::optional<uint64_t> value_length = std::nullopt) {
  return Varint(shared) + Varint(suffix.size()) + Varint(value_length.value_or(value.size())) +
         suffix + value;
}

// Block contents: the entries, then the restart array and its count.
std::string Block(const std::vector<std::string>& entries,
                  std::optional<std::vector<uint32_t>> restarts = std::nullopt,
                  std::optional<uint32_t> num_restarts = std::nullopt) {
  std::string out;
  std::vector<uint32_t> offsets;
  for (const std::string& e : entries) {
    offsets.push_back(static_cast<uint32_t>(out.size()));  // restart interval 1
    out += e;
  }
  if (offsets.empty()) offsets.push_back(0);
  if (restarts) offsets = *restarts;
  for (uint32_t r : offsets) internal::PutFixed32(out, r);
  internal::PutFixed32(out, num_restarts.value_or(static_cast<uint32_t>(offsets.size())));
  return out;
}

// The 5-byte trailer: type byte and the masked CRC of contents + type.
std::string Trailer(const std::string& contents, char type) {
  std::string out(1, type);
  internal::PutFixed32(out, crc32c::Mask(crc32c::Extend(crc32c::Value(contents), &type, 1)));
  return out;
}

std::string Handle(uint64_t offset, uint64_t size) { return Varint(offset) + Varint(size); }

std::string Footer(const std::string& metaindex_handle, const std::string& index_handle) {
  std::string out = metaindex_handle + index_handle;
  out.resize(40, '\0');
  internal::PutFixed64(out, 0xdb4775248b80fb57ull);
  return out;
}

struct StoredBlock {
  std::string contents;
  char type = 0;
};

// Data blocks, an empty metaindex, then an index block made by `index` from
// the data blocks' real handles (by default one entry "\xff" per block).
std::string Table(
    const std::vector<StoredBlock>& data,
    const std::function<std::string(const std::vector<std::string>&)>& index = nullptr) {
  std::string file;
  std::vector<std::string> handles;
  for (const StoredBlock& b : data) {
    handles.push_back(Handle(file.size(), b.contents.size()));
    file += b.contents + Trailer(b.contents, b.type);
  }
  const std::string metaindex = Block({});
  const std::string meta_handle = Handle(file.size(), metaindex.size());
  file += metaindex + Trailer(metaindex, 0);
  std::string index_block;
  if (index) {
    index_block = index(handles);
  } else {
    std::vector<std::string> entries;
    entries.reserve(handles.size());
    for (const std::string& h : handles) entries.push_back(Entry(0, "\xff", h));
    index_block = Block(entries);
  }
  const std::string index_handle = Handle(file.size(), index_block.size());
  file += index_block + Trailer(index_block, 0);
  return file + Footer(meta_handle, index_handle);
}

const std::string kHeader("\x08\x01\x1a\x02\x08\x01", 6);  // num_shards 1, producer 1

// The BundleEntryProto of a float tensor of `dims` (FORMAT.md 2.4).
std::string FloatEntry(const std::vector<int64_t>& dims, int64_t offset, int64_t size,
                       uint32_t masked_crc, int dtype = 1) {
  // Built with append: GCC 12 warns (-Wrestrict) on literal + std::string here.
  std::string shape;
  for (int64_t d : dims) {
    std::string dim(1, '\x08');
    dim.append(Varint(static_cast<uint64_t>(d)));
    shape.push_back('\x12');
    shape.append(Varint(dim.size())).append(dim);
  }
  std::string out(1, '\x08');
  out.append(Varint(static_cast<uint64_t>(dtype))).push_back('\x12');
  out.append(Varint(shape.size())).append(shape);
  if (offset) out.append(1, '\x20').append(Varint(static_cast<uint64_t>(offset)));
  if (size) out.append(1, '\x28').append(Varint(static_cast<uint64_t>(size)));
  out.push_back('\x35');
  internal::PutFixed32(out, masked_crc);
  return out;
}

// A well-formed one-block bundle index holding `entries` (key, value).
std::string BundleIndex(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::vector<std::string> raw;
  raw.reserve(entries.size());
  for (const auto& [key, value] : entries) raw.push_back(Entry(0, key, value));
  return Table({{Block(raw)}});
}

// Runs f, expects an exception of kind E whose message names `file`.
template <typename E>
void ExpectErrorNaming(const std::string& file, const std::function<void()>& f) {
  try {
    f();
    ADD_FAILURE() << "nothing thrown for " << file;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(file), std::string::npos)
        << "message does not name " << file << ": " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception kind for " << file << ": " << e.what();
  }
}

class HostileFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir();
    prefix_ = dir_ + "/hostile";
    index_ = IndexFilename(prefix_);
    // A watchdog: a reader that blocks (on a FIFO, in a loop) fails the test
    // instead of hanging the suite.
    alarm(60);
  }
  void TearDown() override { alarm(0); }

  template <typename E>
  void ExpectIndexRejected(const std::string& index_bytes) {
    WriteFile(index_, index_bytes);
    ExpectErrorNaming<E>(index_, [&] { BundleReader reader(prefix_); });
  }

  std::string dir_;
  std::string prefix_;
  std::string index_;
};

TEST_F(HostileFilesTest, TheHandMadeTableReads) {
  const std::string data("\x00\x00\x80\x3f", 4);
  WriteFile(index_, BundleIndex({{"", kHeader},
                                 {"v", FloatEntry({1}, 0, 4, crc32c::Mask(crc32c::Value(data)))}}));
  WriteFile(DataFilename(prefix_, 0, 1), data);
  EXPECT_EQ(BundleReader(prefix_).Read("v").ToVector<float>(), std::vector<float>{1.0f});
}

TEST_F(HostileFilesTest, SnappyCompressedDataBlockReads) {
  // A Snappy block written by hand: uncompressed length, then one literal.
  const std::string contents = Block({Entry(0, "", kHeader)});
  std::string snappy = Varint(contents.size());
  snappy += static_cast<char>((contents.size() - 1) << 2);  // literal tag, len-1 in 6 bits
  snappy += contents;
  WriteFile(index_, Table({{snappy, 1}}));
  EXPECT_TRUE(BundleReader(prefix_).Keys().empty());
}

// -- the classes in issue 10 -------------------------------------------------

TEST_F(HostileFilesTest, DataBlockHandleWhoseSizePlusTrailerWraps) {
  ExpectIndexRejected<DataLossError>(Table({{Block({Entry(0, "", kHeader)})}}, [](const auto&) {
    return Block({Entry(0, "\xff", Handle(0, ~uint64_t{0} - 2))});
  }));
}

TEST_F(HostileFilesTest, FooterHandleClaimingTerabytes) {
  std::string file = Table({{Block({Entry(0, "", kHeader)})}});
  const std::string footer = Footer(Handle(0, 8), Handle(0, uint64_t{1} << 40));
  file.replace(file.size() - 48, 48, footer);
  ExpectIndexRejected<DataLossError>(file);
}

TEST_F(HostileFilesTest, BlockLargerThanTheBoundIsResourceExhaustedWithoutAllocating) {
  // A sparse 80 MiB file whose index handle covers 70 MiB of zeros: inside
  // the file, but beyond any real index block.
  const uint64_t big = 70ull << 20;
  const std::string tail = Footer(Handle(0, big), Handle(0, big));
  WriteFile(index_, "");
  const int fd = ::open(index_.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(big + 5)), 0);
  ASSERT_EQ(::pwrite(fd, tail.data(), tail.size(), static_cast<off_t>(big + 5)),
            static_cast<ssize_t>(tail.size()));
  ::close(fd);
  ExpectErrorNaming<ResourceExhaustedError>(index_, [&] { BundleReader reader(prefix_); });
}

TEST_F(HostileFilesTest, SnappyHeaderClaimingGigabytes) {
  std::string snappy = Varint(uint64_t{1} << 30);  // Snappy's length is a varint32
  snappy += std::string("\0\0", 2);
  ExpectIndexRejected<ResourceExhaustedError>(Table({{snappy, 1}}));
}

TEST_F(HostileFilesTest, CorruptSnappyData) {
  // Tag byte 00: a literal of 1 byte, then that byte, "x".
  std::string snappy = Varint(100) + std::string(1, '\0') + "x";  // promises 100 bytes, holds 1
  ExpectIndexRejected<DataLossError>(Table({{snappy, 1}}));
}

TEST_F(HostileFilesTest, EntryLengthsThatWrapIn32Bits) {
  // shared 0, non_shared 1, value_length 0xFFFFFFFF: 1 + 0xFFFFFFFF wraps to 0.
  ExpectIndexRejected<DataLossError>(
      Table({{Block({Entry(0, "", kHeader), Entry(0, "v", "ab", 0xFFFFFFFFull)})}}));
  ExpectIndexRejected<DataLossError>(
      Table({{Block({Entry(0, "", kHeader), Entry(0, "v", "ab", ~uint64_t{0})})}}));
}

TEST_F(HostileFilesTest, HugeNumShards) {
  const std::string header("\x08\xff\xff\xff\xff\x07\x1a\x02\x08\x01", 10);  // 2^31 - 1 shards
  ExpectIndexRejected<DataLossError>(BundleIndex({{"", header}}));
}

TEST_F(HostileFilesTest, ZeroElementTensorOfHugeShapeDumpsAtOnce) {
  const uint32_t empty_crc = crc32c::Mask(0);
  WriteFile(index_, BundleIndex({{"", kHeader},
                                 {"e", FloatEntry({int64_t{1} << 40, 0}, 0, 0, empty_crc)}}));
  WriteFile(DataFilename(prefix_, 0, 1), "");
  BundleReader reader(prefix_);
  std::ostringstream out;
  DumpTensor(reader, "e", 10, out);
  EXPECT_EQ(out.str(), "e: tf.Tensor([], shape=(1099511627776, 0), dtype=float32)\n");
}

TEST_F(HostileFilesTest, ReadingFromASparseHugeDataFileTakesMemoryOfTheTensorOnly) {
  // A 6 GiB data file (sparse) with one 16-byte tensor near its end.
  const uint64_t offset = 6ull << 30;
  const std::string data(16, '\x01');
  WriteFile(index_, BundleIndex({{"", kHeader},
                                 {"t", FloatEntry({4}, static_cast<int64_t>(offset), 16,
                                                  crc32c::Mask(crc32c::Value(data)))}}));
  const std::string data_path = DataFilename(prefix_, 0, 1);
  WriteFile(data_path, "");
  const int fd = ::open(data_path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset)), 16);
  ::close(fd);
  // In a child, whose peak RSS starts at the parent's current RSS.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    const Tensor t = BundleReader(prefix_).Read("t");
    getrusage(RUSAGE_SELF, &after);
    const long grown_kib = after.ru_maxrss - before.ru_maxrss;
    _exit(t.num_elements() == 4 && grown_kib < 64 * 1024 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_F(HostileFilesTest, FifoAsIndexDataOrStateFileIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(index_.c_str(), 0644), 0);
  ExpectErrorNaming<InvalidArgumentError>(index_, [&] { BundleReader reader(prefix_); });

  fs::remove(index_);
  WriteFile(index_, BundleIndex({{"", kHeader}, {"v", FloatEntry({1}, 0, 4, 0)}}));
  const std::string data_path = DataFilename(prefix_, 0, 1);
  ASSERT_EQ(::mkfifo(data_path.c_str(), 0644), 0);
  BundleReader reader(prefix_);
  ExpectErrorNaming<InvalidArgumentError>(data_path, [&] { reader.Read("v"); });

  const std::string state = dir_ + "/checkpoint";
  ASSERT_EQ(::mkfifo(state.c_str(), 0644), 0);
  ExpectErrorNaming<InvalidArgumentError>(state, [&] { LatestCheckpoint(dir_); });
}

TEST_F(HostileFilesTest, SymlinkLoopsAreInvalidArgument) {
  fs::create_symlink(index_, index_);  // PREFIX.index -> itself
  ExpectErrorNaming<InvalidArgumentError>(index_, [&] { BundleReader reader(prefix_); });
  ExpectErrorNaming<InvalidArgumentError>(index_, [&] { ResolveCheckpointPath(prefix_); });
  const std::string state = dir_ + "/checkpoint";
  fs::create_symlink(state, state);
  ExpectErrorNaming<InvalidArgumentError>(state, [&] { LatestCheckpoint(dir_); });
}

TEST_F(HostileFilesTest, OverlongPathsAreInvalidArgument) {
  const std::string prefix = dir_ + "/" + std::string(300, 'a');  // NAME_MAX is 255
  ExpectErrorNaming<InvalidArgumentError>(IndexFilename(prefix),
                                          [&] { BundleReader reader(prefix); });
  ExpectErrorNaming<InvalidArgumentError>(IndexFilename(prefix),
                                          [&] { ResolveCheckpointPath(prefix); });
}

TEST_F(HostileFilesTest, NulInsideAStateFilePathIsRejected) {
  WriteFile(dir_ + "/checkpoint", "model_checkpoint_path: \"ckpt-1\\000.index\"\n");
  ExpectErrorNaming<DataLossError>(dir_ + "/checkpoint", [&] { LatestCheckpoint(dir_); });
  ExpectErrorNaming<DataLossError>(dir_ + "/checkpoint", [&] { ReadCheckpointState(dir_); });
}

TEST_F(HostileFilesTest, NulInsideAPrefixIsInvalidArgument) {
  const std::string prefix = prefix_ + std::string(1, '\0') + "x";
  EXPECT_THROW(BundleReader reader(prefix), InvalidArgumentError);
}

TEST_F(HostileFilesTest, HugeStateFileIsResourceExhausted) {
  const std::string state = dir_ + "/checkpoint";
  WriteFile(state, "");
  ASSERT_EQ(::truncate(state.c_str(), off_t{1} << 30), 0);  // sparse 1 GiB
  ExpectErrorNaming<ResourceExhaustedError>(state, [&] { LatestCheckpoint(dir_); });
}

// -- more found while writing the reader --------------------------------------

TEST_F(HostileFilesTest, RestartCountLargerThanTheBlock) {
  ExpectIndexRejected<DataLossError>(
      Table({{Block({Entry(0, "", kHeader)}, std::nullopt, 0x40000000u)}}));
  ExpectIndexRejected<DataLossError>(Table({{Block({Entry(0, "", kHeader)}, std::nullopt, 0)}}));
}

TEST_F(HostileFilesTest, RestartOffsetInsideAnEntry) {
  ExpectIndexRejected<DataLossError>(
      Table({{Block({Entry(0, "", kHeader), Entry(0, "v", "x")}, std::vector<uint32_t>{0, 3})}}));
}

TEST_F(HostileFilesTest, RestartEntryThatSharesAPrefix) {
  ExpectIndexRejected<DataLossError>(
      Table({{Block({Entry(0, "", kHeader), Entry(0, "ab", "x"), Entry(1, "c", "x")})}}));
}

TEST_F(HostileFilesTest, SharedPrefixLongerThanThePreviousKey) {
  const std::string a = Entry(0, "", kHeader);
  const std::string b = Entry(5, "v", "x");
  ExpectIndexRejected<DataLossError>(
      Table({{Block({a, b}, std::vector<uint32_t>{0})}}));  // b is not a restart
}

TEST_F(HostileFilesTest, KeysOutOfOrder) {
  ExpectIndexRejected<DataLossError>(
      Table({{Block({Entry(0, "", kHeader), Entry(0, "b", "x"), Entry(0, "a", "x")})}}));
}

TEST_F(HostileFilesTest, KeyBeyondItsIndexSeparator) {
  ExpectIndexRejected<DataLossError>(
      Table({{Block({Entry(0, "", kHeader), Entry(0, "z", "x")})}},
            [](const std::vector<std::string>& h) { return Block({Entry(0, "m", h[0])}); }));
}

TEST_F(HostileFilesTest, IndexPointingAtOneBlockManyTimes) {
  // Without the no-overlap rule, N index entries re-read one block N times.
  ExpectIndexRejected<DataLossError>(
      Table({{Block({Entry(0, "", kHeader)})}}, [](const std::vector<std::string>& h) {
        return Block({Entry(0, "\xfe", h[0]), Entry(0, "\xff", h[0])});
      }));
}

TEST_F(HostileFilesTest, OverlongVarintInAnEntryHeader) {
  ExpectIndexRejected<DataLossError>(Table({{Block({std::string(11, '\x80') + "\x01"})}}));
}

TEST_F(HostileFilesTest, UnknownBlockType) {
  ExpectIndexRejected<DataLossError>(Table({{Block({Entry(0, "", kHeader)}), 2}}));
}

TEST_F(HostileFilesTest, TrailingBytesAfterAnIndexHandle) {
  ExpectIndexRejected<DataLossError>(Table(
      {{Block({Entry(0, "", kHeader)})}},
      [](const std::vector<std::string>& h) { return Block({Entry(0, "\xff", h[0] + "x")}); }));
}

TEST_F(HostileFilesTest, MetaindexThatIsNotABlock) {
  // A zero-size metaindex with a valid trailer: no room for a restart count.
  const std::string data = Block({Entry(0, "", kHeader)});
  std::string file = data + Trailer(data, 0);
  const std::string meta_handle = Handle(file.size(), 0);
  file += Trailer("", 0);
  const std::string index_block = Block({Entry(0, "\xff", Handle(0, data.size()))});
  const std::string index_handle = Handle(file.size(), index_block.size());
  file += index_block + Trailer(index_block, 0) + Footer(meta_handle, index_handle);
  ExpectIndexRejected<DataLossError>(file);
}

TEST_F(HostileFilesTest, TruncatedAndEmptyIndexFiles) {
  ExpectIndexRejected<DataLossError>("");
  ExpectIndexRejected<DataLossError>(std::string(47, '\0'));
  const std::string good = BundleIndex({{"", kHeader}});
  for (size_t cut : {size_t{1}, size_t{10}, good.size() / 2}) {
    ExpectIndexRejected<DataLossError>(good.substr(cut));
  }
}

TEST_F(HostileFilesTest, EntryOffsetBeyondTheDataFileIsCheckedBeforeAllocating) {
  WriteFile(index_, BundleIndex({{"", kHeader},
                                 {"t", FloatEntry({int64_t{1} << 36}, 0, int64_t{1} << 38, 0)}}));
  WriteFile(DataFilename(prefix_, 0, 1), "abcd");
  BundleReader reader(prefix_);
  ExpectErrorNaming<DataLossError>(DataFilename(prefix_, 0, 1), [&] { reader.Read("t"); });
}

// verify checks every checksum whatever the dtype, and fails on any it cannot.
TEST_F(HostileFilesTest, VerifyChecksEveryDtypeAndFailsOnWhatItCannotCheck) {
  const std::string half("\x00\x3c\x00\xc0", 4);  // float16 [1, -2]
  const std::string unknown("\x01\x02\x03", 3);
  const std::string data = half + unknown;
  const uint32_t half_crc = crc32c::Mask(crc32c::Value(half));
  WriteFile(index_, BundleIndex({{"", kHeader},
                                 {"h", FloatEntry({2}, 0, 4, half_crc, /*DT_HALF*/ 19)},
                                 {"v", FloatEntry({}, 4, 3, 0, /*no such DataType*/ 99)}}));
  WriteFile(DataFilename(prefix_, 0, 1), data);
  {
    const VerifyResult result = VerifyCheckpoint(BundleReader(prefix_));
    EXPECT_EQ(result.tensors, 1);
    EXPECT_EQ(result.bytes, 4);
    ASSERT_EQ(result.unchecked.size(), 1u);
    EXPECT_TRUE(result.unchecked[0].starts_with("v: ")) << result.unchecked[0];
  }
  // A flipped byte of the half tensor is caught.
  std::string corrupt = data;
  corrupt[1] = '\x3d';
  WriteFile(DataFilename(prefix_, 0, 1), corrupt);
  ExpectErrorNaming<DataLossError>(DataFilename(prefix_, 0, 1),
                                   [&] { VerifyCheckpoint(BundleReader(prefix_)); });
}

}  // namespace
}  // namespace eager
