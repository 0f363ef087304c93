#include "distributed/gradient_averaging.h"

#include <gtest/gtest.h>

#include "runtime/errors.h"
#include "tests/distributed/data_parallel_model.h"

namespace eager::distributed {
namespace {

using ::eager::testing::GlobalBatch;
using ::eager::testing::MeanLoss;
using ::eager::testing::Share;
using ::eager::testing::SmallMlp;

const World& TheWorld() { return *World::Current(); }

// Rank r contributes base + r at every element: the mean is base + (N-1)/2.
TEST(GradientAveragingTest, MeanOfEveryRanksTensorsInFewBuckets) {
  const World& world = TheWorld();
  const float r = float(world.rank());
  std::vector<std::optional<Tensor>> tensors = {
      Tensor::FromVector<float>({1 + r, 2 + r, 3 + r}, Shape{3}), std::nullopt,
      Tensor::FromVector<double>({10 + r}, Shape{1, 1}),
      Tensor::FromVector<float>(std::vector<float>(1000, 5 + r), Shape{10, 100}),
      Tensor::FromVector<float>({-r}, Shape{})};
  AveragingStats stats;
  // 16 bytes a bucket: 4 floats; the 1000-float tensor is a bucket alone.
  const auto mean = AverageAcrossRanks(world, tensors, 16, &stats);
  const float half = float(world.size() - 1) / 2;
  ASSERT_EQ(mean.size(), tensors.size());
  EXPECT_EQ(mean[0]->ToVector<float>(), (std::vector<float>{1 + half, 2 + half, 3 + half}));
  EXPECT_FALSE(mean[1].has_value());
  EXPECT_EQ(mean[2]->ToVector<double>(), (std::vector<double>{10 + double(half)}));
  EXPECT_EQ(mean[2]->shape(), (Shape{1, 1}));
  EXPECT_EQ(mean[3]->ToVector<float>(), std::vector<float>(1000, 5 + half));
  EXPECT_EQ(mean[3]->shape(), (Shape{10, 100}));
  EXPECT_EQ(mean[4]->ToVector<float>(), (std::vector<float>{-half}));
  // floats: {t0}, {t3}, {t4}; doubles: {t2}. One process reduces nothing.
  EXPECT_EQ(stats.allreduce_calls, world.size() == 1 ? 0 : 4);
}

TEST(GradientAveragingTest, DefaultBucketsTakeOneCallForASmallModel) {
  const World& world = TheWorld();
  const std::vector<std::optional<Tensor>> tensors(20, Tensor::Zeros(Shape{100, 10}));
  AveragingStats stats;
  AverageAcrossRanks(world, tensors, kDefaultBucketBytes, &stats);
  EXPECT_EQ(stats.allreduce_calls, world.size() == 1 ? 0 : 1);
}

TEST(GradientAveragingTest, IntegerTensorsAreRefused) {
  std::vector<std::optional<Tensor>> tensors = {Tensor::FromVector<int32_t>({1}, Shape{1})};
  EXPECT_THROW(AverageAcrossRanks(TheWorld(), tensors), UnimplementedError);
}

// The gradient N ranks average from their shares equals the gradient one
// process computes on the whole global batch.
TEST(GradientAveragingTest, AveragedShareGradientsEqualTheGlobalBatchGradient) {
  const World& world = TheWorld();
  SmallMlp model;
  const auto batch = GlobalBatch(0);
  model(batch.x);  // build
  const std::vector<Variable*> vars = model.TrainableVariables();
  std::vector<std::optional<Tensor>> whole;
  {
    GradientTape tape;
    whole = tape.Gradient(MeanLoss(model, batch), vars);
  }
  std::vector<std::optional<Tensor>> mine;
  {
    GradientTape tape;
    mine = tape.Gradient(MeanLoss(model, Share(batch, world.rank(), world.size())), vars);
  }
  const auto mean = AverageAcrossRanks(world, mine);
  ASSERT_EQ(mean.size(), whole.size());
  for (size_t i = 0; i < mean.size(); ++i) {
    const std::vector<float> got = mean[i]->ToVector<float>();
    const std::vector<float> want = whole[i]->ToVector<float>();
    ASSERT_EQ(got.size(), want.size());
    float scale = 0;
    for (float w : want) scale = std::max(scale, std::abs(w));
    for (size_t j = 0; j < got.size(); ++j) {
      EXPECT_NEAR(got[j], want[j], 1e-6f * scale + 1e-7f) << vars[i]->name() << " element " << j;
    }
  }
}

}  // namespace
}  // namespace eager::distributed
