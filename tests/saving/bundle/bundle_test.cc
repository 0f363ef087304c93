// Round trips through BundleWriter/BundleReader, TF's byte layouts for small
// cases spelled out in FORMAT.md, crash safety of the writer, and the
// independent verifier on everything we write.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <cstring>
#include <filesystem>

#include "saving/bundle/bundle_files.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::ExpectVerifies;
using ::eager::testing::Hex;
using ::eager::testing::ListDir;
using ::eager::testing::ReadFile;
using ::eager::testing::TempDir;

template <typename T>
void ExpectTensorEq(const Tensor& actual, const Tensor& expected) {
  ASSERT_EQ(actual.dtype(), expected.dtype());
  ASSERT_EQ(actual.shape(), expected.shape());
  EXPECT_EQ(actual.ToVector<T>(), expected.ToVector<T>());
}

TEST(BundleTest, RoundTripsEveryDtypeAndShapeKind) {
  const std::string dir = TempDir();
  const std::string prefix = dir + "/model.ckpt";
  std::vector<double> large_values(300001);
  for (size_t i = 0; i < large_values.size(); ++i) large_values[i] = 0.25 * double(i) - 7;
  const Tensor f32 = Tensor::FromVector<float>({1.5f, -2, 3, 1e-45f, 0, 7}, Shape{2, 3});
  const Tensor f64 = Tensor::FromVector<double>(large_values);  // > 1 write chunk
  const Tensor i32 = Tensor::Scalar<int32_t>(-29001);
  const Tensor i64 = Tensor::FromVector<int64_t>({INT64_MIN, -1, 0, INT64_MAX}, Shape{2, 2});
  const Tensor b = Tensor::FromVector<bool>({true, false, false, true, true}, Shape{5});
  const Tensor s = Tensor::FromVector<std::string>(
      {"ab", "", "cde", std::string("\0\xff\x80z", 4), std::string(300, 'x')}, Shape{5});
  const Tensor s_scalar = Tensor::Scalar<std::string>("just one");
  const Tensor empty_f = Tensor::Zeros(Shape{0, 3}, DType::kFloat32);
  const Tensor empty_s = Tensor::Zeros(Shape{2, 0}, DType::kString);
  const Tensor rank8 = Tensor::Zeros(Shape{1, 2, 1, 2, 1, 2, 1, 2}, DType::kInt32);
  {
    BundleWriter writer(prefix);
    writer.Add("f32", f32);
    writer.Add("f64", f64);
    writer.Add("i32", i32);
    writer.Add("i64", i64);
    writer.Add("bool", b);
    writer.Add("strings", s);
    writer.Add("string_scalar", s_scalar);
    writer.Add("empty_float", empty_f);
    writer.Add("empty_string", empty_s);
    writer.Add("rank8", rank8);
    writer.Finish();
  }
  EXPECT_EQ(ListDir(dir),
            (std::vector<std::string>{"model.ckpt.data-00000-of-00001", "model.ckpt.index"}));

  BundleReader reader(prefix);
  EXPECT_EQ(reader.num_shards(), 1);
  EXPECT_EQ(reader.Keys(),
            (std::vector<std::string>{"bool", "empty_float", "empty_string", "f32", "f64", "i32",
                                      "i64", "rank8", "string_scalar", "strings"}));
  ExpectTensorEq<float>(reader.Read("f32"), f32);
  ExpectTensorEq<double>(reader.Read("f64"), f64);
  ExpectTensorEq<int32_t>(reader.Read("i32"), i32);
  ExpectTensorEq<int64_t>(reader.Read("i64"), i64);
  ExpectTensorEq<bool>(reader.Read("bool"), b);
  ExpectTensorEq<std::string>(reader.Read("strings"), s);
  ExpectTensorEq<std::string>(reader.Read("string_scalar"), s_scalar);
  ExpectTensorEq<float>(reader.Read("empty_float"), empty_f);
  ExpectTensorEq<std::string>(reader.Read("empty_string"), empty_s);
  ExpectTensorEq<int32_t>(reader.Read("rank8"), rank8);

  const BundleReader::Entry& e = reader.GetEntry("i64");
  EXPECT_EQ(e.tf_dtype, 9);  // DT_INT64
  EXPECT_EQ(e.dims, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(e.size, 32);
  EXPECT_EQ(reader.GetEntry("empty_float").size, 0);
  EXPECT_EQ(reader.GetEntry("empty_float").masked_crc32c, 0xA282EAD8u);  // Mask(Value(""))
  ExpectVerifies(prefix);
}

// FORMAT.md 2.7: ["ab", "", "cde"] -> 02 00 03 | 1b 42 8b ca | 61 62 63 64 65.
TEST(BundleTest, StringTensorUsesTfLayout) {
  const std::string prefix = TempDir() + "/s";
  BundleWriter writer(prefix);
  writer.Add("s", Tensor::Vector<std::string>({"ab", "", "cde"}));
  writer.Finish();
  EXPECT_EQ(Hex(ReadFile(DataFilename(prefix, 0, 1))), "02 00 03 1b 42 8b ca 61 62 63 64 65");
  ExpectVerifies(prefix);
}

// FORMAT.md 1.2 and 2.4: a float scalar 1.0 at offset 0 is stored as
// 00 00 80 3f with masked CRC 0x2BDAA581, entry 08 01 12 00 28 04 35 81 a5 da 2b.
TEST(BundleTest, FloatScalarMatchesTfEntry) {
  const std::string prefix = TempDir() + "/one";
  BundleWriter writer(prefix);
  writer.Add("v", Tensor(1.0f));
  writer.Finish();
  EXPECT_EQ(Hex(ReadFile(DataFilename(prefix, 0, 1))), "00 00 80 3f");
  const std::string index = ReadFile(IndexFilename(prefix));
  EXPECT_NE(index.find(std::string("\x08\x01\x12\x00\x28\x04\x35\x81\xa5\xda\x2b", 11)),
            std::string::npos)
      << Hex(index);
  // Header `08 01 1a 02 08 01` under the empty key, first in the table.
  EXPECT_EQ(Hex(index.substr(0, 9)), "00 00 06 08 01 1a 02 08 01");
  // Footer magic.
  EXPECT_EQ(Hex(index.substr(index.size() - 8)), "57 fb 80 8b 24 75 47 db");
  BundleReader reader(prefix);
  EXPECT_EQ(reader.GetEntry("v").masked_crc32c, 0x2BDAA581u);
}

TEST(BundleTest, IndexIsInKeyOrderAndDataInAddOrder) {
  const std::string prefix = TempDir() + "/order";
  BundleWriter writer(prefix);
  for (const char* key : {"b", "Variable_2", "_a", "Variable_10", "a"}) {
    writer.Add(key, Tensor(1.0f));
  }
  writer.Finish();
  BundleReader reader(prefix);
  // Bytewise: uppercase, then '_' (0x5f), then lowercase; "_1" < "_2".
  EXPECT_EQ(reader.Keys(), (std::vector<std::string>{"Variable_10", "Variable_2", "_a", "a", "b"}));
  EXPECT_EQ(reader.GetEntry("b").offset, 0);
  EXPECT_EQ(reader.GetEntry("Variable_2").offset, 4);
  EXPECT_EQ(reader.GetEntry("_a").offset, 8);
  EXPECT_EQ(reader.GetEntry("Variable_10").offset, 12);
  EXPECT_EQ(reader.GetEntry("a").offset, 16);
}

// More than 256 KiB of entries: several data blocks, LevelDB separators in the
// index block; tfckpt.py checks the table structure independently.
TEST(BundleTest, ManyKeysSpanSeveralIndexBlocks) {
  const std::string prefix = TempDir() + "/many";
  constexpr int kKeys = 4000;
  auto key_of = [](int i) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "model/layer_%05d/some/rather/long/variable/name/kernel", i);
    return std::string(buf);
  };
  {
    BundleWriter writer(prefix);
    for (int i = kKeys - 1; i >= 0; --i) {
      writer.Add(key_of(i), Tensor::FromVector<float>({float(i), float(-i)}, Shape{1, 2}));
    }
    writer.Finish();
  }
  EXPECT_GT(std::filesystem::file_size(IndexFilename(prefix)), 2u * 256 * 1024 / 2);
  BundleReader reader(prefix);
  ASSERT_EQ(reader.Keys().size(), size_t{kKeys});
  for (int i : {0, 1, 999, 2500, kKeys - 1}) {
    EXPECT_EQ(reader.Read(key_of(i)).ToVector<float>(), (std::vector<float>{float(i), float(-i)}));
  }
  ExpectVerifies(prefix);
}

