#include "saving/saver/saver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "runtime/errors.h"
#include "runtime/live_variables.h"
#include "runtime/names.h"
#include "runtime/variable.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/checkpoint_state.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::ListDir;
using testing::TempDir;

class SaverTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetDefaultNames(); }
  void TearDown() override { ResetDefaultNames(); }
};

std::string What(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(SaverTest, DefaultSaverSavesEveryLiveVariableByName) {
  const std::string dir = TempDir();
  Variable v1(Tensor::FromVector<float>({1.0f}, Shape{1}), "v1");
  Variable v2(Tensor::FromVector<float>({2.0f}, Shape{1}), "v2");
  Saver saver;
  ASSERT_EQ(saver.variables().size(), 2u);
  EXPECT_EQ(saver.variables().at("v1"), &v1);
  EXPECT_EQ(saver.variables().at("v2"), &v2);

  EXPECT_EQ(saver.Save(dir + "/model.ckpt"), dir + "/model.ckpt");
  EXPECT_EQ(ListDir(dir), (std::vector<std::string>{"checkpoint", "model.ckpt.data-00000-of-00001",
                                                    "model.ckpt.index"}));
  BundleReader reader(dir + "/model.ckpt");
  EXPECT_EQ(reader.Keys(), (std::vector<std::string>{"v1", "v2"}));
  EXPECT_EQ(reader.Read("v2").ToVector<float>(), std::vector<float>{2.0f});
  // Absolute paths are stored as given (TF1 Saver's default).
  std::optional<CheckpointState> state = ReadCheckpointState(dir);
  ASSERT_TRUE(state);
  EXPECT_EQ(state->model_checkpoint_path, dir + "/model.ckpt");
  EXPECT_EQ(state->all_model_checkpoint_paths, std::vector<std::string>{dir + "/model.ckpt"});
  EXPECT_TRUE(state->all_model_checkpoint_timestamps.empty());
  EXPECT_EQ(LatestCheckpoint(dir), dir + "/model.ckpt");
}

TEST_F(SaverTest, FilesPassTheIndependentVerifier) {
  EAGER_SKIP_WITHOUT_TFCKPT();
  const std::string dir = TempDir();
  Variable w(Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3}), "w");
  Variable step(int64_t{42}, "global_step", /*trainable=*/false);
  const std::string prefix = Saver().Save(dir + "/model.ckpt", step);
  EXPECT_EQ(prefix, dir + "/model.ckpt-42");
  std::string output;
  EXPECT_EQ(testing::RunTfckpt("verify '" + prefix + "'", dir + "/log", &output), 0) << output;
}

TEST_F(SaverTest, RenameMapRestoresIntoDifferentlyNamedVariables) {
  const std::string dir = TempDir();
  {
    Variable v1(1.0f, "v1"), v2(2.0f, "v2");
    Saver().Save(dir + "/model.ckpt");
  }
  Variable r1(0.0f, "renamed-v1"), r2(0.0f, "renamed-v2");
  Saver({{"v1", &r1}, {"v2", &r2}}).Restore(dir + "/model.ckpt");
  EXPECT_EQ(r1.value().scalar<float>(), 1.0f);
  EXPECT_EQ(r2.value().scalar<float>(), 2.0f);
}

TEST_F(SaverTest, SeedSnippetRenameMapSavesUnderTheGivenKeys) {
  // Seed 000: saver = tf.compat.v1.train.Saver({"model_weight": w, "model_bias": b}).
  const std::string dir = TempDir();
  Variable w(Tensor::FromVector<float>({0.5f, -1.5f}, Shape{2, 1}), "dense/kernel");
  Variable b(Tensor::FromVector<float>({0.25f}, Shape{1}), "dense/bias");
  Saver saver({{"model_weight", &w}, {"model_bias", &b}});
  saver.Save(dir + "/name_based");
  BundleReader reader(dir + "/name_based");
  EXPECT_EQ(reader.Keys(), (std::vector<std::string>{"model_bias", "model_weight"}));

  Variable w2(DType::kFloat32, Shape{2, 1}, "w2"), b2(DType::kFloat32, Shape{1}, "b2");
  Saver({{"model_weight", &w2}, {"model_bias", &b2}}).Restore(dir + "/name_based");
  EXPECT_EQ(w2.value().ToVector<float>(), (std::vector<float>{0.5f, -1.5f}));
  EXPECT_EQ(b2.value().ToVector<float>(), std::vector<float>{0.25f});
}

