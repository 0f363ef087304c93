#include "ops/random_generator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace eager {
namespace {

TEST(RandomOpsTest, NextDoubleUsesTheStandardMt19937_64Sequence) {
  // The C++ standard fixes mt19937_64's 10000th output for the default seed
  // 5489 ([rand.predef]): 9981545732273789042.
  RandomGenerator rng(5489);
  double last = 0;
  for (int i = 0; i < 10000; ++i) last = rng.NextDouble();
  EXPECT_EQ(last, static_cast<double>(9981545732273789042ull >> 11) * 0x1.0p-53);
}

TEST(RandomOpsTest, SameSeedSameNumbersDifferentSeedDifferentNumbers) {
  Tensor a = RandomNormal(Shape{5, 7}, 42);
  Tensor b = RandomNormal(Shape{5, 7}, 42);
  Tensor c = RandomNormal(Shape{5, 7}, 43);
  EXPECT_EQ(a.ToVector<float>(), b.ToVector<float>());
  EXPECT_NE(a.ToVector<float>(), c.ToVector<float>());
  EXPECT_EQ(RandomUniform(Shape{3}, 1, 0, 1, DType::kFloat64).ToVector<double>(),
            RandomUniform(Shape{3}, 1, 0, 1, DType::kFloat64).ToVector<double>());
}

TEST(RandomOpsTest, NormalHasRequestedMoments) {
  const int n = 20000;
  std::vector<double> v = RandomNormal(Shape{n}, 9, 3.0, 2.0, DType::kFloat64).ToVector<double>();
  double mean = 0, var = 0;
  for (double x : v) mean += x / n;
  for (double x : v) var += (x - mean) * (x - mean) / (n - 1);
  // Standard errors: 2/sqrt(n) = 0.014 for the mean, ~0.028 for the stddev.
  EXPECT_NEAR(mean, 3.0, 0.06);
  EXPECT_NEAR(std::sqrt(var), 2.0, 0.08);
}

TEST(RandomOpsTest, UniformStaysInHalfOpenRangeAndCoversIt) {
  std::vector<float> v = RandomUniform(Shape{10000}, 3, -1.0, 1.0).ToVector<float>();
  double mean = 0;
  float lo = 1, hi = -1;
  for (float x : v) {
    ASSERT_GE(x, -1.0f);
    ASSERT_LT(x, 1.0f);
    mean += x / 10000.0;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  EXPECT_NEAR(mean, 0.0, 0.04);
  EXPECT_LT(lo, -0.99f);
  EXPECT_GT(hi, 0.99f);
}

TEST(RandomOpsTest, NextBelowIsInRangeAndHitsEveryValue) {
  RandomGenerator rng(1);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 7000; ++i) {
    uint64_t k = rng.NextBelow(7);
    ASSERT_LT(k, 7u);
    ++counts[k];
  }
  for (int c : counts) EXPECT_NEAR(c, 1000, 150);
}

TEST(RandomOpsTest, RejectsNonFloatDtypesAndEmptyRanges) {
  EXPECT_THROW(RandomNormal(Shape{2}, 1, 0, 1, DType::kInt32), InvalidArgumentError);
  EXPECT_THROW(RandomUniform(Shape{2}, 1, 1.0, 1.0), InvalidArgumentError);
}

}  // namespace
}  // namespace eager

namespace eager {
namespace {

TEST(RandomGeneratorStateTest, StateRoundTripsAndResumesTheSameSequence) {
  RandomGenerator a(42);
  for (int i = 0; i < 100; ++i) a.NextBelow(1000);
  const std::string state = a.State();
  RandomGenerator b(7);
  b.SetState(state);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.NextBelow(1u << 30), b.NextBelow(1u << 30));
  EXPECT_THROW(b.SetState("not a state"), InvalidArgumentError);
}

}  // namespace
}  // namespace eager
