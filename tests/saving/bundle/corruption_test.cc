// Truncated, bit-flipped and hand-crafted malicious bundles: every one gives a
// clear error of the documented kind (or, for bytes the format ignores, the
// original values) and never a crash. Run under -DEAGER_SANITIZE=ON too.

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "saving/bundle/bundle_files.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/bundle/coding.h"
#include "saving/bundle/crc32c.h"
#include "saving/bundle/internal/leveldb_table.h"
#include "saving/bundle/posix_file.h"
#include "tests/saving/saving_test_util.h"
#include "tests/testing/protobuf_wire.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
namespace crc32c = internal::crc32c;
using ::eager::testing::ReadFile;
using ::eager::testing::RealdataDir;
using ::eager::testing::TempDir;
using ::eager::testing::WriteFile;

// Every key's dtype, shape and bytes; throws whatever the reader throws.
std::string ReadEverything(const std::string& prefix) {
  BundleReader reader(prefix);
  std::string out;
  for (const std::string& key : reader.Keys()) {
    const Tensor t = reader.Read(key);
    out += key + "|" + std::string(DTypeName(t.dtype())) + t.shape().ToString() + "|";
    if (t.dtype() == DType::kString) {
      for (const std::string& s : t.data<std::string>()) out += std::to_string(s.size()) + ":" + s;
    } else {
      out.append(reinterpret_cast<const char*>(t.bytes().data()), t.bytes().size());
    }
  }
  return out;
}

enum class Outcome { kSameValues, kDataLoss, kOther };

Outcome Classify(const std::string& prefix, const std::string& original, std::string* what) {
  try {
    return ReadEverything(prefix) == original ? Outcome::kSameValues : Outcome::kOther;
  } catch (const DataLossError& e) {
    *what = e.what();
    return Outcome::kDataLoss;
  } catch (const std::exception& e) {
    *what = std::string("unexpected exception: ") + e.what();
    return Outcome::kOther;
  }
}

struct Bundle {
  std::string name;
  std::string index;
  std::string data;
};

std::vector<Bundle> SmallBundles(const std::string& tmp) {
  std::vector<Bundle> bundles;
  {
    const std::string prefix = tmp + "/written";
    BundleWriter writer(prefix);
    writer.Add("f", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3}));
    writer.Add("s", Tensor::Vector<std::string>({"ab", "", "cde"}));
    writer.Add("b", Tensor::Vector<bool>({true, false}));
    writer.Add("i", Tensor::Scalar<int64_t>(-5));
    writer.Finish();
    bundles.push_back(
        {"written", ReadFile(IndexFilename(prefix)), ReadFile(DataFilename(prefix, 0, 1))});
  }
  if (::eager::testing::HasRealdata()) {
    for (const char* rel : {"/tf1_saver_scopes_tiny/model.ckpt",
                            "/tf1_golden_reference_data/reference_data_test/dense/model.ckpt",
                            "/savedmodel_tf1_half_plus_two/00000123/variables/variables"}) {
      const std::string prefix = RealdataDir() + rel;
      bundles.push_back(
          {rel, ReadFile(IndexFilename(prefix)), ReadFile(DataFilename(prefix, 0, 1))});
    }
  }
  return bundles;
}

// Each variant gets fresh file names: rewriting one file in place thousands
// of times is slow on ext4 (truncate-and-rewrite forces block allocation).
class Scratch {
 public:
  explicit Scratch(std::string dir) : dir_(std::move(dir)) {}
  // A prefix whose files hold `index` and `data`.
  std::string Install(const std::string& index, const std::string& data) {
    Clear();
    prefix_ = dir_ + "/t" + std::to_string(counter_++);
    WriteFile(IndexFilename(prefix_), index);
    WriteFile(DataFilename(prefix_, 0, 1), data);
    return prefix_;
  }
  ~Scratch() { Clear(); }

 private:
  void Clear() {
    if (prefix_.empty()) return;
    fs::remove(IndexFilename(prefix_));
    fs::remove(DataFilename(prefix_, 0, 1));
  }
  std::string dir_;
  std::string prefix_;
  int counter_ = 0;
};

bool MentionsKey(std::string what) {
  for (char& c : what) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return what.find("key ") != std::string::npos;
}

TEST(CorruptionTest, TruncatedIndexAtEveryLengthIsDataLoss) {
  const std::string tmp = TempDir();
  Scratch scratch(tmp);
  for (const Bundle& b : SmallBundles(tmp)) {
    SCOPED_TRACE(b.name);
    for (size_t len = 0; len < b.index.size(); ++len) {
      const std::string prefix = scratch.Install(b.index.substr(0, len), b.data);
      std::string what;
      ASSERT_EQ(Classify(prefix, "", &what), Outcome::kDataLoss)
          << "length " << len << ": " << what;
      EXPECT_NE(what.find(IndexFilename(prefix)), std::string::npos) << what;
    }
  }
}

