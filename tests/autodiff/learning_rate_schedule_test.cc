// Learning-rate schedules against Keras's formulas
// (keras/src/optimizers/schedules/learning_rate_schedule.py), recomputed in
// float32 op by op, and what an optimizer with one saves in each layout
// (TF 2.21's files checked by tests/tf_keras/keras_optimizers_test.py).
#if defined(__clang__)
#pragma clang fp contract(off)
#else
#pragma GCC optimize("fp-contract=off")
#endif

#include "autodiff/learning_rate_schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "autodiff/adam.h"
#include "autodiff/rmsprop.h"
#include "runtime/errors.h"
#include "runtime/names.h"

namespace eager {
namespace {

class LearningRateScheduleTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetDefaultNames(); }
};

TEST_F(LearningRateScheduleTest, ExponentialDecay) {
  const ExponentialDecay smooth(0.1, 4, 0.5);
  const ExponentialDecay stairs(0.1, 4, 0.5, /*staircase=*/true);
  for (int64_t step : {0, 1, 3, 4, 9}) {
    const float p = static_cast<float>(step) / 4.0f;
    EXPECT_EQ(smooth(step), 0.1f * std::pow(0.5f, p)) << step;
    EXPECT_EQ(stairs(step), 0.1f * std::pow(0.5f, std::floor(p))) << step;
  }
  EXPECT_THROW(ExponentialDecay(0.1, 0, 0.5), InvalidArgumentError);
}

TEST_F(LearningRateScheduleTest, PiecewiseConstantDecayIncludesTheBoundary) {
  const PiecewiseConstantDecay schedule({2, 5}, {1.0, 0.5, 0.1});
  const std::vector<float> want = {1.0f, 1.0f, 1.0f, 0.5f, 0.5f, 0.5f, 0.1f};
  for (int64_t step = 0; step < 7; ++step) EXPECT_EQ(schedule(step), want[step]) << step;
  EXPECT_THROW(PiecewiseConstantDecay({1}, {1.0}), InvalidArgumentError);
}

TEST_F(LearningRateScheduleTest, CosineDecayStopsAtAlpha) {
  const CosineDecay schedule(0.01, 4, 0.1);
  for (int64_t step : {0, 1, 2, 4, 10}) {
    const float s = std::min(static_cast<float>(step), 4.0f);
    const float cosine =
        0.5f * (1.0f + std::cos(static_cast<float>(std::numbers::pi) * (s / 4.0f)));
    EXPECT_EQ(schedule(step), 0.01f * (static_cast<float>(1.0 - 0.1) * cosine + 0.1f)) << step;
  }
  EXPECT_FLOAT_EQ(schedule(100), 0.01f * 0.1f);
}

std::vector<std::string> ChildNames(Trackable& t) {
  std::vector<std::string> out;
  for (const Trackable::Child& c : t.Children()) out.push_back(c.name);
  return out;
}

TEST_F(LearningRateScheduleTest, OptimizerStepsWithTheScheduledRate) {
  RMSprop rmsprop({.learning_rate = 1.0});
  rmsprop.SetLearningRateSchedule(std::make_shared<ExponentialDecay>(0.1, 1, 0.5));
  EXPECT_EQ(rmsprop.learning_rate().value().scalar<float>(), 0.1f);  // schedule(0)
  Variable w(Tensor::FromVector<float>({1.0f}, Shape{1}), "w");
  rmsprop.ApplyGradients({{Tensor::FromVector<float>({1.0f}, Shape{1}), &w}});
  rmsprop.ApplyGradients({{Tensor::FromVector<float>({1.0f}, Shape{1}), &w}});
  // The second step used schedule(1) = 0.05: what tf_keras's
  // _current_learning_rate holds then.
  EXPECT_EQ(rmsprop.learning_rate().value().scalar<float>(), 0.05f);
  // Keras 3 saves no learning rate with a schedule; tf_keras the current one.
  EXPECT_EQ(ChildNames(rmsprop), (std::vector<std::string>{"_variables", "_trainable_variables",
                                                           "_iterations", "_velocities"}));
  SetKerasLayout(rmsprop, KerasLayout::kKeras2);
  EXPECT_EQ(ChildNames(rmsprop),
            (std::vector<std::string>{"_variables", "_iterations", "_current_learning_rate",
                                      "_velocities"}));
  EXPECT_THROW(SetKerasLayout(rmsprop, KerasLayout::kKeras2Legacy), UnimplementedError);
  Adam legacy;  // OptimizerV2 layout
  EXPECT_THROW(legacy.SetLearningRateSchedule(std::make_shared<CosineDecay>(0.1, 10)),
               UnimplementedError);
}

}  // namespace
}  // namespace eager
