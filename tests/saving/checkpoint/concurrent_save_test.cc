// A save taken while another thread trains (issue 10) writes every variable
// as of one moment (runtime/variable.h "Thread safety"). Every variable here
// keeps all its elements equal at every step: one is Assign()ed the step
// number, one is trained by Adam (in place) on a gradient of ones, so it and
// its m and v slots stay uniform. A torn value, half old step and half new,
// would show as unequal elements in the saved tensor.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "autodiff/adam.h"
#include "runtime/variable.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/checkpoint/checkpoint.h"
#include "saving/saver/saver.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::TempDir;

// Large enough that an update takes long compared to taking a reference.
constexpr int64_t kElements = 1 << 18;

Tensor Filled(float x) {
  return Tensor::FromVector<float>(std::vector<float>(kElements, x), Shape{kElements});
}

// Every tensor in the bundle at `prefix` has all elements equal; returns the
// distinct first elements of `key` seen so far through `seen`.
void ExpectEveryTensorUniform(const std::string& prefix, const std::string& key,
                              std::set<float>* seen) {
  BundleReader reader(prefix);
  int uniform = 0;
  for (const std::string& name : reader.Keys()) {
    const Tensor t = reader.Read(name);
    if (t.dtype() != DType::kFloat32 || t.num_elements() != kElements) continue;
    const std::vector<float> values = t.ToVector<float>();
    const auto first_other =
        std::find_if(values.begin(), values.end(), [&](float x) { return x != values[0]; });
    EXPECT_EQ(first_other, values.end())
        << name << " in " << prefix << " is torn: element 0 is " << values[0] << ", element "
        << (first_other - values.begin()) << " is " << *first_other;
    ++uniform;
    if (name == key) seen->insert(values[0]);
  }
  EXPECT_GE(uniform, 4) << "counter, weights and Adam's m and v in " << prefix;
}

class ConcurrentSaveTest : public ::testing::Test {
 protected:
  // Two trainer threads: one assigns the step number, one runs Adam steps.
  void StartTraining() {
    adam_.ApplyGradients({{Filled(1.0f), &weights_}});  // slots exist before saves start
    threads_.emplace_back([this] {
      for (float step = 1; !stop_; ++step) counter_.Assign(Filled(step));
    });
    threads_.emplace_back([this] {
      while (!stop_) adam_.ApplyGradients({{Filled(1.0f), &weights_}});
    });
  }
  void TearDown() override {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
  }

  Variable counter_{Filled(0.0f), "counter"};
  Variable weights_{Filled(0.0f), "weights"};
  Adam adam_;
  std::atomic<bool> stop_ = false;
  std::vector<std::thread> threads_;
};

TEST_F(ConcurrentSaveTest, CheckpointSavesEachVariableAsOfOneMoment) {
  const std::string dir = TempDir();
  StartTraining();
  Checkpoint checkpoint({{"counter", &counter_}, {"weights", &weights_}, {"optimizer", &adam_}});
  std::set<float> seen;
  for (int i = 0; i < 20 && !::testing::Test::HasFailure(); ++i) {
    ExpectEveryTensorUniform(checkpoint.Save(dir + "/ckpt"), "counter/.ATTRIBUTES/VARIABLE_VALUE",
                             &seen);
  }
  EXPECT_GT(seen.size(), 1u) << "the saves ran while the counter moved";
}

TEST_F(ConcurrentSaveTest, SaverSavesEachVariableAsOfOneMoment) {
  const std::string dir = TempDir();
  StartTraining();
  Saver saver(std::map<std::string, Variable*>{{"counter", &counter_},
                                               {"weights", &weights_},
                                               {"weights/m", adam_.GetSlot(weights_, "m")},
                                               {"weights/v", adam_.GetSlot(weights_, "v")}});
  std::set<float> seen;
  for (int i = 0; i < 20 && !::testing::Test::HasFailure(); ++i) {
    saver.Save(dir + "/model.ckpt");
    ExpectEveryTensorUniform(dir + "/model.ckpt", "counter", &seen);
  }
  EXPECT_GT(seen.size(), 1u) << "the saves ran while the counter moved";
}

}  // namespace
}  // namespace eager
