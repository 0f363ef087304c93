// Partitioned (sliced) variables (FORMAT.md 2.8): TF's slice key encoding,
// reading the full tensor assembled from the slices, and hostile layouts.

#include "saving/bundle/partitioned_variables.h"

#include <gtest/gtest.h>

#include <sstream>

#include "saving/bundle/bundle_reader.h"
#include "saving/tools/inspect_checkpoint.h"
#include "tests/saving/bundle/crafted_bundle.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::CraftedBundle;
using ::eager::testing::Hex;
using ::eager::testing::TempDir;
using internal::DecodeTensorNameSlice;
using internal::EncodeTensorNameSlice;

constexpr SliceExtent kWhole{};

// Bytes worked out by hand from OrderedCode's rules (FORMAT.md 2.8).
TEST(SliceKeyTest, EncodesAsTensorFlowsOrderedCode) {
  // 00 | "w" 00 01 | rank 01 02 | 0 -> 80, 5 -> 85 | whole: 0 -> 80, -1 -> 7f
  EXPECT_EQ(Hex(EncodeTensorNameSlice("w", {{0, 5}, kWhole})), "00 77 00 01 01 02 80 85 80 7f");
  // 100 needs two bytes: 00 64 with header c0; -100: ff 9c with header -> 3f 9c.
  EXPECT_EQ(Hex(EncodeTensorNameSlice("ab", {{100, -100}})), "00 61 62 00 01 01 01 c0 64 3f 9c");
  // 0x00 and 0xff in the name are escaped.
  EXPECT_EQ(Hex(EncodeTensorNameSlice(std::string("a\0b\xff", 4), {})),
            "00 61 00 ff 62 ff 00 00 01 00");
  // 64 is the first two-byte value; 2^13 - 1 the last; 2^13 takes three.
  EXPECT_EQ(Hex(EncodeTensorNameSlice("", {{63, 64}})), "00 00 01 01 01 bf c0 40");
  EXPECT_EQ(Hex(EncodeTensorNameSlice("", {{8191, 8192}})), "00 00 01 01 01 df ff e0 20 00");
}

TEST(SliceKeyTest, DecodesWhatItEncodesAndRejectsAnythingElse) {
  const std::vector<int64_t> values = {0,          1,         -1,        63,           -64,
                                       64,         -65,       8191,      -8192,        1 << 20,
                                       -(1 << 30), INT64_MAX, INT64_MIN, INT64_MAX / 3};
  for (int64_t a : values) {
    for (int64_t b : values) {
      TensorSlice slice = {{a, b}, {b, a}};
      for (SliceExtent& e : slice) {
        if (e.whole()) e.start = 0;  // TF writes a whole extent as start 0, length -1
      }
      const std::string key = EncodeTensorNameSlice(std::string("n\0m", 3), slice);
      std::string name;
      TensorSlice decoded;
      ASSERT_TRUE(DecodeTensorNameSlice(key, &name, &decoded)) << a << " " << b;
      EXPECT_EQ(name, std::string("n\0m", 3));
      EXPECT_EQ(decoded, slice) << a << " " << b;
      // Any strict prefix or an extra byte is not a slice key.
      std::string ignored_name;
      TensorSlice ignored;
      for (size_t n = 0; n < key.size(); ++n) {
        EXPECT_FALSE(DecodeTensorNameSlice(key.substr(0, n), &ignored_name, &ignored));
      }
      EXPECT_FALSE(DecodeTensorNameSlice(key + "x", &ignored_name, &ignored));
    }
  }
  std::string name;
  TensorSlice slice;
  EXPECT_FALSE(DecodeTensorNameSlice("plain/key", &name, &slice));
}

TEST(SliceKeyTest, PrintsAsTensorFlowsDebugString) {
  EXPECT_EQ(SliceToString({{0, 5}, kWhole}), "0,5:-");
  EXPECT_EQ(SliceToString({kWhole, {2, 1}}), "-:2,1");
  EXPECT_EQ(SliceToString({}), "");
}