TEST(BundleTest, RejectsEmptyAndDuplicateKeysAndStaysUsable) {
  const std::string prefix = TempDir() + "/keys";
  BundleWriter writer(prefix);
  writer.Add("x", Tensor(1.0f));
  EXPECT_THROW(writer.Add("", Tensor(1.0f)), InvalidArgumentError);
  try {
    writer.Add("x", Tensor(2.0f));
    FAIL() << "duplicate key accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("'x' was already added"), std::string::npos) << e.what();
  }
  writer.Add("y", Tensor(3.0f));
  writer.Finish();
  EXPECT_THROW(writer.Add("z", Tensor(1.0f)), FailedPreconditionError);
  EXPECT_THROW(writer.Finish(), FailedPreconditionError);
  BundleReader reader(prefix);
  EXPECT_EQ(reader.Read("x").scalar<float>(), 1.0f);
  EXPECT_EQ(reader.Read("y").scalar<float>(), 3.0f);
}

TEST(BundleTest, WritesToTempNamesUntilFinish) {
  const std::string dir = TempDir();
  BundleWriter writer(dir + "/ckpt");
  writer.Add("x", Tensor::Zeros(Shape{1000}));
  const std::vector<std::string> during = ListDir(dir);
  ASSERT_EQ(during.size(), 1u);
  EXPECT_TRUE(during[0].starts_with("ckpt.data-00000-of-00001.tempstate")) << during[0];
  writer.Finish();
  EXPECT_EQ(ListDir(dir), (std::vector<std::string>{"ckpt.data-00000-of-00001", "ckpt.index"}));
}

