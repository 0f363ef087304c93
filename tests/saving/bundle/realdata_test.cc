// Reading every real TensorFlow-written bundle in realdata, checked against
// the listings an independent reader wrote into each case's SOURCE.md, TF's
// own golden numbers, and writing the same tensors back byte for byte.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "saving/bundle/bundle_files.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
using ::eager::testing::ReadFile;
using ::eager::testing::RealdataDir;
using ::eager::testing::TempDir;

// One row of a "## Observed bundle contents: `P`" table in a SOURCE.md.
struct ListedEntry {
  std::string key;
  std::string dtype;  // "float", "double", "int32", "int64", "string"
  std::string shape;  // "[2, 4]"
  int shard = 0;
  int64_t offset = 0;
  int64_t size = 0;
  std::string values;  // "0.5, 2" or prose for big/string tensors
};

struct ListedBundle {
  std::string prefix;  // absolute
  std::vector<ListedEntry> entries;
  size_t more = 0;  // "| ... 305 more entries ... |": the listing stops early
};

std::string Trim(std::string s) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

std::vector<std::string> SplitCells(const std::string& row) {
  std::vector<std::string> cells;
  std::stringstream in(row);
  std::string cell;
  while (std::getline(in, cell, '|')) cells.push_back(Trim(cell));
  return cells;  // cells[0] is the empty text before the first '|'
}

std::vector<ListedBundle> ListedBundles() {
  std::vector<ListedBundle> bundles;
  for (const auto& item : fs::directory_iterator(RealdataDir())) {
    const fs::path source = item.path() / "SOURCE.md";
    if (!fs::exists(source)) continue;
    std::ifstream in(source);
    std::string line;
    ListedBundle* current = nullptr;
    const std::string marker = "## Observed bundle contents: `";
    while (std::getline(in, line)) {
      if (line.starts_with("## ")) current = nullptr;
      if (line.starts_with(marker)) {
        const std::string rel =
            line.substr(marker.size(), line.find('`', marker.size()) - marker.size());
        bundles.push_back({(item.path() / rel).string(), {}});
        current = &bundles.back();
        continue;
      }
      if (current != nullptr && line.starts_with("| ... ")) {
        current->more = std::stoul(line.substr(6));
        continue;
      }
      if (current == nullptr || !line.starts_with("| `")) continue;
      const std::vector<std::string> cells = SplitCells(line);
      if (cells.size() < 8) continue;
      ListedEntry e;
      e.key = cells[1].substr(1, cells[1].size() - 2);  // strip the backticks
      e.dtype = cells[2];
      e.shape = cells[3];
      e.shard = std::stoi(cells[4]);
      e.offset = std::stoll(cells[5]);
      e.size = std::stoll(cells[6]);
      e.values = cells[7];
      current->entries.push_back(e);
    }
  }
  std::sort(bundles.begin(), bundles.end(),
            [](const auto& a, const auto& b) { return a.prefix < b.prefix; });
  return bundles;
}

std::string ShapeText(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + "]";
}

std::string TfDtypeShortName(int tf_dtype) {
  switch (tf_dtype) {
    case 1:
      return "float";
    case 2:
      return "double";
    case 3:
      return "int32";
    case 7:
      return "string";
    case 9:
      return "int64";
    default:
      return "dtype" + std::to_string(tf_dtype);
  }
}

std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> out;
  VisitDType(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (requires(const T& v) { static_cast<double>(v); }) {  // real numbers
      for (const T& v : t.data<T>()) out.push_back(static_cast<double>(v));
    }
  });
  return out;
}

// Values as listed, or empty when the cell is prose ("(data file not present)").
std::vector<double> ParseValues(const std::string& cell) {
  std::vector<double> values;
  if (cell.empty() || !(std::isdigit(static_cast<unsigned char>(cell[0])) || cell[0] == '-')) {
    return values;
  }
  std::stringstream in(cell);
  std::string item;
  while (std::getline(in, item, ',')) values.push_back(std::stod(Trim(item)));
  return values;
}

bool DataPresent(const BundleReader& reader, int shard) {
  return fs::exists(DataFilename(reader.prefix(), shard, reader.num_shards()));
}

