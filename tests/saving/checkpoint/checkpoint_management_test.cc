// TF's checkpoint_management module: CheckpointManager.restore_or_initialize
// (with init_fn and the checkpoint interval) and the free functions
// get_checkpoint_state, checkpoint_exists, get_checkpoint_mtimes,
// remove_checkpoint (tensorflow/python/checkpoint/checkpoint_management.py;
// the behaviour on empty and garbled state files checked against TF 2.21).

#include "saving/checkpoint/checkpoint_management.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "runtime/errors.h"
#include "saving/checkpoint/checkpoint_manager.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
using ::eager::testing::ListDir;
using ::eager::testing::TempDir;
using ::eager::testing::WriteFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// TF's CheckpointManager.restore_or_initialize sets _last_checkpoint_step
// from the step counter after restoring, so save() at that step returns None;
// the interval counts from it.
TEST(CheckpointManagementTest, RestoreOrInitializeRecordsTheRestoredStep) {
  const std::string dir = TempDir();
  {
    Variable step(Tensor(int64_t{0}), "step");
    Checkpoint checkpoint({{"step", &step}});
    CheckpointManager manager(checkpoint, dir, std::nullopt, std::nullopt, "ckpt", &step, 5);
    step.Assign(Tensor(int64_t{7}));
    ASSERT_EQ(manager.Save(), dir + "/ckpt-1");
  }
  Variable step(Tensor(int64_t{0}), "step");
  Checkpoint checkpoint({{"step", &step}});
  CheckpointManager manager(checkpoint, dir, std::nullopt, std::nullopt, "ckpt", &step, 5);
  EXPECT_EQ(manager.last_checkpoint_step(), std::nullopt);
  EXPECT_EQ(manager.RestoreOrInitialize(), dir + "/ckpt-1");
  EXPECT_EQ(step.value().scalar<int64_t>(), 7);
  EXPECT_EQ(manager.last_checkpoint_step(), 7);
  EXPECT_EQ(manager.Save(), std::nullopt);  // the restored step: nothing written
  EXPECT_EQ(manager.Save(std::nullopt, /*check_interval=*/false), std::nullopt);
  EXPECT_THAT(ListDir(dir),
              ElementsAre("checkpoint", "ckpt-1.data-00000-of-00001", "ckpt-1.index"));
  step.Assign(Tensor(int64_t{11}));
  EXPECT_EQ(manager.Save(), std::nullopt);  // 11 < 7 + 5
  step.Assign(Tensor(int64_t{12}));
  EXPECT_EQ(manager.Save(), dir + "/ckpt-2");
  EXPECT_EQ(manager.last_checkpoint_step(), 12);
}

// TF: __init__'s last_checkpoint_step is where the interval check starts.
TEST(CheckpointManagementTest, LastCheckpointStepStartsTheInterval) {
  const std::string dir = TempDir();
  Variable step(Tensor(int64_t{3}), "step");
  Checkpoint checkpoint({{"step", &step}});
  CheckpointManager manager(checkpoint, dir, std::nullopt, std::nullopt, "ckpt", &step, 2, nullptr,
                            /*last_checkpoint_step=*/3);
  EXPECT_EQ(manager.Save(), std::nullopt);
  step.Assign(Tensor(int64_t{5}));
  EXPECT_EQ(manager.Save(), dir + "/ckpt-1");
}

// TF: restore_or_initialize calls init_fn only when there is no checkpoint,
// and returns None then.
TEST(CheckpointManagementTest, InitFnRunsOnlyWithoutACheckpoint) {
  const std::string dir = TempDir();
  Variable v(Tensor(0.0f), "v");
  int calls = 0;
  {
    Checkpoint checkpoint({{"v", &v}});
    CheckpointManager manager(checkpoint, dir, 3, std::nullopt, "ckpt", nullptr, std::nullopt, [&] {
      ++calls;
      v.Assign(Tensor(2.5f));  // e.g. pretrained weights
    });
    EXPECT_EQ(manager.RestoreOrInitialize(), std::nullopt);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(v.value().scalar<float>(), 2.5f);
    ASSERT_EQ(manager.Save(), dir + "/ckpt-1");
  }
  v.Assign(Tensor(0.0f));
  Checkpoint checkpoint({{"v", &v}});
  CheckpointManager manager(checkpoint, dir, 3, std::nullopt, "ckpt", nullptr, std::nullopt,
                            [&] { ++calls; });
  EXPECT_EQ(manager.RestoreOrInitialize(), dir + "/ckpt-1");
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(v.value().scalar<float>(), 2.5f);
}