TEST_F(SaverTest, PartialRestoreLeavesOtherVariablesUninitialized) {
  const std::string dir = TempDir();
  {
    Variable v1(1.0f, "v1"), v2(2.0f, "v2");
    Saver().Save(dir + "/model.ckpt");
  }
  Variable r1(DType::kFloat32, Shape{}, "renamed-v1"), r2(DType::kFloat32, Shape{}, "renamed-v2");
  Saver({{"v1", &r1}}).Restore(dir + "/model.ckpt");
  EXPECT_EQ(r1.value().scalar<float>(), 1.0f);
  EXPECT_FALSE(r2.is_initialized());
  EXPECT_THAT(What([&] { (void)r2.value(); }),
              HasSubstr("Attempting to use uninitialized value renamed-v2"));
}

TEST_F(SaverTest, TwoVariablesWithOneNameIsTfsError) {
  Variable a(1.0f, "v");
  ResetDefaultNames();  // a new "graph": the name "v" is free again
  Variable b(2.0f, "v");
  EXPECT_EQ(a.shared_name(), b.shared_name());
  EXPECT_EQ(What([&] { Saver({&a, &b}); }), "At least two variables have the same name: v");
  EXPECT_THAT(What([&] { Saver({&a, nullptr}); }), HasSubstr("var_list[1] is a null"));
  EXPECT_THAT(What([&] { Saver({{"x", &a}, {"y", &a}}); }), HasSubstr("listed under two keys"));
}

TEST_F(SaverTest, UninitializedVariableFailsTheSaveBeforeAnyFileIsWritten) {
  const std::string dir = TempDir();
  Variable v1(1.0f, "v1");
  Variable v2(DType::kFloat32, Shape{}, "v2");
  try {
    Saver().Save(dir + "/model.ckpt");
    FAIL() << "expected FailedPreconditionError";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Attempting to use uninitialized value v2"));
  }
  EXPECT_TRUE(ListDir(dir).empty());
}

TEST_F(SaverTest, GlobalStepNamesThePrefixAndMaxToKeepPrunesTheOldest) {
  const std::string dir = TempDir();
  Variable v(1.0f, "v");
  SaverOptions options;
  options.max_to_keep = 2;
  Saver saver({&v}, options);
  for (int step = 1; step <= 4; ++step) {
    v.Assign(static_cast<float>(step));
    EXPECT_EQ(saver.Save(dir + "/model.ckpt", step), dir + "/model.ckpt-" + std::to_string(step));
    // The .meta of a deleted checkpoint goes too (TF deletes it with the rest).
    testing::WriteFile(dir + "/model.ckpt-" + std::to_string(step) + ".meta", "meta");
  }
  EXPECT_EQ(saver.last_checkpoints(),
            (std::vector<std::string>{dir + "/model.ckpt-3", dir + "/model.ckpt-4"}));
  EXPECT_EQ(ListDir(dir),
            (std::vector<std::string>{"checkpoint", "model.ckpt-3.data-00000-of-00001",
                                      "model.ckpt-3.index", "model.ckpt-3.meta",
                                      "model.ckpt-4.data-00000-of-00001", "model.ckpt-4.index",
                                      "model.ckpt-4.meta"}));
  std::optional<CheckpointState> state = ReadCheckpointState(dir);
  ASSERT_TRUE(state);
  EXPECT_EQ(state->model_checkpoint_path, dir + "/model.ckpt-4");
  EXPECT_EQ(state->all_model_checkpoint_paths,
            (std::vector<std::string>{dir + "/model.ckpt-3", dir + "/model.ckpt-4"}));
  Variable r(0.0f, "r");
  Saver({{"v", &r}}).Restore(*LatestCheckpoint(dir));
  EXPECT_EQ(r.value().scalar<float>(), 4.0f);
}