TEST(RealdataTest, ReadsEveryListedBundleAsTheIndependentListingSays) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::vector<ListedBundle> bundles = ListedBundles();
  ASSERT_GE(bundles.size(), 25u) << "SOURCE.md listings not found";
  int tensors_read = 0;
  for (const ListedBundle& listed : bundles) {
    SCOPED_TRACE(listed.prefix);
    BundleReader reader(listed.prefix);
    std::vector<std::string> keys;
    for (const ListedEntry& e : listed.entries) keys.push_back(e.key);
    std::sort(keys.begin(), keys.end());
    if (listed.more == 0) {
      EXPECT_EQ(reader.Keys(), keys);
    } else {
      EXPECT_EQ(reader.Keys().size(), keys.size() + listed.more);
    }
    for (const ListedEntry& e : listed.entries) {
      SCOPED_TRACE(e.key);
      const BundleReader::Entry& entry = reader.GetEntry(e.key);
      EXPECT_EQ(TfDtypeShortName(entry.tf_dtype), e.dtype);
      EXPECT_EQ(ShapeText(entry.dims), e.shape);
      EXPECT_EQ(entry.shard_id, e.shard);
      EXPECT_EQ(entry.offset, e.offset);
      EXPECT_EQ(entry.size, e.size);
      if (!DataPresent(reader, entry.shard_id)) continue;
      const Tensor t = reader.Read(e.key);
      ++tensors_read;
      EXPECT_EQ(t.shape(), entry.shape());
      EXPECT_EQ(t.dtype(), *entry.dtype);
      if (t.dtype() == DType::kString) {
        // The bytes are varint lengths, 4 CRC bytes, then the strings.
        int64_t bytes = 4;
        for (const std::string& s : t.data<std::string>()) {
          bytes += static_cast<int64_t>(s.size());
          for (uint64_t v = s.size();; v >>= 7) {
            ++bytes;
            if (v < 0x80) break;
          }
        }
        EXPECT_EQ(bytes, e.size);
        continue;
      }
      const std::vector<double> expected = ParseValues(e.values);
      if (expected.empty()) continue;
      const std::vector<double> actual = AsDoubles(t);
      ASSERT_EQ(actual.size(), expected.size());
      for (size_t i = 0; i < actual.size(); ++i) {
        // The listing prints 9 significant digits.
        EXPECT_NEAR(actual[i], expected[i], 1e-8 * std::abs(expected[i])) << "element " << i;
      }
    }
  }
  EXPECT_GT(tensors_read, 450);
}

// tensorflow/models' golden reference: (x @ K1 + b1) @ K2 + b2 = 0.4701630473136902.
TEST(RealdataTest, GoldenDenseForwardPassFromRealWeights) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string dir = RealdataDir() + "/tf1_golden_reference_data/reference_data_test/dense";
  BundleReader reader(dir + "/model.ckpt");
  const auto x = reader.Read("input_tensor").ToVector<float>();     // [1, 2]
  const auto k1 = reader.Read("dense/kernel").ToVector<float>();    // [2, 4]
  const auto b1 = reader.Read("dense/bias").ToVector<float>();      // [4]
  const auto k2 = reader.Read("dense_1/kernel").ToVector<float>();  // [4, 1]
  const auto b2 = reader.Read("dense_1/bias").ToVector<float>();    // [1]
  ASSERT_EQ(reader.GetEntry("dense/kernel").dims, (std::vector<int64_t>{2, 4}));
  double out = b2[0];
  for (int j = 0; j < 4; ++j) {
    double h = b1[j];
    for (int i = 0; i < 2; ++i) h += double(x[i]) * k1[i * 4 + j];
    out += h * k2[j];
  }
  // results.json: [shape..., first, last, sum] of the output.
  std::string json = ReadFile(dir + "/results.json");
  const double golden = std::stod(json.substr(json.find_last_of(',') + 1));
  EXPECT_NEAR(golden, 0.4701630473, 1e-9);
  EXPECT_NEAR(out, golden, 1e-6);
}

TEST(RealdataTest, TwoShardKerasCheckpoint) {
  EAGER_SKIP_WITHOUT_REALDATA();
  BundleReader reader(RealdataDir() + "/tf2_keras_sharded2_iris/model.ckpt");
  EXPECT_EQ(reader.num_shards(), 2);
  EXPECT_EQ(reader.GetEntry("_CHECKPOINTABLE_OBJECT_GRAPH").shard_id, 0);
  EXPECT_EQ(reader.GetEntry("layer-2/bias/.ATTRIBUTES/VARIABLE_VALUE").shard_id, 1);
  EXPECT_EQ(reader.Read("optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE").scalar<int64_t>(), 3840);
  EXPECT_EQ(reader.Read("layer-1/kernel/.ATTRIBUTES/VARIABLE_VALUE").shape(), (Shape{4, 128}));
  const Tensor graph = reader.Read("_CHECKPOINTABLE_OBJECT_GRAPH");
  EXPECT_EQ(graph.dtype(), DType::kString);
  EXPECT_EQ(graph.rank(), 0);
}

TEST(RealdataTest, Float64GpflowCheckpoint) {
  EAGER_SKIP_WITHOUT_REALDATA();
  BundleReader reader(RealdataDir() + "/tf2_checkpoint_gpflow_float64/checkpoints/ckpt-1");
  int float64_tensors = 0;
  for (const std::string& key : reader.Keys()) {
    if (reader.GetEntry(key).dtype == DType::kFloat64) {
      const Tensor t = reader.Read(key);
      for (double v : t.data<double>()) ASSERT_TRUE(std::isfinite(v)) << key;
      ++float64_tensors;
    }
  }
  EXPECT_GE(float64_tensors, 10);
  EXPECT_EQ(reader.GetEntry("save_counter/.ATTRIBUTES/VARIABLE_VALUE").dtype, DType::kInt64);
}

