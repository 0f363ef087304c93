// DT_VARIANT and DT_RESOURCE entries: kept as opaque bytes, listed, shown by
// dump, and checked by verify, which fails on a corrupted one.

#include <gtest/gtest.h>

#include <sstream>

#include "saving/bundle/bundle_reader.h"
#include "saving/tools/inspect_checkpoint.h"
#include "tests/saving/bundle/crafted_bundle.h"

namespace eager {
namespace {

using ::eager::testing::CraftedBundle;
using ::eager::testing::ReadFile;
using ::eager::testing::TempDir;
namespace crc32c = internal::crc32c;

// TF's WriteVariantTensor layout, written out here from its description:
// per element varint64 length, the bytes, then the masked running CRC; the
// running CRC covers each length as 8 little-endian bytes, the bytes and each
// stored checksum. Returns the bytes and sets *crc to the entry's CRC.
std::string VariantBytes(const std::vector<std::string>& elements, uint32_t* crc) {
  std::string out;
  uint32_t running = 0;
  for (const std::string& element : elements) {
    internal::PutVarint64(out, element.size());
    std::string length;
    internal::PutFixed64(length, element.size());
    running = crc32c::Extend(running, length.data(), length.size());
    out += element;
    running = crc32c::Extend(running, element.data(), element.size());
    std::string stored;
    internal::PutFixed32(stored, crc32c::Mask(running));
    out += stored;
    running = crc32c::Extend(running, stored.data(), stored.size());
  }
  *crc = running;
  return out;
}

class OpaqueEntriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = TempDir() + "/ckpt";
    bundle_.AddTensor("a_float", Tensor::Vector<float>({1, 2}));
    // Two serialized VariantTensorDataProtos (type_name "x", metadata); the
    // bytes are opaque to the checksum.
    uint32_t crc = 0;
    const std::string variant = VariantBytes({"\x0a\x01x\x12\x03"
                                              "abc",
                                              ""},
                                             &crc);
    testing::CraftedEntry& v = bundle_.AddBytes("iterator", /*DT_VARIANT*/ 21, {2}, variant);
    v.masked_crc = crc32c::Mask(crc);
    variant_offset_ = v.offset;
    bundle_.AddBytes("handle", /*DT_RESOURCE*/ 20, {}, std::string("\x01\x02\x03\x04\x05", 5));
    bundle_.Write(prefix_);
  }

  void CorruptDataByte(int64_t at) {
    std::string data = ReadFile(DataFilename(prefix_, 0, 1));
    data[static_cast<size_t>(at)] ^= 0x20;
    testing::WriteFile(DataFilename(prefix_, 0, 1), data);
  }

  std::string prefix_;
  CraftedBundle bundle_;
  int64_t variant_offset_ = 0;
};

