#include "saving/bundle/checkpoint_state.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "saving/bundle/bundle_writer.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
using ::eager::testing::ListDir;
using ::eager::testing::ReadFile;
using ::eager::testing::RealdataDir;
using ::eager::testing::TempDir;
using ::eager::testing::WriteFile;

void WriteBundle(const std::string& prefix) {
  BundleWriter writer(prefix);
  writer.Add("v", Tensor(1.0f));
  writer.Finish();
}

// Every real `checkpoint` file parses, and printing it back gives TF's bytes.
TEST(CheckpointStateTest, RealStateFilesRoundTripByteForByte) {
  EAGER_SKIP_WITHOUT_REALDATA();
  int files = 0;
  for (const auto& item : fs::recursive_directory_iterator(RealdataDir())) {
    if (item.path().filename() != "checkpoint") continue;
    SCOPED_TRACE(item.path().string());
    const std::string text = ReadFile(item.path().string());
    const CheckpointState state = ParseCheckpointStateText(text, item.path().string());
    EXPECT_FALSE(state.model_checkpoint_path.empty());
    EXPECT_EQ(CheckpointStateToText(state), text);
    ++files;
  }
  EXPECT_GE(files, 10);
}

TEST(CheckpointStateTest, ParsesCheckpointManagerTimestamps) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string dir = RealdataDir() + "/tf2_checkpoint_manager_tictactoe/tf_ckpts";
  const std::optional<CheckpointState> state = ReadCheckpointState(dir);
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->model_checkpoint_path, "ckpt-19");
  EXPECT_EQ(state->all_model_checkpoint_paths,
            (std::vector<std::string>{"ckpt-17", "ckpt-18", "ckpt-19"}));
  EXPECT_EQ(state->all_model_checkpoint_timestamps,
            (std::vector<double>{1673735799.685766, 1673735913.342593, 1673736140.596798}));
  EXPECT_EQ(state->last_preserved_timestamp, 1673735591.495455);
  EXPECT_EQ(LatestCheckpoint(dir), dir + "/ckpt-19");
}

TEST(CheckpointStateTest, LatestCheckpointOfRealDirectories) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string root = RealdataDir();
  EXPECT_EQ(LatestCheckpoint(root + "/tf1_saver_lenet_adam"), root + "/tf1_saver_lenet_adam/lenet");
  // Absolute paths from the machine that wrote it: those files are not here.
  EXPECT_EQ(LatestCheckpoint(root + "/tf1_saver_mnist_mlp_ema"), std::nullopt);
  // Names model.ckpt-400, which was never committed.
  EXPECT_EQ(LatestCheckpoint(root + "/tf1_estimator_linear_ftrl_tf27"), std::nullopt);
  EXPECT_EQ(LatestCheckpoint(root + "/tf1_golden_reference_data"), std::nullopt);  // no file
}

TEST(CheckpointStateTest, WriteThenLatestWithRelativeAndAbsolutePaths) {
  const std::string dir = TempDir();
  EXPECT_EQ(LatestCheckpoint(dir), std::nullopt);
  WriteBundle(dir + "/ckpt-1");
  WriteBundle(dir + "/ckpt-2");
  CheckpointState state{.model_checkpoint_path = "ckpt-2",
                        .all_model_checkpoint_paths = {"ckpt-1", "ckpt-2"},
                        .all_model_checkpoint_timestamps = {1.5, 1700000000.25},
                        .last_preserved_timestamp = 1.0};
  WriteCheckpointState(dir, state);
  EXPECT_EQ(ListDir(dir),
            (std::vector<std::string>{"checkpoint", "ckpt-1.data-00000-of-00001", "ckpt-1.index",
                                      "ckpt-2.data-00000-of-00001", "ckpt-2.index"}));
  EXPECT_EQ(ReadFile(dir + "/checkpoint"),
            "model_checkpoint_path: \"ckpt-2\"\n"
            "all_model_checkpoint_paths: \"ckpt-1\"\n"
            "all_model_checkpoint_paths: \"ckpt-2\"\n"
            "all_model_checkpoint_timestamps: 1.5\n"
            "all_model_checkpoint_timestamps: 1700000000.25\n"
            "last_preserved_timestamp: 1.0\n");
  EXPECT_EQ(ReadCheckpointState(dir), state);
  EXPECT_EQ(LatestCheckpoint(dir), dir + "/ckpt-2");

  // Absolute paths are kept as they are.
  const std::string other = TempDir() + "_other";
  fs::create_directories(other);
  WriteBundle(other + "/elsewhere");
  WriteCheckpointState(dir, {.model_checkpoint_path = other + "/elsewhere"});
  EXPECT_EQ(LatestCheckpoint(dir), other + "/elsewhere");
  fs::remove(other + "/elsewhere.index");
  EXPECT_EQ(LatestCheckpoint(dir), std::nullopt);
  fs::remove_all(other);
}