void WriteOriginal(const std::string& prefix) {
  BundleWriter writer(prefix);
  writer.Add("v", Tensor::Vector<float>({1, 2, 3}));
  writer.Finish();
}

void ExpectOriginalIntact(const std::string& dir, const std::string& prefix) {
  EXPECT_EQ(ListDir(dir), (std::vector<std::string>{"ckpt.data-00000-of-00001", "ckpt.index"}));
  BundleReader reader(prefix);
  EXPECT_EQ(reader.Keys(), std::vector<std::string>{"v"});
  EXPECT_EQ(reader.Read("v").ToVector<float>(), (std::vector<float>{1, 2, 3}));
}

TEST(BundleTest, WriterDestroyedWithoutFinishLeavesExistingCheckpointIntact) {
  const std::string dir = TempDir();
  const std::string prefix = dir + "/ckpt";
  WriteOriginal(prefix);
  {
    BundleWriter writer(prefix);
    writer.Add("v", Tensor::Vector<float>({9, 9, 9}));
    writer.Add("w", Tensor::Zeros(Shape{100000}));
  }  // e.g. an exception unwound past it
  ExpectOriginalIntact(dir, prefix);
}

// A real I/O failure in the middle of a save: the file-size limit makes
// write(2) fail with EFBIG.
TEST(BundleTest, IoErrorDuringAddRemovesTempFilesAndKeepsExistingCheckpoint) {
  const std::string dir = TempDir();
  const std::string prefix = dir + "/ckpt";
  WriteOriginal(prefix);
  struct rlimit old_limit;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);
  struct rlimit limit = old_limit;
  limit.rlim_cur = 1 << 20;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  bool threw = false;
  {
    BundleWriter writer(prefix);
    try {
      writer.Add("small", Tensor::Zeros(Shape{10}));
      writer.Add("big", Tensor::Zeros(Shape{1 << 20}));  // 4 MiB > the 1 MiB limit
    } catch (const OutOfRangeError& e) {
      threw = true;
      EXPECT_NE(std::string(e.what()).find(".tempstate"), std::string::npos) << e.what();
    }
    EXPECT_THROW(writer.Finish(), FailedPreconditionError);  // aborted
  }
  setrlimit(RLIMIT_FSIZE, &old_limit);
  signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(threw);
  ExpectOriginalIntact(dir, prefix);
}