// w: float32 [4, 3] saved as rows [0, 2) and [2, 4); m: int64 [2, 4] saved
// as columns [0, 1) and [1, 4), each slice under TF's slice key.
class PartitionedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = TempDir() + "/ckpt";
    AddPartitioned(
        "w", {4, 3},
        {{{{0, 2}, kWhole}, Tensor::FromVector<float>({0, 1, 2, 3, 4, 5}, Shape{2, 3})},
         {{{2, 2}, kWhole}, Tensor::FromVector<float>({6, 7, 8, 9, 10, 11}, Shape{2, 3})}});
    AddPartitioned(
        "m", {2, 4},
        {{{kWhole, {0, 1}}, Tensor::FromVector<int64_t>({10, 20}, Shape{2, 1})},
         {{kWhole, {1, 3}}, Tensor::FromVector<int64_t>({11, 12, 13, 21, 22, 23}, Shape{2, 3})}});
    bundle_.AddTensor("plain", Tensor::Vector<float>({42}));
  }

  void AddPartitioned(const std::string& key, std::vector<int64_t> full,
                      const std::vector<std::pair<TensorSlice, Tensor>>& slices) {
    testing::CraftedEntry entry{
        .dtype = TfDataType(slices[0].second.dtype()), .dims = std::move(full), .slices = {}};
    for (const auto& [slice, tensor] : slices) {
      entry.slices.push_back(slice);
      bundle_.AddTensor(EncodeTensorNameSlice(key, slice), tensor);
    }
    bundle_.entries[key] = entry;
  }

  // The error Read(key) throws, after the bundle is written.
  std::string ReadError(const std::string& key) {
    bundle_.Write(prefix_);
    const BundleReader reader(prefix_);
    try {
      (void)reader.Read(key);
    } catch (const DataLossError& e) {
      return e.what();
    }
    ADD_FAILURE() << "reading " << key << " did not throw DataLossError";
    return "";
  }

  std::string prefix_;
  CraftedBundle bundle_;
};