TEST(CorruptionTest, TruncatedDataAtEveryLengthIsDataLossNamingTheKey) {
  const std::string tmp = TempDir();
  Scratch scratch(tmp);
  for (const Bundle& b : SmallBundles(tmp)) {
    SCOPED_TRACE(b.name);
    for (size_t len = 0; len < b.data.size(); ++len) {
      const std::string prefix = scratch.Install(b.index, b.data.substr(0, len));
      std::string what;
      ASSERT_EQ(Classify(prefix, "", &what), Outcome::kDataLoss)
          << "length " << len << ": " << what;
      EXPECT_TRUE(MentionsKey(what)) << what;
      EXPECT_NE(what.find(DataFilename(prefix, 0, 1)), std::string::npos) << what;
    }
  }
}

TEST(CorruptionTest, FlippedIndexBytesAreDataLossOrHarmless) {
  const std::string tmp = TempDir();
  Scratch scratch(tmp);
  for (const Bundle& b : SmallBundles(tmp)) {
    SCOPED_TRACE(b.name);
    const std::string original = ReadEverything(scratch.Install(b.index, b.data));
    int harmless = 0;
    for (size_t pos = 0; pos < b.index.size(); ++pos) {
      for (unsigned char mask : {0x01, 0x80, 0xff}) {
        std::string index = b.index;
        index[pos] = static_cast<char>(index[pos] ^ mask);
        const std::string prefix = scratch.Install(index, b.data);
        std::string what;
        const Outcome outcome = Classify(prefix, original, &what);
        ASSERT_NE(outcome, Outcome::kOther) << "byte " << pos << " ^ " << int{mask} << ": " << what;
        if (outcome == Outcome::kSameValues) {
          ADD_FAILURE() << "flip of byte " << pos << " of " << b.index.size() << " ^ " << int{mask}
                        << " went unnoticed";
          ++harmless;
        }
      }
    }
    // Even the unused metaindex block and the footer's zero padding are checked.
    EXPECT_EQ(harmless, 0);
  }
}

TEST(CorruptionTest, FlippedDataBytesAreChecksumMismatches) {
  const std::string tmp = TempDir();
  Scratch scratch(tmp);
  for (const Bundle& b : SmallBundles(tmp)) {
    SCOPED_TRACE(b.name);
    for (size_t pos = 0; pos < b.data.size(); ++pos) {
      std::string data = b.data;
      data[pos] = static_cast<char>(data[pos] ^ 0x04);
      const std::string prefix = scratch.Install(b.index, data);
      std::string what;
      ASSERT_EQ(Classify(prefix, "", &what), Outcome::kDataLoss) << "byte " << pos << ": " << what;
      EXPECT_TRUE(MentionsKey(what)) << what;
    }
  }
}

// ---------------------------------------------------------------------------
// Hand-made indexes with the protobuf wire format spelled out (FORMAT.md 2.3,
// 2.4), independent of our protobuf code.

using ::eager::testing::wire::Field;
using ::eager::testing::wire::Varint;
using ::eager::testing::wire::VarintField;

struct RawEntry {
  int dtype = 1;
  std::vector<int64_t> dims;
  int shard = 0;
  int64_t offset = 0;
  int64_t size = 0;
  uint32_t masked_crc = 0;
  bool sliced = false;
};

std::string EntryBytes(const RawEntry& e) {
  std::string shape;
  for (int64_t d : e.dims) shape += Field(2, 2, VarintField(1, d));
  std::string out = VarintField(1, e.dtype) + Field(2, 2, shape);
  if (e.shard) out += VarintField(3, e.shard);
  if (e.offset) out += VarintField(4, e.offset);
  if (e.size) out += VarintField(5, e.size);
  std::string crc;
  internal::PutFixed32(crc, e.masked_crc);
  out += Field(6, 5, crc);
  if (e.sliced) out += Field(7, 2, Field(1, 2, ""));
  return out;
}

std::string Header(int num_shards = 1, int endianness = 0, int min_consumer = 0) {
  std::string version = VarintField(1, 1);
  if (min_consumer) version += VarintField(2, min_consumer);
  std::string out = VarintField(1, num_shards);
  if (endianness) out += VarintField(2, endianness);
  return out + Field(3, 2, version);
}

// Writes PREFIX.index with `header` (unless null) and `entries` (sorted by
// key), and PREFIX.data-00000-of-00001 holding `data`.
void WriteRaw(const std::string& prefix, const std::string* header,
              const std::map<std::string, RawEntry>& entries, const std::string& data) {
  fs::remove(IndexFilename(prefix));
  fs::remove(DataFilename(prefix, 0, 1));
  {
    auto file = internal::WritableFile::Create(IndexFilename(prefix), 4096);
    internal::TableWriter table(file.get());
    if (header) table.Add("", *header);
    for (const auto& [key, e] : entries) table.Add(key, EntryBytes(e));
    table.Finish();
    file->Close();
  }
  WriteFile(DataFilename(prefix, 0, 1), data);
}