TEST_F(SaverTest, ResavingAPrefixMovesItToTheEnd) {
  const std::string dir = TempDir();
  Variable v(1.0f, "v");
  Saver saver({&v});
  saver.Save(dir + "/a");
  saver.Save(dir + "/b");
  saver.Save(dir + "/a");
  EXPECT_EQ(saver.last_checkpoints(), (std::vector<std::string>{dir + "/b", dir + "/a"}));
}

TEST_F(SaverTest, KeepCheckpointEveryNHoursKeepsFilesLeavingTheWindow) {
  const std::string dir = TempDir();
  Variable v(1.0f, "v");
  SaverOptions options;
  options.max_to_keep = 1;
  options.keep_checkpoint_every_n_hours = 0.0;  // every checkpoint is "an hour apart"
  Saver saver({&v}, options);
  saver.Save(dir + "/model.ckpt", 1);
  saver.Save(dir + "/model.ckpt", 2);
  saver.Save(dir + "/model.ckpt", 3);
  // Both left the window but are preserved; the state file lists only the last.
  EXPECT_TRUE(fs::exists(dir + "/model.ckpt-1.index"));
  EXPECT_TRUE(fs::exists(dir + "/model.ckpt-2.index"));
  EXPECT_EQ(ReadCheckpointState(dir)->all_model_checkpoint_paths,
            std::vector<std::string>{dir + "/model.ckpt-3"});
}

TEST_F(SaverTest, MaxToKeepZeroKeepsEverythingAndListsOnlyTheLatest) {
  const std::string dir = TempDir();
  Variable v(1.0f, "v");
  SaverOptions options;
  options.max_to_keep = 0;
  Saver saver({&v}, options);
  for (int step = 1; step <= 7; ++step) saver.Save(dir + "/ckpt", step);
  for (int step = 1; step <= 7; ++step) {
    EXPECT_TRUE(fs::exists(dir + "/ckpt-" + std::to_string(step) + ".index")) << step;
  }
  EXPECT_EQ(ReadCheckpointState(dir)->all_model_checkpoint_paths,
            std::vector<std::string>{dir + "/ckpt-7"});
}

TEST_F(SaverTest, RelativePathsAreStoredRelativeToTheirDirectory) {
  const std::string dir = TempDir();
  const fs::path cwd = fs::current_path();
  fs::current_path(dir);
  Variable v(1.0f, "v");
  Saver saver({&v});
  saver.Save("./model/model.ckpt", 1);
  saver.Save("model/model.ckpt", 2);
  fs::current_path(cwd);
  std::optional<CheckpointState> state = ReadCheckpointState(dir + "/model");
  ASSERT_TRUE(state);
  EXPECT_EQ(state->model_checkpoint_path, "model.ckpt-2");
  EXPECT_EQ(state->all_model_checkpoint_paths,
            (std::vector<std::string>{"model.ckpt-1", "model.ckpt-2"}));

  // save_relative_paths turns absolute paths relative too.
  SaverOptions options;
  options.save_relative_paths = true;
  Saver relative({&v}, options);
  relative.Save(dir + "/abs/model.ckpt");
  EXPECT_EQ(ReadCheckpointState(dir + "/abs")->model_checkpoint_path, "model.ckpt");
}