TEST_F(PartitionedTest, ReadsTheFullTensorAssembledFromItsSlices) {
  bundle_.Write(prefix_);
  const BundleReader reader(prefix_);
  const Tensor w = reader.Read("w");
  EXPECT_EQ(w.shape(), (Shape{4, 3}));
  EXPECT_EQ(w.ToVector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  const Tensor m = reader.Read("m");
  EXPECT_EQ(m.shape(), (Shape{2, 4}));
  EXPECT_EQ(m.ToVector<int64_t>(), (std::vector<int64_t>{10, 11, 12, 13, 20, 21, 22, 23}));
  EXPECT_EQ(reader.Read("plain").ToVector<float>(), std::vector<float>{42});
}

TEST_F(PartitionedTest, ListingShowsTheFullShapeAndHidesTheSliceEntries) {
  bundle_.Write(prefix_);
  const BundleReader reader(prefix_);
  EXPECT_TRUE(reader.IsSliceOfPartitionedVariable(EncodeTensorNameSlice("w", {{0, 2}, kWhole})));
  EXPECT_FALSE(reader.IsSliceOfPartitionedVariable("w"));
  std::ostringstream list;
  ListCheckpoint(reader, list);
  EXPECT_EQ(list.str(), prefix_ +
                            ": 3 tensors in 1 shard\n"
                            "m  int64  [2,4]  64 bytes  (partitioned into 2 slices)\n"
                            "plain  float32  [1]  4 bytes\n"
                            "w  float32  [4,3]  48 bytes  (partitioned into 2 slices)\n");
  std::ostringstream dump;
  DumpTensor(reader, "m", 0, dump);
  EXPECT_EQ(dump.str(),
            "m: tf.Tensor([[10, 11, 12, 13], [20, 21, 22, 23]], shape=(2, 4), "
            "dtype=int64)\n");
  const VerifyResult verified = VerifyCheckpoint(reader);
  EXPECT_TRUE(verified.unchecked.empty());
  EXPECT_EQ(verified.tensors, 7);  // 2 variables, their 4 slices, plain
}

TEST_F(PartitionedTest, TheIndependentVerifierReadsTheSameTensor) {
  EAGER_SKIP_WITHOUT_TFCKPT();
  bundle_.Write(prefix_);
  std::string output;
  EXPECT_EQ(testing::TfckptVerify(prefix_, &output), 0) << output;
  // tfckpt finds each slice by decoding the slice keys itself.
  ASSERT_EQ(testing::RunTfckpt("dump --json '" + prefix_ + "' m", prefix_ + ".log", &output), 0)
      << output;
  EXPECT_NE(output.find("[[10, 11, 12, 13], [20, 21, 22, 23]]"), std::string::npos) << output;
}

TEST_F(PartitionedTest, ACorruptedSliceFailsReadAndVerify) {
  bundle_.Write(prefix_);
  std::string data = testing::ReadFile(DataFilename(prefix_, 0, 1));
  data[0] ^= 0x01;  // in the first slice of w
  testing::WriteFile(DataFilename(prefix_, 0, 1), data);
  const BundleReader reader(prefix_);
  EXPECT_THROW(reader.Read("w"), DataLossError);
  EXPECT_THROW(VerifyCheckpoint(reader), DataLossError);
}

TEST_F(PartitionedTest, OverlappingSlicesAreDataLossNamingBoth) {
  // Rows [0, 3) and [2, 4): more elements than the tensor.
  AddPartitioned(
      "o", {4},
      {{{{0, 3}}, Tensor::Vector<float>({1, 2, 3})}, {{{2, 2}}, Tensor::Vector<float>({4, 5})}});
  std::string what = ReadError("o");
  EXPECT_NE(what.find("Partitioned variable o"), std::string::npos) << what;
  EXPECT_NE(what.find("slice \"2,2\""), std::string::npos) << what;
  EXPECT_NE(what.find("overlaps slice \"0,3\""), std::string::npos) << what;
  // [0, 2) and [1, 3) of 4 add up to 4 elements but overlap (and leave a hole).
  AddPartitioned(
      "p", {4},
      {{{{0, 2}}, Tensor::Vector<float>({1, 2})}, {{{1, 2}}, Tensor::Vector<float>({3, 4})}});
  what = ReadError("p");
  EXPECT_NE(what.find("slice \"1,2\""), std::string::npos) << what;
  EXPECT_NE(what.find("overlaps slice \"0,2\" (both hold element [1])"), std::string::npos) << what;
}

TEST_F(PartitionedTest, SlicesThatDoNotCoverTheTensorAreDataLoss) {
  // Row 0 of a [2, 3] tensor, and nothing for row 1.
  AddPartitioned("h", {2, 3},
                 {{{{0, 1}, kWhole}, Tensor::FromVector<float>({1, 2, 3}, Shape{1, 3})}});
  const std::string what = ReadError("h");
  EXPECT_NE(what.find("Partitioned variable h"), std::string::npos) << what;
  EXPECT_NE(what.find("hold 3 elements, expected 6"), std::string::npos) << what;
  EXPECT_NE(what.find("\"0,1:-\""), std::string::npos) << what;
}

TEST_F(PartitionedTest, ASliceBeyondTheFullShapeIsDataLoss) {
  AddPartitioned("b", {4}, {{{{3, 2}}, Tensor::Vector<float>({1, 2})}});
  const std::string what = ReadError("b");
  EXPECT_NE(what.find("slice \"3,2\" of full shape [4]"), std::string::npos) << what;
  EXPECT_NE(what.find("exceeds the full shape"), std::string::npos) << what;
  AddPartitioned("n", {4}, {{{{-1, 2}}, Tensor::Vector<float>({1, 2})}});
  EXPECT_NE(ReadError("n").find("slice \"-1,2\""), std::string::npos);
  AddPartitioned("r", {4}, {{{{0, 2}, {0, 1}}, Tensor::FromVector<float>({1, 2}, Shape{2, 1})}});
  EXPECT_NE(ReadError("r").find("2 extents, expected at most the rank 1"), std::string::npos);
}

TEST_F(PartitionedTest, AMissingSliceEntryIsDataLoss) {
  bundle_.entries["w"].slices.push_back({{4, 0}, kWhole});  // listed, never written
  const std::string what = ReadError("w");
  EXPECT_NE(what.find("Partitioned variable w"), std::string::npos) << what;
  EXPECT_NE(what.find("slice \"4,0:-\" has no entry"), std::string::npos) << what;
}

TEST_F(PartitionedTest, ASliceEntryOfAnotherDTypeOrShapeIsDataLoss) {
  AddPartitioned("d", {2}, {{{{0, 2}}, Tensor::Vector<double>({1, 2})}});
  bundle_.entries["d"].dtype = 1;  // the variable says float32
  std::string what = ReadError("d");
  EXPECT_NE(what.find("its entry holds DT_DOUBLE [2], expected DT_FLOAT [2]"), std::string::npos)
      << what;
  AddPartitioned("s", {3}, {{{{0, 3}}, Tensor::Vector<float>({1, 2})}});
  what = ReadError("s");
  EXPECT_NE(what.find("its entry holds DT_FLOAT [2], expected DT_FLOAT [3]"), std::string::npos)
      << what;
}

TEST_F(PartitionedTest, SlicesSharingDataBytesAreRefusedBeforeAllocating) {
  // Both slices of a [2^40] tensor point at the same 4 bytes: refused from
  // the index, before 4 TiB are allocated.
  AddPartitioned("big", {int64_t{1} << 40}, {{{{0, 1}}, Tensor::Vector<float>({1})}});
  bundle_.entries["big"].slices = {{{0, 1}}, {{1, 1}}};
  bundle_.entries[EncodeTensorNameSlice("big", {{1, 1}})] =
      bundle_.entries[EncodeTensorNameSlice("big", {{0, 1}})];
  const std::string what = ReadError("big");
  EXPECT_NE(what.find("share bytes of"), std::string::npos) << what;
}

}  // namespace
}  // namespace eager