// Finish() fails at the rename (the final data name is a non-empty directory).
TEST(BundleTest, FailureInFinishRemovesTempFiles) {
  const std::string dir = TempDir();
  const std::string prefix = dir + "/ckpt";
  std::filesystem::create_directories(DataFilename(prefix, 0, 1) + "/occupied");
  BundleWriter writer(prefix);
  writer.Add("v", Tensor(1.0f));
  EXPECT_THROW(writer.Finish(), Error);
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{"ckpt.data-00000-of-00001"});  // the dir
  EXPECT_FALSE(std::filesystem::exists(IndexFilename(prefix)));
}

TEST(BundleTest, CreatesMissingParentDirectories) {
  const std::string prefix = TempDir() + "/a/b/c/ckpt-1";
  BundleWriter writer(prefix);
  writer.Add("v", Tensor(2.0));
  writer.Finish();
  EXPECT_EQ(BundleReader(prefix).Read("v").scalar<double>(), 2.0);
}

TEST(BundleReaderTest, MissingThingsAreNotFound) {
  const std::string dir = TempDir();
  try {
    BundleReader reader(dir + "/nothing");
    FAIL();
  } catch (const NotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/nothing.index"), std::string::npos) << e.what();
  }
  const std::string prefix = dir + "/ckpt";
  WriteOriginal(prefix);
  BundleReader reader(prefix);
  try {
    reader.Read("nope");
    FAIL();
  } catch (const NotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find("Key nope not found in checkpoint"), std::string::npos);
  }
  EXPECT_FALSE(reader.Contains("nope"));
  for (const std::string& wrong : {IndexFilename(prefix), DataFilename(prefix, 0, 1)}) {
    try {
      BundleReader by_file_name(wrong);
      FAIL();
    } catch (const NotFoundError& e) {
      EXPECT_NE(std::string(e.what()).find("without the .index or .data-* suffix"),
                std::string::npos)
          << e.what();
    }
  }
  // Some other file under the prefix's name is not mistaken for a V1 checkpoint.
  ::eager::testing::WriteFile(dir + "/plain", "not a table");
  EXPECT_THROW(BundleReader(dir + "/plain"), NotFoundError);
  EXPECT_TRUE(reader.Contains("v"));
  std::filesystem::remove(DataFilename(prefix, 0, 1));
  BundleReader index_only(prefix);  // listing needs only the index
  EXPECT_EQ(index_only.Keys(), std::vector<std::string>{"v"});
  try {
    index_only.Read("v");
    FAIL();
  } catch (const NotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find("ckpt.data-00000-of-00001"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("key v"), std::string::npos) << e.what();
  }
}

TEST(BundleTest, EverythingWeWritePassesTheIndependentVerifier) {
  EAGER_SKIP_WITHOUT_TFCKPT();
  const std::string prefix = TempDir() + "/verified";
  BundleWriter writer(prefix);
  writer.Add("a/.ATTRIBUTES/VARIABLE_VALUE", Tensor::Vector<float>({1, 2}));
  writer.Add("b", Tensor::Vector<std::string>({"x", "yz"}));
  writer.Add("c", Tensor::Scalar<int64_t>(42));
  writer.Add("d", Tensor::Zeros(Shape{0}, DType::kBool));
  writer.Finish();
  std::string output;
  EXPECT_EQ(::eager::testing::TfckptVerify(prefix, &output), 0) << output;
  // And the verifier does fail on a corrupt file (so the checks above mean something).
  std::string data = ReadFile(DataFilename(prefix, 0, 1));
  data[1] ^= 0x10;
  ::eager::testing::WriteFile(DataFilename(prefix, 0, 1), data);
  EXPECT_NE(::eager::testing::TfckptVerify(prefix, &output), 0) << output;
}

}  // namespace
}  // namespace eager