TEST_F(SaverTest, MissingKeyIsTfsNotFoundWithClosestKeysAndARenameMap) {
  const std::string dir = TempDir();
  {
    NameScope dense("dense");
    Variable kernel(Tensor::Zeros(Shape{4, 3}), "kernel");
    Variable bias(Tensor::Zeros(Shape{3}), "bias");
    Saver().Save(dir + "/model.ckpt");
  }
  Variable step(int64_t{7}, "step");
  Saver({&step}).Save(dir + "/other.ckpt");  // unrelated
  NameScope second("dense");                 // "dense_1": the model built twice
  Variable kernel(Tensor::Zeros(Shape{4, 3}), "kernel");
  Variable bias(Tensor::FromVector<float>({1, 1, 1}, Shape{3}), "bias");
  Saver saver({&kernel, &bias});
  std::string message;
  try {
    saver.Restore(dir + "/model.ckpt");
    FAIL() << "expected NotFoundError";
  } catch (const NotFoundError& e) {
    message = e.what();
  }
  EXPECT_THAT(message, HasSubstr("Restoring from checkpoint failed. This is most likely due to a "
                                 "Variable name or other graph key that is missing from the "
                                 "checkpoint."));
  EXPECT_THAT(message, HasSubstr("Key dense_1/bias not found in checkpoint\n"
                                 "Key dense_1/kernel not found in checkpoint\n"));
  EXPECT_THAT(message, HasSubstr("  dense_1/kernel (float32 [4,3]): dense/kernel (float32 [4,3]), "
                                 "dense/bias (float32 [3])\n"));
  EXPECT_THAT(message, HasSubstr("eager::Saver saver({{\"dense/bias\", &dense_1_bias}, "
                                 "{\"dense/kernel\", &dense_1_kernel}});"));
  EXPECT_EQ(bias.value().ToVector<float>(), (std::vector<float>{1, 1, 1}));  // untouched

  // The suggested map works.
  Saver({{"dense/bias", &bias}, {"dense/kernel", &kernel}}).Restore(dir + "/model.ckpt");
  EXPECT_EQ(bias.value().ToVector<float>(), (std::vector<float>{0, 0, 0}));
}

TEST_F(SaverTest, MissingKeyWithoutACompatibleKeySaysSo) {
  const std::string dir = TempDir();
  {
    Variable v(Tensor::Zeros(Shape{2}), "v");
    Saver().Save(dir + "/model.ckpt");
  }
  Variable w(Tensor::Zeros(Shape{5}), "w");
  const std::string message = What([&] { Saver({&w}).Restore(dir + "/model.ckpt"); });
  EXPECT_THAT(message, HasSubstr("Key w not found in checkpoint"));
  EXPECT_THAT(message, HasSubstr("w (float32 [5]): v (float32 [2])"));
  EXPECT_THAT(message, HasSubstr("No rename map restores every variable: no unused key of the "
                                 "same dtype and shape is left for w."));
}

TEST_F(SaverTest, DtypeOrShapeMismatchNamesKeySavedAndExpectedAndAssignsNothing) {
  const std::string dir = TempDir();
  {
    Variable a(1.0f, "a");
    Variable b(Tensor::FromVector<double>({1.0, 2.0}, Shape{2}), "b");
    Variable c(Tensor::Zeros(Shape{2, 2}), "c");
    Saver().Save(dir + "/model.ckpt");
  }
  ResetDefaultNames();
  Variable a(5.0f, "a");
  Variable b(Tensor::FromVector<float>({0.0f, 0.0f}, Shape{2}), "b");  // float32, saved float64
  Variable c(Tensor::Zeros(Shape{4}), "c");                            // [4], saved [2,2]
  try {
    Saver().Restore(dir + "/model.ckpt");
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("key b holds float64 [2] in checkpoint " + dir +
                                    "/model.ckpt, but variable b expects float32 [2]"));
    EXPECT_THAT(e.what(), HasSubstr("key c holds float32 [2,2] in checkpoint " + dir +
                                    "/model.ckpt, but variable c expects float32 [4]"));
  }
  EXPECT_EQ(a.value().scalar<float>(), 5.0f);  // all or nothing
}

TEST_F(SaverTest, RestoreFromAPathWithoutACheckpointIsNotFound) {
  const std::string dir = TempDir();
  Variable v(1.0f, "v");
  EXPECT_EQ(What([&] { Saver({&v}).Restore(dir + "/nothing"); }),
            "The passed save_path is not a valid checkpoint: " + dir + "/nothing");
  EXPECT_THROW(Saver({&v}).Restore(""), InvalidArgumentError);
  EXPECT_THROW(Saver({&v}).Save(""), InvalidArgumentError);
}

TEST_F(SaverTest, DefaultSaverWithoutVariablesIsAnError) {
  EXPECT_THAT(What([] { Saver saver; }), HasSubstr("No variables to save"));
}

}  // namespace
}  // namespace eager