TEST_F(OpaqueEntriesTest, ReadingTheBundleDoesNotFailOnThem) {
  const BundleReader reader(prefix_);
  EXPECT_EQ(reader.Keys(), (std::vector<std::string>{"a_float", "handle", "iterator"}));
  EXPECT_EQ(reader.Read("a_float").ToVector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(reader.GetEntry("iterator").tf_dtype, 21);
  try {
    (void)reader.Read("iterator");
    FAIL() << "a variant was read as a tensor";
  } catch (const UnimplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("iterator"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("DT_VARIANT"), std::string::npos) << e.what();
  }
}

TEST_F(OpaqueEntriesTest, VerifyChecksTheirChecksums) {
  const VerifyResult result = VerifyCheckpoint(BundleReader(prefix_));
  EXPECT_EQ(result.tensors, 3);
  EXPECT_TRUE(result.unchecked.empty());
}

TEST_F(OpaqueEntriesTest, DumpShowsThemAsOpaque) {
  const BundleReader reader(prefix_);
  std::ostringstream text, json;
  DumpTensor(reader, "iterator", 0, text);
  EXPECT_EQ(text.str(), StrCat("iterator: opaque DT_VARIANT [2], ",
                               reader.GetEntry("iterator").size, " bytes, checksum ok\n"));
  DumpTensorJson(reader, "handle", 0, json);
  EXPECT_EQ(json.str(),
            "{\"key\":\"handle\",\"dtype\":\"DT_RESOURCE\",\"shape\":[],\"opaque\":true,"
            "\"bytes\":5,\"checksum\":\"ok\"}\n");
  std::ostringstream list;
  ListCheckpoint(reader, list);
  EXPECT_NE(list.str().find("iterator  DT_VARIANT  [2]"), std::string::npos) << list.str();
}

TEST_F(OpaqueEntriesTest, ACorruptedVariantByteFailsVerifyAndDump) {
  CorruptDataByte(variant_offset_ + 3);  // inside the first element's bytes
  const BundleReader reader(prefix_);
  try {
    (void)VerifyCheckpoint(reader);
    FAIL() << "verify passed a corrupted variant";
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string(e.what()).find("iterator"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Checksum does not match"), std::string::npos) << e.what();
  }
  std::ostringstream out;
  EXPECT_THROW(DumpTensor(reader, "iterator", 0, out), DataLossError);
  EXPECT_EQ(out.str(), "");
}

TEST_F(OpaqueEntriesTest, AnyFlippedVariantByteIsCaught) {
  const int64_t size = BundleReader(prefix_).GetEntry("iterator").size;
  const std::string clean = ReadFile(DataFilename(prefix_, 0, 1));
  for (int64_t i = 0; i < size; ++i) {
    CorruptDataByte(variant_offset_ + i);
    EXPECT_THROW(BundleReader(prefix_).VerifyChecksum("iterator"), DataLossError) << "byte " << i;
    testing::WriteFile(DataFilename(prefix_, 0, 1), clean);
  }
  EXPECT_NO_THROW(BundleReader(prefix_).VerifyChecksum("iterator"));
}

TEST_F(OpaqueEntriesTest, AVariantLengthRunningPastTheEntryIsDataLossNotACrash) {
  // One element claiming 2^40 bytes, with a valid entry checksum over it.
  std::string bytes;
  internal::PutVarint64(bytes, uint64_t{1} << 40);
  bytes += "abcd";
  bundle_.AddBytes("huge", 21, {1}, bytes);
  bundle_.Write(prefix_);
  try {
    BundleReader(prefix_).VerifyChecksum("huge");
    FAIL();
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string(e.what()).find("DT_VARIANT element 0 has length 1099511627776"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(OpaqueEntriesTest, ACorruptedResourceByteFailsVerify) {
  CorruptDataByte(BundleReader(prefix_).GetEntry("handle").offset);
  EXPECT_THROW(VerifyCheckpoint(BundleReader(prefix_)), DataLossError);
}

TEST_F(OpaqueEntriesTest, TheIndependentVerifierAgreesOnTheVariantLayout) {
  EAGER_SKIP_WITHOUT_TFCKPT();
  // tfckpt refuses DT_RESOURCE entries (TF never saves them): verify a
  // bundle with the variant alone.
  CraftedBundle only_variant;
  uint32_t crc = 0;
  const std::string variant = VariantBytes({"\x0a\x01x", "yz"}, &crc);
  only_variant.AddBytes("iterator", 21, {2}, variant).masked_crc = crc32c::Mask(crc);
  only_variant.Write(prefix_ + "v");
  std::string output;
  EXPECT_EQ(testing::TfckptVerify(prefix_ + "v", &output), 0) << output;
  EXPECT_NO_THROW(VerifyCheckpoint(BundleReader(prefix_ + "v")));
  std::string data = ReadFile(DataFilename(prefix_ + "v", 0, 1));
  data[2] ^= 0x01;
  testing::WriteFile(DataFilename(prefix_ + "v", 0, 1), data);
  EXPECT_NE(testing::TfckptVerify(prefix_ + "v", &output), 0) << output;
  EXPECT_THROW(VerifyCheckpoint(BundleReader(prefix_ + "v")), DataLossError);
}

}  // namespace
}  // namespace eager
