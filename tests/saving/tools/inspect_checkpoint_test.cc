#include "saving/tools/inspect_checkpoint.h"

#include <gtest/gtest.h>

#include <sstream>

#include "saving/bundle/bundle_files.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/bundle/checkpoint_state.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::ReadFile;
using ::eager::testing::RealdataDir;
using ::eager::testing::TempDir;
using ::eager::testing::WriteFile;

std::string WriteSample(const std::string& dir) {
  std::string prefix = dir + "/model.ckpt";
  BundleWriter writer(prefix);
  writer.Add("w", Tensor::Matrix<float>({{1, 2, 3}, {4, 5, 6}}));
  writer.Add("step", Tensor(int64_t{7}));
  writer.Add("name", Tensor(std::string("eager")));
  writer.Finish();
  return prefix;
}

TEST(InspectCheckpointTest, ListsEveryTensorInKeyOrderWithDTypeShapeAndSize) {
  const BundleReader reader(WriteSample(TempDir()));
  std::ostringstream out;
  ListCheckpoint(reader, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("3 tensors in 1 shard\n"), std::string::npos) << text;
  const size_t name = text.find("name  string  []");
  const size_t step = text.find("step  int64  []  8 bytes");
  const size_t w = text.find("w  float32  [2,3]  24 bytes");
  ASSERT_NE(name, std::string::npos) << text;
  ASSERT_NE(step, std::string::npos) << text;
  ASSERT_NE(w, std::string::npos) << text;
  EXPECT_LT(name, step);
  EXPECT_LT(step, w);
}

TEST(InspectCheckpointTest, DumpPrintsValuesUpToTheLimit) {
  const BundleReader reader(WriteSample(TempDir()));
  std::ostringstream all, limited;
  DumpTensor(reader, "w", 0, all);
  DumpTensor(reader, "w", 2, limited);
  EXPECT_EQ(all.str(),
            "w: tf.Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], shape=(2, 3), "
            "dtype=float32)\n");
  EXPECT_NE(limited.str().find("..."), std::string::npos) << limited.str();
  std::ostringstream ignored;
  EXPECT_THROW(DumpTensor(reader, "missing", 0, ignored), NotFoundError);
}

TEST(InspectCheckpointTest, VerifyReadsEveryTensorAndCatchesCorruption) {
  const std::string prefix = WriteSample(TempDir());
  {
    const BundleReader reader(prefix);
    const VerifyResult result = VerifyCheckpoint(reader);
    EXPECT_EQ(result.tensors, 3);
    EXPECT_EQ(result.bytes, reader.GetEntry("w").size + reader.GetEntry("step").size +
                                reader.GetEntry("name").size);
    EXPECT_TRUE(result.unchecked.empty());
  }
  // Flip one byte of w's data: the checksum must catch it.
  const std::string data_path = DataFilename(prefix, 0, 1);
  std::string data = ReadFile(data_path);
  const BundleReader before(prefix);
  data[static_cast<size_t>(before.GetEntry("w").offset) + 5] ^= 0x40;
  WriteFile(data_path, data);
  const BundleReader reader(prefix);
  try {
    VerifyCheckpoint(reader);
    FAIL() << "corruption not detected";
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string(e.what()).find('w'), std::string::npos) << e.what();
  }
}

TEST(InspectCheckpointTest, ResolvesADirectoryToItsLatestCheckpoint) {
  const std::string dir = TempDir();
  const std::string prefix = WriteSample(dir);
  EXPECT_EQ(ResolveCheckpointPath(prefix), prefix);
  EXPECT_THROW(ResolveCheckpointPath(dir), NotFoundError);  // no state file yet
  CheckpointState state;
  state.model_checkpoint_path = "model.ckpt";
  state.all_model_checkpoint_paths = {"model.ckpt"};
  WriteCheckpointState(dir, state);
  EXPECT_EQ(ResolveCheckpointPath(dir), prefix);
  try {
    ResolveCheckpointPath(dir + "/nope");
    FAIL();
  } catch (const NotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find("nope.index"), std::string::npos) << e.what();
  }
}

TEST(InspectCheckpointTest, VerifiesARealTwoShardTensorFlowCheckpoint) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const BundleReader reader(ResolveCheckpointPath(RealdataDir() + "/tf2_keras_sharded2_iris"));
  EXPECT_EQ(reader.num_shards(), 2);
  const VerifyResult result = VerifyCheckpoint(reader);
  EXPECT_EQ(result.tensors, 18);  // SOURCE.md lists 18 entries
  EXPECT_TRUE(result.unchecked.empty());
  std::ostringstream out;
  ListCheckpoint(reader, out);
  EXPECT_NE(out.str().find("_CHECKPOINTABLE_OBJECT_GRAPH  string  []"), std::string::npos)
      << out.str();
}

}  // namespace
}  // namespace eager
