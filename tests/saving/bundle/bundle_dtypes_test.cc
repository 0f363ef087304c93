// Every dtype TensorFlow writes goes through BundleWriter and BundleReader
// unchanged, with TF's DataType numbers, and the files pass tfckpt.py.

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <limits>
#include <sstream>

#include "saving/bundle/bundle_files.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/bundle/crc32c.h"
#include "saving/tools/inspect_checkpoint.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::ReadFile;
using ::eager::testing::TempDir;

// One tensor per storage dtype, with values that use every byte.
std::map<std::string, Tensor> StorageTensors() {
  return {
      {"half", Tensor::FromVector<Half>({Half(0.1f), Half(-65504.0f), Half(6e-8f), Half(1.0f)},
                                        Shape{2, 2})},
      {"bfloat16", Tensor::Vector<BFloat16>({BFloat16(0.1f), BFloat16(-3e38f)})},
      {"complex64", Tensor::Vector<std::complex<float>>({{1, -2}, {0.5f, 1e30f}})},
      {"complex128", Tensor::Scalar(std::complex<double>(1e-300, -7))},
      {"int8", Tensor::Vector<int8_t>({-128, 127, 0})},
      {"int16", Tensor::Vector<int16_t>({-32768, 32767})},
      {"uint8", Tensor::Vector<uint8_t>({0, 255, 7})},
      {"uint16", Tensor::Vector<uint16_t>({65535, 1})},
      {"uint32", Tensor::Vector<uint32_t>({4294967295u, 2})},
      {"uint64", Tensor::Vector<uint64_t>({std::numeric_limits<uint64_t>::max(), 3})},
      {"empty_half", Tensor::Zeros(Shape{0, 3}, DType::kHalf)},
  };
}

std::string Bytes(const Tensor& t) {
  return std::string(reinterpret_cast<const char*>(t.bytes().data()), t.bytes().size());
}

std::string WriteStorageBundle(const std::string& prefix) {
  BundleWriter writer(prefix);
  for (const auto& [key, tensor] : StorageTensors()) writer.Add(key, tensor);
  writer.Finish();
  return prefix;
}

TEST(BundleDTypesTest, EveryStorageDTypeRoundTripsByteForByte) {
  const std::string prefix = WriteStorageBundle(TempDir() + "/ckpt");
  const BundleReader reader(prefix);
  const std::string data = ReadFile(DataFilename(prefix, 0, 1));
  for (const auto& [key, expected] : StorageTensors()) {
    SCOPED_TRACE(key);
    const BundleReader::Entry& entry = reader.GetEntry(key);
    // The index records TF's DataType number and the element bytes' CRC32C.
    EXPECT_EQ(entry.tf_dtype, TfDataType(expected.dtype()));
    EXPECT_EQ(entry.size, static_cast<int64_t>(expected.bytes().size()));
    EXPECT_EQ(data.substr(static_cast<size_t>(entry.offset), static_cast<size_t>(entry.size)),
              Bytes(expected));
    EXPECT_EQ(internal::crc32c::Unmask(entry.masked_crc32c),
              internal::crc32c::Value(Bytes(expected).data(), Bytes(expected).size()));
    const Tensor actual = reader.Read(key);
    EXPECT_EQ(actual.dtype(), expected.dtype());
    EXPECT_EQ(actual.shape(), expected.shape());
    EXPECT_EQ(Bytes(actual), Bytes(expected));
  }
}

TEST(BundleDTypesTest, TfDataTypeNumbersAreTypesProtos) {
  const std::string prefix = WriteStorageBundle(TempDir() + "/ckpt");
  const BundleReader reader(prefix);
  // types.proto, independently of runtime/dtype.cc's table.
  const std::map<std::string, int> expected = {
      {"half", 19}, {"bfloat16", 14}, {"complex64", 8}, {"complex128", 18}, {"int8", 6},
      {"int16", 5}, {"uint8", 4},     {"uint16", 17},   {"uint32", 22},     {"uint64", 23}};
  for (const auto& [key, tf_dtype] : expected) EXPECT_EQ(reader.GetEntry(key).tf_dtype, tf_dtype);
}

TEST(BundleDTypesTest, CorruptedStorageDTypeBytesFailTheChecksum) {
  const std::string prefix = WriteStorageBundle(TempDir() + "/ckpt");
  std::string data = ReadFile(DataFilename(prefix, 0, 1));
  const int64_t offset = BundleReader(prefix).GetEntry("bfloat16").offset;
  data[static_cast<size_t>(offset)] ^= 0x01;
  ::eager::testing::WriteFile(DataFilename(prefix, 0, 1), data);
  const BundleReader reader(prefix);
  try {
    (void)reader.Read("bfloat16");
    FAIL() << "corrupted bfloat16 bytes were read";
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string(e.what()).find("Checksum does not match for key bfloat16"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(VerifyCheckpoint(reader), DataLossError);
}

TEST(BundleDTypesTest, EagerCkptListAndDumpShowThem) {
  const std::string prefix = WriteStorageBundle(TempDir() + "/ckpt");
  const BundleReader reader(prefix);
  std::ostringstream list;
  ListCheckpoint(reader, list);
  EXPECT_NE(list.str().find("half  float16  [2,2]  8 bytes"), std::string::npos) << list.str();
  EXPECT_NE(list.str().find("complex128  complex128  []  16 bytes"), std::string::npos);
  EXPECT_NE(list.str().find("uint64  uint64  [2]  16 bytes"), std::string::npos);
  std::ostringstream dump;
  DumpTensor(reader, "complex64", 0, dump);
  EXPECT_EQ(dump.str(),
            "complex64: tf.Tensor([(1-2j), (0.5+1e+30j)], shape=(2,), dtype=complex64)\n");
  std::ostringstream json;
  DumpTensorJson(reader, "half", 0, json);
  EXPECT_NE(json.str().find("\"values\":[0.0999755859375,-65504,"), std::string::npos)
      << json.str();
  const VerifyResult verified = VerifyCheckpoint(reader);
  EXPECT_EQ(verified.tensors, static_cast<int64_t>(StorageTensors().size()));
  EXPECT_TRUE(verified.unchecked.empty());
}

TEST(BundleDTypesTest, FilesWithEveryStorageDTypePassTheIndependentVerifier) {
  EAGER_SKIP_WITHOUT_TFCKPT();
  const std::string prefix = WriteStorageBundle(TempDir() + "/ckpt");
  std::string output;
  EXPECT_EQ(::eager::testing::TfckptVerify(prefix, &output), 0) << output;
  // tfckpt decodes the values itself: float16 0.1 and complex64 (1-2j).
  EXPECT_EQ(::eager::testing::RunTfckpt("dump '" + prefix + "' half", prefix + ".log", &output), 0);
  EXPECT_NE(output.find("0.0999755859375"), std::string::npos) << output;
  EXPECT_EQ(
      ::eager::testing::RunTfckpt("dump '" + prefix + "' complex64", prefix + ".log", &output), 0);
  EXPECT_NE(output.find("(1-2j)"), std::string::npos) << output;
}

}  // namespace
}  // namespace eager