// The independent parser reads our state file and resolves the same latest
// checkpoint (with a non-ASCII, quote-bearing name to exercise escaping).
TEST(CheckpointStateTest, IndependentParserAgreesOnWhatWeWrite) {
  EAGER_SKIP_WITHOUT_TFCKPT();
  const std::string dir = TempDir();
  const std::string name = "ck\"pt\xc3\xa9-1";
  WriteBundle(dir + "/" + name);
  WriteCheckpointState(dir, {.model_checkpoint_path = name,
                             .all_model_checkpoint_paths = {name},
                             .all_model_checkpoint_timestamps = {1673735799.685766},
                             .last_preserved_timestamp = 1673735591.495455});
  std::string output;
  EXPECT_EQ(::eager::testing::RunTfckpt("state '" + dir + "'", dir + ".log", &output), 0) << output;
  EXPECT_NE(output.find("(tf.train.latest_checkpoint semantics): " + *LatestCheckpoint(dir)),
            std::string::npos)
      << output;
}

TEST(CheckpointStateTest, EscapesLikeTensorFlowsTextFormat) {
  const CheckpointState state{.model_checkpoint_path =
                                  std::string("a\"b\\c'd\n\te\x01\xc3\xa9", 13)};
  const std::string text = CheckpointStateToText(state);
  EXPECT_EQ(text, "model_checkpoint_path: \"a\\\"b\\\\c\\'d\\n\\te\\001\\303\\251\"\n");
  EXPECT_EQ(ParseCheckpointStateText(text), state);
}

TEST(CheckpointStateTest, ParsesOtherTextFormatSpellings) {
  const CheckpointState state = ParseCheckpointStateText(
      "# a comment\n"
      "all_model_checkpoint_paths: ['x', \"y\" \"z\"]\n"
      "model_checkpoint_path:\"\\x41\\102\"  all_model_checkpoint_timestamps: [1e3, -2]\n");
  EXPECT_EQ(state.model_checkpoint_path, "AB");
  EXPECT_EQ(state.all_model_checkpoint_paths, (std::vector<std::string>{"x", "yz"}));
  EXPECT_EQ(state.all_model_checkpoint_timestamps, (std::vector<double>{1000, -2}));
}

TEST(CheckpointStateTest, MalformedFilesAreDataLossNamingTheLine) {
  for (const char* bad :
       {"model_checkpoint_path \"x\"\n", "model_checkpoint_path: x\n", "\nunknown_field: 3\n",
        "model_checkpoint_path: \"unterminated\n", "all_model_checkpoint_timestamps: abc\n"}) {
    SCOPED_TRACE(bad);
    try {
      ParseCheckpointStateText(bad, "/some/dir/checkpoint");
      ADD_FAILURE() << "accepted";
    } catch (const DataLossError& e) {
      EXPECT_NE(std::string(e.what()).find("/some/dir/checkpoint at line"), std::string::npos)
          << e.what();
    }
  }
  const std::string dir = TempDir();
  WriteFile(dir + "/checkpoint", "all_model_checkpoint_paths: \"a\"\n");
  EXPECT_THROW(LatestCheckpoint(dir), DataLossError);  // empty model_checkpoint_path
}

TEST(CheckpointStateTest, WriteReplacesAtomicallyAndLeavesNoTempFiles) {
  const std::string dir = TempDir();
  WriteCheckpointState(dir, {.model_checkpoint_path = "a"});
  WriteCheckpointState(dir, {.model_checkpoint_path = "b"});
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{"checkpoint"});
  EXPECT_EQ(ReadCheckpointState(dir)->model_checkpoint_path, "b");
  // A failed write (the directory is gone) throws and creates nothing.
  EXPECT_THROW(WriteCheckpointState(dir + "/missing", {.model_checkpoint_path = "c"}),
               NotFoundError);
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{"checkpoint"});
}

}  // namespace
}  // namespace eager