// FORMAT.md 7.2: beta1_power is 4 x 2^-149, a float32 denormal, stored unflushed.
TEST(RealdataTest, LenetDenormalBeta1Power) {
  EAGER_SKIP_WITHOUT_REALDATA();
  BundleReader reader(RealdataDir() + "/tf1_saver_lenet_adam/lenet");
  const float beta1_power = reader.Read("beta1_power").scalar<float>();
  EXPECT_EQ(std::bit_cast<uint32_t>(beta1_power), 4u);
  EXPECT_FLOAT_EQ(beta1_power, 5.605193857e-45f);
  EXPECT_NEAR(reader.Read("beta2_power").scalar<float>(), 0.0135266297, 1e-9);
}

TEST(RealdataTest, SnappyCompressedIndexBlocks) {
  EAGER_SKIP_WITHOUT_REALDATA();
  BundleReader tf1(RealdataDir() + "/savedmodel_tf1_half_plus_two/00000123/variables/variables");
  EXPECT_EQ(tf1.Read("a").scalar<float>(), 0.5f);
  EXPECT_EQ(tf1.Read("b").scalar<float>(), 2.0f);
  EXPECT_EQ(tf1.Read("c").scalar<float>(), 3.0f);
  BundleReader tf2(RealdataDir() + "/savedmodel_tf2_half_plus_two/00000123/variables/variables");
  EXPECT_EQ(tf2.Read("a/.ATTRIBUTES/VARIABLE_VALUE").scalar<float>(), 0.5f);
}

TEST(RealdataTest, IndexWithoutDataFileListsButDoesNotRead) {
  EAGER_SKIP_WITHOUT_REALDATA();
  BundleReader reader(RealdataDir() + "/tf1_saver_ssd_mobilenet_v2_index_only/model.ckpt");
  EXPECT_EQ(reader.Keys().size(), 345u);
  EXPECT_EQ(reader.GetEntry("global_step").dtype, DType::kInt64);
  EXPECT_THROW(reader.Read("global_step"), NotFoundError);
}

TEST(RealdataTest, LegacyV1CheckpointIsRejectedClearly) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string dir = RealdataDir() + "/legacy_v1_session_bundle_half_plus_two/00000123";
  for (const std::string& prefix : {dir + "/export", dir + "/export-00000-of-00001"}) {
    try {
      BundleReader reader(prefix);
      FAIL() << "accepted " << prefix;
    } catch (const UnimplementedError& e) {
      EXPECT_NE(std::string(e.what()).find("legacy V1"), std::string::npos) << e.what();
    }
  }
  // Even under a V2 name, its header gives it away.
  const std::string tmp = TempDir();
  fs::copy_file(dir + "/export-00000-of-00001", tmp + "/v1.index");
  try {
    BundleReader reader(tmp + "/v1");
    FAIL();
  } catch (const UnimplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("legacy V1"), std::string::npos) << e.what();
  }
}

// Every single-shard real bundle whose index TF wrote uncompressed and whose
// data is present: the same tensors added in TF's order (data offset order)
// give byte-identical .index and .data files.
TEST(RealdataTest, RewritingRealBundlesIsByteIdentical) {
  EAGER_SKIP_WITHOUT_REALDATA();
  // Written with Snappy-compressed blocks by some TF build (INDEX.md); our
  // writer, like TF's BundleWriter, never compresses.
  const std::vector<std::string> compressed = {"savedmodel_tf1_half_plus_two",
                                               "savedmodel_tf2_half_plus_two"};
  const std::string tmp = TempDir();
  int compared = 0;
  for (const ListedBundle& listed : ListedBundles()) {
    SCOPED_TRACE(listed.prefix);
    if (std::any_of(compressed.begin(), compressed.end(), [&](const std::string& c) {
          return listed.prefix.find("/" + c + "/") != std::string::npos;
        })) {
      continue;
    }
    BundleReader reader(listed.prefix);
    if (reader.num_shards() != 1 || !DataPresent(reader, 0)) continue;  // iris; SSD
    std::vector<std::string> keys = reader.Keys();
    std::sort(keys.begin(), keys.end(), [&](const std::string& a, const std::string& b) {
      return reader.GetEntry(a).offset < reader.GetEntry(b).offset;
    });
    const std::string prefix = tmp + "/copy" + std::to_string(compared);
    BundleWriter writer(prefix);
    for (const std::string& key : keys) writer.Add(key, reader.Read(key));
    writer.Finish();
    EXPECT_TRUE(ReadFile(IndexFilename(prefix)) == ReadFile(IndexFilename(listed.prefix)))
        << "index differs";
    EXPECT_TRUE(ReadFile(DataFilename(prefix, 0, 1)) == ReadFile(DataFilename(listed.prefix, 0, 1)))
        << "data differs";
    ++compared;
  }
  EXPECT_GE(compared, 20);
}

}  // namespace
}  // namespace eager
