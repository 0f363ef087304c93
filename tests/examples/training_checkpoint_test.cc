// The main job's checkpointing: an interrupted run resumed from its
// CheckpointManager directory ends with bit-identical parameters and the same
// accuracies as an uninterrupted one. Synthetic data keeps it fast; each run
// starts with fresh default names, as a new process would.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "examples/fashion_mnist/cnn.h"
#include "examples/fashion_mnist/dataset.h"
#include "examples/fashion_mnist/mlp.h"
#include "examples/fashion_mnist/training.h"
#include "ops/random_generator.h"
#include "runtime/names.h"

namespace fashion_mnist {
namespace {

namespace fs = std::filesystem;

std::string FreshDir(const std::string& name) {
  const char* base = std::getenv("EAGER_TEST_TMPDIR");
  const fs::path dir =
      fs::path(base != nullptr ? base : "/tmp") / "training_checkpoint_test" / name;
  fs::remove_all(dir);
  return dir.string();
}

Dataset Synthetic(int64_t n, uint64_t seed) {
  eager::RandomGenerator rng(seed);
  std::vector<uint8_t> images(static_cast<size_t>(n * kImageSize));
  std::vector<uint8_t> labels(static_cast<size_t>(n));
  for (auto& p : images) p = static_cast<uint8_t>(rng.NextBelow(256));
  for (auto& l : labels) l = static_cast<uint8_t>(rng.NextBelow(kNumClasses));
  return MakeDataset("synthetic", {n, 28, 28}, images, {n}, labels);
}

struct RunResult {
  TrainResult result;
  std::vector<std::vector<std::byte>> parameters;
};

template <typename Model = Mlp>
RunResult TrainOnce(const Dataset& train, const Dataset& test, const TrainOptions& options) {
  eager::ResetDefaultNames();  // a new process
  Model model(options.seed);
  std::ostringstream log;
  RunResult run;
  run.result = Train(model, train, test, options, log);
  for (const eager::Variable* v : model.Variables()) {
    const auto bytes = v->value().bytes();
    run.parameters.emplace_back(bytes.begin(), bytes.end());
  }
  return run;
}

TEST(TrainingCheckpointTest, ResumedRunEndsBitIdenticalToAnUninterruptedOne) {
  const Dataset train = Synthetic(640, 1);
  const Dataset test = Synthetic(200, 2);
  TrainOptions options;
  options.batch_size = 32;  // 20 steps per epoch
  options.epochs = 3;

  const RunResult full = TrainOnce(train, test, options);
  ASSERT_FALSE(full.result.interrupted);

  // Epoch 1 only, then stopped in the middle of epoch 2 (as Ctrl-C does),
  // then resumed to the end.
  options.checkpoint_dir = FreshDir("resumed");
  options.epochs = 1;
  const RunResult first = TrainOnce(train, test, options);
  EXPECT_EQ(first.result.last_checkpoint, options.checkpoint_dir + "/ckpt-1");
  options.epochs = 3;
  options.stop_after_steps = 27;
  const RunResult stopped = TrainOnce(train, test, options);
  EXPECT_TRUE(stopped.result.interrupted);
  EXPECT_EQ(stopped.result.resumed_from, options.checkpoint_dir + "/ckpt-1");
  EXPECT_EQ(stopped.result.steps, 27);
  options.stop_after_steps.reset();
  const RunResult resumed = TrainOnce(train, test, options);
  EXPECT_EQ(resumed.result.resumed_from, options.checkpoint_dir + "/ckpt-2");
  EXPECT_FALSE(resumed.result.interrupted);
  EXPECT_EQ(resumed.result.steps, full.result.steps);

  EXPECT_EQ(resumed.parameters, full.parameters);
  EXPECT_EQ(resumed.result.test_accuracy, full.result.test_accuracy);
  EXPECT_EQ(resumed.result.ema_test_accuracy, full.result.ema_test_accuracy);
  EXPECT_EQ(resumed.result.last_loss, full.result.last_loss);
  // Three kept (max_to_keep 3): ckpt-2 (stop), ckpt-3 (epoch 2), ckpt-4 (epoch 3).
  EXPECT_FALSE(fs::exists(options.checkpoint_dir + "/ckpt-1.index"));
  EXPECT_TRUE(fs::exists(options.checkpoint_dir + "/ckpt-4.index"));

  // A run resumed after its last epoch only evaluates.
  const RunResult again = TrainOnce(train, test, options);
  EXPECT_EQ(again.parameters, full.parameters);
  EXPECT_EQ(again.result.ema_test_accuracy, full.result.ema_test_accuracy);
}

// The same for the CNN (`--model cnn`), smaller: its variables (conv kernels
// and biases included) and Adam's and the EMA's slots for them are saved and
// restored on creation, and the resumed run ends with the same bits.
TEST(TrainingCheckpointTest, CnnResumesBitIdentically) {
  const Dataset train = Synthetic(96, 3);
  const Dataset test = Synthetic(40, 4);
  TrainOptions options;
  options.batch_size = 16;  // 6 steps per epoch
  options.epochs = 2;
  const RunResult full = TrainOnce<Cnn>(train, test, options);
  ASSERT_FALSE(full.result.interrupted);
  ASSERT_EQ(full.parameters.size(), 8u);  // 2 conv + 2 dense layers, kernel and bias each

  options.checkpoint_dir = FreshDir("cnn");
  options.stop_after_steps = 4;
  const RunResult stopped = TrainOnce<Cnn>(train, test, options);
  EXPECT_TRUE(stopped.result.interrupted);
  EXPECT_EQ(stopped.result.last_checkpoint, options.checkpoint_dir + "/ckpt-1");
  options.stop_after_steps.reset();
  const RunResult resumed = TrainOnce<Cnn>(train, test, options);
  EXPECT_EQ(resumed.result.resumed_from, options.checkpoint_dir + "/ckpt-1");
  EXPECT_EQ(resumed.result.steps, full.result.steps);
  EXPECT_EQ(resumed.parameters, full.parameters);
  EXPECT_EQ(resumed.result.ema_test_accuracy, full.result.ema_test_accuracy);
  EXPECT_EQ(resumed.result.last_loss, full.result.last_loss);
}

}  // namespace
}  // namespace fashion_mnist
