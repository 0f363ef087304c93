#include "saving/tools/checkpoint_tools.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>

#include "autodiff/dense.h"
#include "saving/bundle/bundle_files.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/checkpoint/checkpoint.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::RealdataDir;
using ::eager::testing::TempDir;
using Kind = TensorDifference::Kind;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

const TensorDifference& Find(const std::vector<TensorDifference>& diff, const std::string& key) {
  for (const TensorDifference& d : diff) {
    if (d.key == key) return d;
  }
  throw NotFoundError(key);
}

TEST(CheckpointStateToolTest, ReportsPresentMissingAndIncompleteCheckpoints) {
  const std::string dir = TempDir();
  for (const char* name : {"ckpt-1", "ckpt-2"}) {
    BundleWriter writer(dir + "/" + name);
    writer.Add("x", Tensor(1.0f));
    writer.Finish();
  }
  std::filesystem::remove(DataFilename(dir + "/ckpt-2", 0, 1));
  CheckpointState state;
  state.model_checkpoint_path = "ckpt-3";
  state.all_model_checkpoint_paths = {"ckpt-1", "ckpt-2"};
  state.all_model_checkpoint_timestamps = {100.5, 200.25};
  WriteCheckpointState(dir, state);

  const CheckpointStateReport report = DescribeCheckpointState(dir);
  ASSERT_EQ(report.checkpoints.size(), 3u);  // the latest is listed though not in all_...
  EXPECT_EQ(report.model_checkpoint_path, "ckpt-3");
  EXPECT_EQ(report.checkpoints[0].status, "ok");
  EXPECT_EQ(report.checkpoints[0].shards, 1);
  EXPECT_EQ(report.checkpoints[0].prefix, dir + "/ckpt-1");
  EXPECT_EQ(report.checkpoints[0].timestamp, 100.5);
  EXPECT_FALSE(report.checkpoints[0].latest);
  EXPECT_EQ(report.checkpoints[1].status, "incomplete");
  EXPECT_EQ(report.checkpoints[1].missing_shards, 1);
  EXPECT_NE(report.checkpoints[1].detail.find("ckpt-2.data-00000-of-00001"), std::string::npos);
  EXPECT_EQ(report.checkpoints[2].status, "missing");
  EXPECT_TRUE(report.checkpoints[2].latest);
  EXPECT_FALSE(report.checkpoints[2].timestamp.has_value());

  std::ostringstream text, json;
  PrintCheckpointState(report, false, text);
  PrintCheckpointState(report, true, json);
  EXPECT_NE(text.str().find("  ckpt-1  ok  1 shard  timestamp 100.5\n"), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("* ckpt-3  missing"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("1 present, 2 missing or damaged"), std::string::npos) << text.str();
  EXPECT_NE(json.str().find("\"stored\":\"ckpt-2\",\"prefix\":\"" + dir +
                            "/ckpt-2\",\"latest\":false,\"timestamp\":200.25,\"status\":"
                            "\"incomplete\",\"shards\":1,\"missing_shards\":1"),
            std::string::npos)
      << json.str();
}

TEST(CheckpointStateToolTest, NoStateFileIsNotFound) {
  const std::string dir = TempDir();
  try {
    DescribeCheckpointState(dir);
    FAIL() << "expected NotFoundError";
  } catch (const NotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/checkpoint"), std::string::npos) << e.what();
  }
}

TEST(CheckpointDiffTest, AddedRemovedChangedAndSame) {
  const std::string dir = TempDir();
  {
    BundleWriter a(dir + "/a");
    a.Add("same", Tensor::Vector<float>({1, 2, 3}));
    a.Add("values", Tensor::Vector<float>({1, 2, 3, kNaN}));
    a.Add("nan_vs_number", Tensor::Vector<double>({kNaN, 1}));
    a.Add("dtype", Tensor::Vector<float>({1}));
    a.Add("shape", Tensor::Vector<float>({1, 2}));
    a.Add("zero", Tensor(0.0f));
    a.Add("text", Tensor::Vector<std::string>({"a", "b"}));
    a.Add("step", Tensor(int64_t{5}));
    a.Add("gone", Tensor(1.0f));
    a.Finish();
    BundleWriter b(dir + "/b");
    b.Add("same", Tensor::Vector<float>({1, 2, 3}));
    b.Add("values", Tensor::Vector<float>({1, 2.5f, 2.75f, kNaN}));  // NaN == NaN here
    b.Add("nan_vs_number", Tensor::Vector<double>({1, 1}));
    b.Add("dtype", Tensor::Vector<double>({1}));
    b.Add("shape", Tensor::Matrix<float>({{1, 2}}));
    b.Add("zero", Tensor(-0.0f));  // other bytes, equal value
    b.Add("text", Tensor::Vector<std::string>({"a", "c"}));
    b.Add("step", Tensor(int64_t{-7}));
    b.Add("new", Tensor(1.0f));
    b.Finish();
  }
  const BundleReader a(dir + "/a"), b(dir + "/b");
  const std::vector<TensorDifference> diff = DiffCheckpoints(a, b);
  ASSERT_EQ(diff.size(), 10u);
  EXPECT_EQ(diff.front().key, "dtype");  // key order
  EXPECT_EQ(Find(diff, "same").kind, Kind::kSame);
  const TensorDifference& values = Find(diff, "values");
  EXPECT_EQ(values.kind, Kind::kChanged);
  EXPECT_EQ(values.elements_differing, 2);
  EXPECT_EQ(values.max_abs_diff, 0.5);
  EXPECT_EQ(values.a_type, "float32[4]");
  EXPECT_EQ(Find(diff, "nan_vs_number").max_abs_diff, std::numeric_limits<double>::infinity());
  EXPECT_EQ(Find(diff, "dtype").detail, "dtype");
  EXPECT_EQ(Find(diff, "dtype").b_type, "float64[1]");
  EXPECT_EQ(Find(diff, "shape").detail, "shape");
  EXPECT_EQ(Find(diff, "zero").kind, Kind::kSame);
  EXPECT_EQ(Find(diff, "text").kind, Kind::kChanged);
  EXPECT_EQ(Find(diff, "text").elements_differing, 1);
  EXPECT_EQ(Find(diff, "step").max_abs_diff, 12.0);
  EXPECT_EQ(Find(diff, "gone").kind, Kind::kRemoved);
  EXPECT_EQ(Find(diff, "new").kind, Kind::kAdded);
  EXPECT_TRUE(HasDifferences(diff));
  EXPECT_FALSE(HasDifferences(DiffCheckpoints(a, a)));

  std::ostringstream text;
  PrintCheckpointDiff(a, b, diff, false, text);
  EXPECT_NE(text.str().find("~ values  float32[4]  max_abs_diff 0.5  2 elements differ\n"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("~ dtype  float32[1] -> float64[1]  (dtype)\n"), std::string::npos);
  EXPECT_NE(text.str().find("- gone  float32[]\n"), std::string::npos);
  EXPECT_NE(text.str().find("+ new  float32[]\n"), std::string::npos);
  EXPECT_NE(text.str().find("1 added, 1 removed, 6 changed, 2 same\n"), std::string::npos);
  std::ostringstream json;
  PrintCheckpointDiff(a, b, diff, true, json);
  EXPECT_NE(json.str().find("{\"key\":\"nan_vs_number\",\"status\":\"changed\",\"a\":\"float64["
                            "2]\",\"b\":\"float64[2]\",\"max_abs_diff\":null,"
                            "\"max_abs_diff_text\":\"inf\""),
            std::string::npos)
      << json.str();
}

TEST(TensorStatisticsTest, MinMaxMeanOfFiniteValuesAndNonFiniteCounts) {
  const std::string prefix = TempDir() + "/model.ckpt";
  {
    BundleWriter writer(prefix);
    writer.Add("f", Tensor::Vector<float>({1, kNaN, -kInf, 3, kInf, -1}));
    writer.Add("i", Tensor::Vector<int64_t>({-4, 10}));
    writer.Add("all_nan", Tensor::Vector<double>({kNaN}));
    writer.Add("empty", Tensor::Zeros(Shape{0, 3}));
    writer.Add("s", Tensor(std::string("x")));
    writer.Finish();
  }
  const BundleReader reader(prefix);
  const std::vector<TensorStatistics> stats = ComputeTensorStatistics(reader);
  ASSERT_EQ(stats.size(), 5u);
  const TensorStatistics& f = stats[2];
  ASSERT_EQ(f.key, "f");
  EXPECT_TRUE(f.numeric);
  EXPECT_EQ(f.min, -1.0);
  EXPECT_EQ(f.max, 3.0);
  EXPECT_EQ(f.mean, 1.0);
  EXPECT_EQ(f.nan_count, 1);
  EXPECT_EQ(f.inf_count, 2);
  EXPECT_EQ(f.elements, 6);
  EXPECT_EQ(stats[3].key, "i");
  EXPECT_EQ(stats[3].mean, 3.0);
  EXPECT_EQ(stats[0].key, "all_nan");
  EXPECT_FALSE(stats[0].min.has_value());
  EXPECT_EQ(stats[0].nan_count, 1);
  EXPECT_EQ(stats[1].key, "empty");
  EXPECT_FALSE(stats[1].mean.has_value());
  EXPECT_EQ(stats[4].key, "s");
  EXPECT_FALSE(stats[4].numeric);
  EXPECT_TRUE(stats[4].unreadable.empty());

  std::ostringstream text, json;
  PrintTensorStatistics(reader, stats, false, text);
  PrintTensorStatistics(reader, stats, true, json);
  EXPECT_NE(text.str().find("\nf  float32  [6]  -1  3  1  1  2\n"), std::string::npos)
      << text.str();
  EXPECT_NE(json.str().find("{\"key\":\"all_nan\",\"dtype\":\"float64\",\"shape\":[1],"
                            "\"elements\":1,\"min\":null,\"max\":null,\"mean\":null,\"nan\":1,"
                            "\"inf\":0,\"unreadable\":null}"),
            std::string::npos)
      << json.str();
}

TEST(TensorStatisticsTest, MissingDataFileIsReportedNotThrown) {
  const std::string prefix = TempDir() + "/model.ckpt";
  {
    BundleWriter writer(prefix);
    writer.Add("x", Tensor(2.0f));
    writer.Finish();
  }
  std::filesystem::remove(DataFilename(prefix, 0, 1));
  const BundleReader reader(prefix);
  const std::vector<TensorStatistics> stats = ComputeTensorStatistics(reader);
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_NE(stats[0].unreadable.find("data-00000-of-00001 is missing"), std::string::npos)
      << stats[0].unreadable;
}

TEST(ObjectGraphToolTest, TheGraphOfWhatCheckpointWrites) {
  Dense dense(2);
  dense(Tensor::Matrix<float>({{1, 2, 3}}));  // builds kernel [3,2] and bias [2]
  Checkpoint checkpoint({{"model", &dense}});
  const BundleReader reader(checkpoint.Write(TempDir() + "/ckpt"));
  const std::vector<ObjectGraphNode> nodes = DescribeObjectGraph(reader);
  ASSERT_GE(nodes.size(), 4u);
  EXPECT_EQ(ObjectGraphPath(nodes, 0), "(root)");
  const ObjectGraphNode* kernel = nullptr;
  for (const ObjectGraphNode& n : nodes) {
    if (ObjectGraphPath(nodes, n.id) == "(root).model.kernel") kernel = &n;
  }
  ASSERT_NE(kernel, nullptr);
  ASSERT_EQ(kernel->attributes.size(), 1u);
  EXPECT_EQ(kernel->attributes[0].checkpoint_key, "model/kernel/.ATTRIBUTES/VARIABLE_VALUE");
  EXPECT_EQ(kernel->attributes[0].type, "float32[3,2]");
  std::ostringstream text;
  PrintObjectGraph(reader, nodes, false, text);
  EXPECT_NE(text.str().find("  model  #"), std::string::npos) << text.str();
  EXPECT_NE(
      text.str().find(".VARIABLE_VALUE = model/kernel/.ATTRIBUTES/VARIABLE_VALUE  float32[3,2]"),
      std::string::npos)
      << text.str();
}

TEST(ObjectGraphToolTest, NameBasedCheckpointHasNoGraph) {
  const std::string prefix = TempDir() + "/model.ckpt";
  BundleWriter writer(prefix);
  writer.Add("v", Tensor(1.0f));
  writer.Finish();
  EXPECT_THROW(DescribeObjectGraph(BundleReader(prefix)), NotFoundError);
}

// Against realdata: every value compared with what BundleReader reads.
TEST(CheckpointToolsRealdataTest, StatsAgreeWithTheTensorsOfEveryBundle) {
  EAGER_SKIP_WITHOUT_REALDATA();
  int bundles = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(RealdataDir())) {
    if (e.path().extension() != ".index") continue;
    const std::string prefix = e.path().string().substr(0, e.path().string().size() - 6);
    const BundleReader reader(prefix);
    ++bundles;
    for (const TensorStatistics& s : ComputeTensorStatistics(reader)) {
      if (!s.unreadable.empty() || !s.numeric) continue;
      const Tensor t = reader.Read(s.key);
      double lo = INFINITY, hi = -INFINITY;
      VisitDType(t.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (requires(const T& v) { static_cast<double>(v); }) {  // real numbers
          for (const T& v : t.data<T>()) {
            const auto d = static_cast<double>(v);
            if (std::isfinite(d)) lo = std::min(lo, d), hi = std::max(hi, d);
          }
        }
      });
      if (s.min) {
        EXPECT_EQ(*s.min, lo) << prefix << " " << s.key;
        EXPECT_EQ(*s.max, hi) << prefix << " " << s.key;
        EXPECT_GE(*s.mean, lo) << prefix << " " << s.key;
        EXPECT_LE(*s.mean, hi) << prefix << " " << s.key;
      }
    }
    EXPECT_FALSE(HasDifferences(DiffCheckpoints(reader, reader))) << prefix;
  }
  EXPECT_GE(bundles, 25);
}

TEST(CheckpointToolsRealdataTest, CheckpointManagerStepsDiffer) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string dir = RealdataDir() + "/tf2_checkpoint_manager_tictactoe/tf_ckpts";
  const BundleReader a(dir + "/ckpt-17"), b(dir + "/ckpt-19");
  const std::vector<TensorDifference> diff = DiffCheckpoints(a, b);
  const TensorDifference& counter = Find(diff, "save_counter/.ATTRIBUTES/VARIABLE_VALUE");
  EXPECT_EQ(counter.kind, Kind::kChanged);
  EXPECT_EQ(*counter.max_abs_diff, static_cast<double>(b.Read(counter.key).scalar<int64_t>() -
                                                       a.Read(counter.key).scalar<int64_t>()));
  const CheckpointStateReport state = DescribeCheckpointState(dir);
  ASSERT_EQ(state.checkpoints.size(), 3u);
  EXPECT_EQ(state.checkpoints[2].stored, "ckpt-19");
  EXPECT_TRUE(state.checkpoints[2].latest);
  EXPECT_EQ(state.checkpoints[2].timestamp, 1673736140.596798);
  EXPECT_EQ(state.last_preserved_timestamp, 1673735591.495455);
}

}  // namespace
}  // namespace eager