uint32_t MaskedCrc(const std::string& bytes) { return crc32c::Mask(crc32c::Value(bytes)); }

template <typename E>
std::string ExpectThrows(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception kind: " << e.what();
    return "";
  }
  ADD_FAILURE() << "nothing thrown";
  return "";
}

class CraftedIndexTest : public ::testing::Test {
 protected:
  void SetUp() override { prefix_ = TempDir() + "/crafted"; }
  std::string header_ = Header();
  std::string prefix_;
};

TEST_F(CraftedIndexTest, TheHandMadeFormatIsRight) {
  const std::string data("\x00\x00\x80\x3f", 4);
  WriteRaw(prefix_, &header_, {{"v", {.dims = {1}, .size = 4, .masked_crc = MaskedCrc(data)}}},
           data);
  EXPECT_EQ(BundleReader(prefix_).Read("v").ToVector<float>(), std::vector<float>{1.0f});
}

TEST_F(CraftedIndexTest, UnsupportedDtypeIsListedButNotReadable) {
  const std::string data("\x00\x3c", 2);  // two quantized int8 values
  WriteRaw(prefix_, &header_,
           {{"q", {.dtype = 11, .dims = {2}, .size = 2, .masked_crc = MaskedCrc(data)}}}, data);
  BundleReader reader(prefix_);
  EXPECT_EQ(reader.Keys(), std::vector<std::string>{"q"});
  EXPECT_EQ(reader.GetEntry("q").tf_dtype, 11);
  EXPECT_FALSE(reader.GetEntry("q").dtype.has_value());
  const std::string what = ExpectThrows<UnimplementedError>([&] { reader.Read("q"); });
  EXPECT_NE(what.find('q'), std::string::npos) << what;
  EXPECT_NE(what.find("DT_QINT8"), std::string::npos) << what;
}

TEST_F(CraftedIndexTest, BigEndianBundleIsUnimplemented) {
  const std::string header = Header(1, /*endianness=*/1);
  WriteRaw(prefix_, &header, {}, "");
  const std::string what = ExpectThrows<UnimplementedError>([&] { BundleReader r(prefix_); });
  EXPECT_NE(what.find("big-endian"), std::string::npos) << what;
}

TEST_F(CraftedIndexTest, NewerConsumerVersionIsUnimplemented) {
  const std::string header = Header(1, 0, /*min_consumer=*/2);
  WriteRaw(prefix_, &header, {}, "");
  ExpectThrows<UnimplementedError>([&] { BundleReader r(prefix_); });
}

TEST_F(CraftedIndexTest, MissingHeaderIsDataLoss) {
  WriteRaw(prefix_, nullptr, {{"v", {.dims = {1}, .size = 4}}}, "abcd");
  ExpectThrows<DataLossError>([&] { BundleReader r(prefix_); });
}

TEST_F(CraftedIndexTest, SizeNotMatchingShapeIsDataLoss) {
  WriteRaw(prefix_, &header_, {{"v", {.dims = {2}, .size = 12}}}, std::string(12, '\0'));
  const std::string what = ExpectThrows<DataLossError>([&] { BundleReader r(prefix_); });
  EXPECT_NE(what.find("Invalid size in bundle entry: key 'v'; stored size 12; expected size 8"),
            std::string::npos)
      << what;
}

TEST_F(CraftedIndexTest, NegativeDimensionIsDataLoss) {
  WriteRaw(prefix_, &header_, {{"v", {.dims = {-1, 2}, .size = 8}}}, std::string(8, '\0'));
  const std::string what = ExpectThrows<DataLossError>([&] { BundleReader r(prefix_); });
  EXPECT_NE(what.find("Invalid tensor shape: key 'v'"), std::string::npos) << what;
}

TEST_F(CraftedIndexTest, ElementCountOverflowIsDataLoss) {
  WriteRaw(prefix_, &header_, {{"v", {.dims = {1ll << 40, 1ll << 40}, .size = 4}}}, "");
  ExpectThrows<DataLossError>([&] { BundleReader r(prefix_); });
}

TEST_F(CraftedIndexTest, StringEntryTooSmallForItsElementCountIsDataLoss) {
  WriteRaw(prefix_, &header_, {{"s", {.dtype = 7, .dims = {INT64_MAX}, .size = 10}}}, "");
  ExpectThrows<DataLossError>([&] { BundleReader r(prefix_); });
  WriteRaw(prefix_, &header_, {{"s", {.dtype = 7, .dims = {3}, .size = 6}}}, "");
  ExpectThrows<DataLossError>([&] { BundleReader r(prefix_); });
}