// tf.train.get_checkpoint_state: paths joined onto the directory.
TEST(CheckpointManagementTest, GetCheckpointStateJoinsPaths) {
  const std::string dir = TempDir();
  EXPECT_EQ(GetCheckpointState(dir), std::nullopt);  // no state file
  WriteFile(dir + "/checkpoint",
            "model_checkpoint_path: \"ckpt-2\"\n"
            "all_model_checkpoint_paths: \"ckpt-1\"\n"
            "all_model_checkpoint_paths: \"/elsewhere/ckpt-2\"\n"
            "all_model_checkpoint_timestamps: 1.5\n"
            "all_model_checkpoint_timestamps: 2.5\n"
            "last_preserved_timestamp: 0.5\n");
  const std::optional<CheckpointState> state = GetCheckpointState(dir);
  ASSERT_TRUE(state);
  EXPECT_EQ(state->model_checkpoint_path, dir + "/ckpt-2");
  EXPECT_THAT(state->all_model_checkpoint_paths, ElementsAre(dir + "/ckpt-1", "/elsewhere/ckpt-2"));
  EXPECT_THAT(state->all_model_checkpoint_timestamps, ElementsAre(1.5, 2.5));
  EXPECT_EQ(state->last_preserved_timestamp, 0.5);
  WriteFile(dir + "/other", "model_checkpoint_path: \"/abs/model\"\n");
  EXPECT_EQ(GetCheckpointState(dir, "other")->model_checkpoint_path, "/abs/model");
}

// TF 2.21: an empty state file, or one without model_checkpoint_path, raises
// ValueError("Invalid checkpoint state loaded from DIR"); a garbled one (an
// unterminated string) logs a warning and gives None.
TEST(CheckpointManagementTest, GetCheckpointStateFailsAsTf) {
  const std::string dir = TempDir();
  WriteFile(dir + "/checkpoint", "");
  try {
    GetCheckpointState(dir);
    FAIL() << "an empty state file must be rejected";
  } catch (const InvalidArgumentError& e) {
    EXPECT_EQ(std::string(e.what()), "Invalid checkpoint state loaded from " + dir);
  }
  WriteFile(dir + "/checkpoint", "all_model_checkpoint_paths: \"ckpt-1\"\n");
  EXPECT_THROW(GetCheckpointState(dir), InvalidArgumentError);
  WriteFile(dir + "/checkpoint", "model_checkpoint_path: \"ckpt-1\n");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(GetCheckpointState(dir), std::nullopt);
  const std::string warning = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(warning, HasSubstr(dir + "/checkpoint"));
  EXPECT_THAT(warning, HasSubstr("Checkpoint ignored"));
}

// checkpoint_exists, get_checkpoint_mtimes and remove_checkpoint on V2 and
// V1 prefixes (TF: V2's PREFIX.index first, then the V1 file PREFIX).
TEST(CheckpointManagementTest, ExistsMtimesAndRemove) {
  const std::string dir = TempDir();
  Variable v(Tensor(1.0f), "v");
  Checkpoint checkpoint({{"v", &v}});
  const std::string first = checkpoint.Save(dir + "/ckpt");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::string second = checkpoint.Save(dir + "/ckpt", CheckpointOptions{.num_shards = 2});
  WriteFile(dir + "/ckpt-2.meta", "meta");
  WriteFile(dir + "/v1.ckpt", "a V1 file");
  WriteFile(dir + "/v1.ckpt.meta", "meta");
  WriteFile(dir + "/ckpt-20.index", "another checkpoint");
  EXPECT_TRUE(CheckpointExists(first));
  EXPECT_TRUE(CheckpointExists(dir + "/v1.ckpt"));
  EXPECT_FALSE(CheckpointExists(dir + "/ckpt-3"));

  const std::vector<double> mtimes =
      GetCheckpointMtimes({first, dir + "/missing", second, dir + "/v1.ckpt"});
  ASSERT_EQ(mtimes.size(), 3u);  // the missing one skipped, as TF
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_LT(mtimes[0], mtimes[1]);
  EXPECT_NEAR(mtimes[2], now, 60.0);
  EXPECT_LE(mtimes[2], now + 1.0);

  RemoveCheckpoint(second);
  EXPECT_FALSE(CheckpointExists(second));
  RemoveCheckpoint(dir + "/v1.ckpt", CheckpointFormat::kV1);
  RemoveCheckpoint(dir + "/never-written");  // nothing there: fine
  EXPECT_THAT(ListDir(dir), ElementsAre("checkpoint", "ckpt-1.data-00000-of-00001", "ckpt-1.index",
                                        "ckpt-20.index"));
}

}  // namespace
}  // namespace eager
