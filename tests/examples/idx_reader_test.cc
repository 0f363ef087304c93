// The IDX reader on small files written here, byte by byte, in the layout of
// the MNIST format description (big-endian header, 0x08 = unsigned byte).

#include "examples/fashion_mnist/idx_reader.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "examples/fashion_mnist/dataset.h"
#include "examples/fashion_mnist/progress_bar.h"
#include "runtime/errors.h"

namespace fashion_mnist {
namespace {

using Bytes = std::vector<unsigned char>;

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("EAGER_TEST_TMPDIR");
  std::filesystem::path base =
      dir != nullptr ? std::filesystem::path(dir) : std::filesystem::temp_directory_path();
  base /= "idx_reader_test";
  std::filesystem::create_directories(base);
  return (base / name).string();
}

void WriteRaw(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

void WriteGzip(const std::string& path, const Bytes& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  gzclose(f);
}

// Header for unsigned-byte data with the given dimensions.
Bytes Header(const std::vector<uint32_t>& dims, unsigned char type = 0x08) {
  Bytes b = {0, 0, type, static_cast<unsigned char>(dims.size())};
  for (uint32_t d : dims) {
    b.push_back(d >> 24);
    b.push_back((d >> 16) & 0xff);
    b.push_back((d >> 8) & 0xff);
    b.push_back(d & 0xff);
  }
  return b;
}

Bytes Concat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

template <typename E>
std::string MessageOf(const std::string& path) {
  try {
    ReadIdxFile(path);
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception kind: ") + e.what();
  }
  return "no exception";
}

TEST(IdxReaderTest, ReadsGzipAndPlainFiles) {
  const Bytes data = {1, 2, 3, 4, 5, 6, 250, 251, 252, 253, 254, 255};
  const Bytes file = Concat(Header({2, 3, 2}), data);
  for (bool gz : {true, false}) {
    const std::string path = TempPath(gz ? "ok.idx.gz" : "ok.idx");
    if (gz) {
      WriteGzip(path, file);
    } else {
      WriteRaw(path, file);
    }
    IdxArray a = ReadIdxFile(path);
    EXPECT_EQ(a.dims, (std::vector<int64_t>{2, 3, 2}));
    EXPECT_EQ(a.data, std::vector<uint8_t>(data.begin(), data.end()));
  }
}

TEST(IdxReaderTest, MissingFileIsNotFoundAndNamesThePath) {
  const std::string path = TempPath("does-not-exist.gz");
  std::filesystem::remove(path);
  const std::string message = MessageOf<eager::NotFoundError>(path);
  EXPECT_NE(message.find(path), std::string::npos) << message;
}

TEST(IdxReaderTest, MalformedFilesAreDataLoss) {
  struct Case {
    const char* name;
    Bytes bytes;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"empty", {}, "shorter than"},
      {"magic", Concat({1, 0, 8, 1}, {0, 0, 0, 0}), "bad magic"},
      {"type", Header({1}, 0x42), "unknown element type"},
      {"rank0", Header({}), "0 dimensions"},
      {"dims", Bytes{0, 0, 8, 2, 0, 0, 0, 1, 0, 0}, "inside dimension 1"},
      {"truncated", Concat(Header({2, 3}), {1, 2, 3, 4}), "truncated"},
      {"trailing", Concat(Header({2}), {1, 2, 3}), "more data"},
      {"huge", Header({0xffffffffu, 0xffffffffu}), "claim more than"},
  };
  for (const Case& c : cases) {
    const std::string path = TempPath(std::string(c.name) + ".gz");
    WriteGzip(path, c.bytes);
    const std::string message = MessageOf<eager::DataLossError>(path);
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.name << ": " << message;
    EXPECT_NE(message.find(path), std::string::npos) << c.name << ": " << message;
  }
}

TEST(IdxReaderTest, OtherValidElementTypesAreUnimplemented) {
  const std::string path = TempPath("int32.gz");
  WriteGzip(path, Concat(Header({1}, 0x0C), {0, 0, 0, 7}));
  const std::string message = MessageOf<eager::UnimplementedError>(path);
  EXPECT_NE(message.find("element type 0xc"), std::string::npos) << message;
}

TEST(IdxReaderTest, CorruptGzipStreamIsDataLoss) {
  Bytes data(5000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 7919 % 251);
  const std::string whole = TempPath("whole.gz");
  WriteGzip(whole, Concat(Header({5000}), data));
  std::ifstream in(whole, std::ios::binary);
  Bytes gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  gz.resize(gz.size() / 2);  // cut the compressed stream
  const std::string cut = TempPath("cut.gz");
  WriteRaw(cut, gz);
  const std::string message = MessageOf<eager::DataLossError>(cut);
  EXPECT_NE(message.find(cut), std::string::npos) << message;
}

TEST(DatasetTest, ChecksShapesCountsAndLabels) {
  const std::vector<uint8_t> pixels(2 * 28 * 28, 255);
  Dataset d = MakeDataset("t", {2, 28, 28}, pixels, {2}, {3, 9});
  EXPECT_EQ(d.images.shape(), (eager::Shape{2, 784}));
  EXPECT_EQ(d.images.data<float>()[0], 1.0f);
  EXPECT_EQ(d.labels.ToVector<int32_t>(), (std::vector<int32_t>{3, 9}));
  EXPECT_THROW(MakeDataset("t", {2, 28, 28}, pixels, {2}, {3, 10}), eager::DataLossError);
  EXPECT_THROW(MakeDataset("t", {2, 28, 28}, pixels, {3}, {3, 1, 2}), eager::DataLossError);
  EXPECT_THROW(MakeDataset("t", {1, 28, 56}, pixels, {1}, {3}), eager::DataLossError);
  Dataset b = Batch(d, {1, 0}, 0, 1);
  EXPECT_EQ(b.labels.ToVector<int32_t>(), std::vector<int32_t>{9});
}

TEST(DatasetTest, MissingDataDirNamesTheFile) {
  try {
    LoadSplit(TempPath("no-such-dir"), "train");
    FAIL() << "expected NotFoundError";
  } catch (const eager::NotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find("train-images-idx3-ubyte.gz"), std::string::npos);
  }
}

TEST(ProgressBarTest, FormatShowsStepLossAndRate) {
  EXPECT_EQ(ProgressBar::Format("epoch 1/2", 5, 10, 0.5f, 1234.4, 10),
            "epoch 1/2 [=====>    ] 5/10 loss 0.5000 1234 ex/s");
  EXPECT_EQ(ProgressBar::Format("e", 10, 10, 0.25f, 2, 4), "e [====] 10/10 loss 0.2500 2 ex/s");
}

}  // namespace
}  // namespace fashion_mnist
