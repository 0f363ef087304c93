// CheckpointOptions{.distributed = true} inside one mpirun job: the layout
// every rank writes, a failure on one rank failing the save on all of them
// with the same error, and the restore. Kills and separate runs on other
// rank counts: distributed_checkpoint_test.sh.

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "autodiff/adam.h"
#include "distributed/distributed_optimizer.h"
#include "distributed/world.h"
#include "runtime/errors.h"
#include "saving/bundle/bundle_files.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/bundle/posix_file.h"
#include "saving/checkpoint/checkpoint.h"
#include "tests/distributed/data_parallel_model.h"

namespace eager::distributed {
namespace {

namespace fs = std::filesystem;
using ::eager::testing::GlobalBatch;
using ::eager::testing::MeanLoss;
using ::eager::testing::ParameterBytes;
using ::eager::testing::Share;
using ::eager::testing::SmallMlp;

const World& TheWorld() { return *World::Current(); }

// A fresh directory every rank sees, named for the test and the rank count.
std::string SharedDir(const std::string& name) {
  const char* base = std::getenv("EAGER_TEST_TMPDIR");
  std::string dir = StrCat(base != nullptr ? base : "/tmp", "/", name, "_np", TheWorld().size());
  if (TheWorld().is_root()) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  TheWorld().Barrier();
  return dir;
}

std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

// A model and Adam after two data-parallel steps.
struct Trained {
  Trained() : optimizer(adam) {
    for (int step = 0; step < 2; ++step) {
      GradientTape tape;
      const Tensor loss =
          MeanLoss(model, Share(GlobalBatch(step), TheWorld().rank(), TheWorld().size()));
      const std::vector<Variable*> vars = model.TrainableVariables();
      optimizer.ApplyGradients(tape.Gradient(loss, vars), vars);
    }
  }
  SmallMlp model;
  Adam adam{0.01};
  DistributedOptimizer optimizer;
};

TEST(DistributedCheckpointTest, EveryRankWritesOneDataFileOfOneBundle) {
  const World& world = TheWorld();
  const std::string dir = SharedDir("layout");
  Trained trained;
  Checkpoint checkpoint({{"model", &trained.model}, {"optimizer", &trained.adam}});
  const std::string path = checkpoint.Save(dir + "/ckpt", {.distributed = true});
  EXPECT_EQ(path, dir + "/ckpt-1");
  const int n = world.size();
  std::vector<std::string> expected = {"checkpoint", "ckpt-1.index"};
  for (int r = 0; r < n; ++r) expected.push_back(DataFilename("ckpt-1", r, n));
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(Files(dir), expected);
  for (int r = 0; r < n; ++r) {
    EXPECT_GT(fs::file_size(DataFilename(path, r, n)), 0u) << "rank " << r << "'s share is empty";
  }
  const BundleReader reader(path);
  EXPECT_EQ(reader.num_shards(), n);

  // Every rank restores it with the ordinary Checkpoint::Restore.
  SmallMlp restored;
  Adam restored_adam(0.01);
  Checkpoint({{"model", &restored}, {"optimizer", &restored_adam}})
      .Restore(path)
      .AssertExistingObjectsMatched();
  restored(GlobalBatch(0).x);  // built: takes the saved values
  EXPECT_TRUE(ParameterBytes(restored) == ParameterBytes(trained.model));
  world.Barrier();
}

int FailOnCreate(std::string_view step, const std::string& path) {
  return step == "create" && path.find(".data-") != std::string::npos ? ENOSPC : 0;
}

TEST(DistributedCheckpointTest, AFailureOnOneRankFailsTheSaveOnEveryRankAlike) {
  const World& world = TheWorld();
  const std::string dir = SharedDir("failure");
  Trained trained;
  Checkpoint checkpoint({{"model", &trained.model}});
  checkpoint.Save(dir + "/ckpt", {.distributed = true});
  const std::vector<std::string> before = Files(dir);
  // The last rank cannot create its data file (disk full).
  if (world.rank() == world.size() - 1) internal::SetFileStepHook(FailOnCreate);
  std::string message;
  try {
    checkpoint.Save(dir + "/ckpt", {.distributed = true});
    ADD_FAILURE() << "no error";
  } catch (const ResourceExhaustedError& e) {
    message = e.what();
  }
  internal::SetFileStepHook(nullptr);
  if (world.size() > 1) {  // one process saves as always: its own error as it is
    EXPECT_NE(message.find(StrCat("Distributed save of ", dir, "/ckpt-2 failed on rank ",
                                  world.size() - 1, ": ")),
              std::string::npos)
        << message;
  }
  EXPECT_NE(message.find("ckpt-2.data-"), std::string::npos) << message;
  for (const std::string& theirs : world.AllGather(message)) EXPECT_EQ(theirs, message);
  world.Barrier();
  EXPECT_EQ(Files(dir), before) << "the failed save left files, or took the old ones";
  EXPECT_EQ(*LatestCheckpoint(dir), dir + "/ckpt-1");
  world.Barrier();
}

TEST(DistributedCheckpointTest, AsyncOrShardedDistributedSavesAreRefused) {
  SmallMlp model;
  Checkpoint checkpoint({{"model", &model}});
  const std::string dir = SharedDir("refused");
  EXPECT_THROW(checkpoint.Write(dir + "/a", {.async = true, .distributed = true}),
               InvalidArgumentError);
  EXPECT_THROW(checkpoint.Write(dir + "/a", {.num_shards = 2, .distributed = true}),
               InvalidArgumentError);
  TheWorld().Barrier();
}

}  // namespace
}  // namespace eager::distributed
