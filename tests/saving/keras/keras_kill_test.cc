// Keras files a kill cannot tear (issue 40, "Writes are crash-safe"): a
// forked child overwrites m.weights.h5 / m.keras and is SIGKILLed before each
// of its file-changing system calls in turn (internal::SetFileStepHook), then
// at random times (inside libhdf5's and libzip's own writes, which the hook
// does not see). After every kill the file loads as the old model or the new
// one, never a mix; the next save removes the temporary the killed one left.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "autodiff/dense.h"
#include "eager.h"
#include "saving/keras/keras_model.h"
#include "saving/keras/keras_weights.h"
#include "tests/saving/bundle/interrupted_save.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
using ::eager::testing::ListDir;
using ::eager::testing::RunKilledAfter;
using ::eager::testing::RunKilledAt;
using ::eager::testing::TempDir;

// Dense(3) on [1, 2] then Dense(2), drawn from `seed`: old and new differ.
std::unique_ptr<Sequential> Model(uint64_t seed) {
  auto model = std::make_unique<Sequential>("seq");
  model->Add(std::make_unique<Dense>(3, Relu, true, seed));
  model->Add(std::make_unique<Dense>(2, nullptr, true, seed + 1));
  (void)(*model)(Tensor::FromVector<float>({1.0f, 2.0f}, Shape({1, 2})));
  return model;
}

// The model's values, one string: what "old" and "new" are compared by.
std::string Values(Sequential& model) {
  std::string out;
  for (Variable* v : model.TrainableVariables()) out += v->value().ValuesString(100) + ";";
  return out;
}

std::vector<std::string> Leftovers(const std::string& dir) {
  std::vector<std::string> out;
  for (const std::string& name : ListDir(dir)) {
    if (name.find(".tmp-") != std::string::npos) out.push_back(name);
  }
  return out;
}

// Kills `save` (which overwrites `path`) at every file step and at random
// times; after each kill `load()` must give `old_values` or `new_values`.
void KillEverywhere(const std::string& dir, const std::function<void()>& save_old,
                    const std::function<void()>& save_new, const std::function<std::string()>& load,
                    const std::string& old_values, const std::string& new_values) {
  int steps = 0;
  for (int k = 1;; ++k) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    save_old();
    const bool killed = RunKilledAt(k, save_new);
    SCOPED_TRACE(::testing::Message() << "killed before file step " << k);
    const std::string got = load();
    EXPECT_TRUE(got == old_values || got == new_values) << got;
    if (!killed) {
      EXPECT_EQ(got, new_values);
      steps = k - 1;
      break;
    }
    save_new();  // in this process: replaces the file, removes the dead child's temporary
    EXPECT_EQ(Leftovers(dir), std::vector<std::string>{});
    EXPECT_EQ(load(), new_values);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GE(steps, 3) << "fsync of the file, rename, fsync of the directory at least";
  std::mt19937 random(7);
  for (int i = 0; i < 12; ++i) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    save_old();
    const auto delay = std::chrono::microseconds(std::uniform_int_distribution<>(0, 8000)(random));
    RunKilledAfter(delay, [&] {
      save_new();
      save_old();
    });
    SCOPED_TRACE(::testing::Message() << "killed after " << delay.count() << " us");
    const std::string got = load();
    EXPECT_TRUE(got == old_values || got == new_values) << got;
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(KerasKillTest, AKilledWeightsSaveLeavesTheOldFileOrTheNew) {
  const std::string dir = TempDir() + "/keras_kill_weights";
  const std::string path = dir + "/m.weights.h5";
  auto old_model = Model(1);
  auto new_model = Model(11);
  KillEverywhere(
      dir, [&] { SaveKerasWeights(path, *old_model); }, [&] { SaveKerasWeights(path, *new_model); },
      [&] {
        auto fresh = Model(21);
        LoadKerasWeights(path, *fresh);
        return Values(*fresh);
      },
      Values(*old_model), Values(*new_model));
}

TEST(KerasKillTest, AKilledKerasSaveLeavesTheOldFileOrTheNew) {
  const std::string dir = TempDir() + "/keras_kill_model";
  const std::string path = dir + "/m.keras";
  auto old_model = Model(1);
  auto new_model = Model(11);
  KillEverywhere(
      dir, [&] { SaveKerasModel(path, *old_model); }, [&] { SaveKerasModel(path, *new_model); },
      [&] {
        KerasModel loaded = LoadKerasModel(path);
        (void)(*loaded.model)(Tensor::FromVector<float>({1.0f, 2.0f}, Shape({1, 2})));
        return Values(*loaded.model);
      },
      Values(*old_model), Values(*new_model));
}

}  // namespace
}  // namespace eager