TEST_F(CraftedIndexTest, ShardOutOfRangeIsDataLoss) {
  WriteRaw(prefix_, &header_, {{"v", {.dims = {1}, .shard = 3, .size = 4}}}, "abcd");
  const std::string what = ExpectThrows<DataLossError>([&] { BundleReader r(prefix_); });
  EXPECT_NE(what.find("shard 3"), std::string::npos) << what;
}

// 4 TiB claimed by a 4-byte file: rejected before any allocation (ASan would
// abort on the allocation itself).
TEST_F(CraftedIndexTest, HugeTensorBeyondTheDataFileIsRejectedBeforeAllocating) {
  WriteRaw(prefix_, &header_,
           {{"huge", {.dims = {1ll << 40}, .size = 4ll << 40}},
            {"huge_strings", {.dtype = 7, .dims = {1ll << 40}, .size = (1ll << 40) + 4}},
            {"past_end", {.dims = {1}, .offset = 2, .size = 4}}},
           "abcd");
  BundleReader reader(prefix_);
  for (const char* key : {"huge", "huge_strings", "past_end"}) {
    const std::string what = ExpectThrows<DataLossError>([&] { reader.Read(key); });
    EXPECT_NE(what.find(std::string("Key ") + key), std::string::npos) << what;
    EXPECT_NE(what.find("which has only 4 bytes"), std::string::npos) << what;
  }
}

TEST_F(CraftedIndexTest, StringLengthsBeyondTheEntryAreDataLoss) {
  // Two strings claiming 5 + 100 bytes in a 12-byte entry; both CRCs right.
  std::string lengths_crc;
  internal::PutFixed32(lengths_crc, 5);
  internal::PutFixed32(lengths_crc, 100);
  std::string masked;
  internal::PutFixed32(masked, crc32c::Mask(crc32c::Value(lengths_crc)));
  const std::string data = Varint(5) + Varint(100) + masked + "hello!";
  const uint32_t crc = crc32c::Mask(
      crc32c::Extend(crc32c::Extend(crc32c::Value(lengths_crc), masked.data(), 4), "hello!", 6));
  WriteRaw(prefix_, &header_,
           {{"s", {.dtype = 7, .dims = {2}, .size = int64_t(data.size()), .masked_crc = crc}}},
           data);
  const std::string what = ExpectThrows<DataLossError>([&] { BundleReader(prefix_).Read("s"); });
  EXPECT_NE(what.find("string element 1 has length 100"), std::string::npos) << what;
}

TEST_F(CraftedIndexTest, StringLengthChecksumMismatchIsDataLoss) {
  const std::string data = Varint(2) + std::string("\0\0\0\0", 4) + "ab";
  WriteRaw(prefix_, &header_,
           {{"s", {.dtype = 7, .dims = {1}, .size = int64_t(data.size()), .masked_crc = 0}}}, data);
  const std::string what = ExpectThrows<DataLossError>([&] { BundleReader(prefix_).Read("s"); });
  EXPECT_NE(what.find("length checksum does not match for key s"), std::string::npos) << what;
}

TEST_F(CraftedIndexTest, BoolByteOtherThanZeroOrOneIsDataLoss) {
  const std::string data("\x01\x02", 2);
  WriteRaw(prefix_, &header_,
           {{"b", {.dtype = 10, .dims = {2}, .size = 2, .masked_crc = MaskedCrc(data)}}}, data);
  ExpectThrows<DataLossError>([&] { BundleReader(prefix_).Read("b"); });
}

TEST_F(CraftedIndexTest, PartitionedEntryWithoutItsSliceEntryIsDataLoss) {
  WriteRaw(prefix_, &header_, {{"w", {.dims = {4}, .sliced = true}}}, "");
  BundleReader reader(prefix_);
  EXPECT_EQ(reader.GetEntry("w").num_slices, 1);
  const std::string what = ExpectThrows<DataLossError>([&] { reader.Read("w"); });
  EXPECT_NE(what.find("Partitioned variable w"), std::string::npos) << what;
  EXPECT_NE(what.find("slice \"-\" has no entry"), std::string::npos) << what;
}

TEST_F(CraftedIndexTest, RankAboveEightIsListedButUnimplemented) {
  WriteRaw(
      prefix_, &header_,
      {{"r9", {.dims = {1, 1, 1, 1, 1, 1, 1, 1, 1}, .size = 4, .masked_crc = MaskedCrc("abcd")}}},
      "abcd");
  BundleReader reader(prefix_);
  EXPECT_EQ(reader.GetEntry("r9").dims.size(), 9u);
  ExpectThrows<UnimplementedError>([&] { reader.Read("r9"); });
}

}  // namespace
}  // namespace eager
