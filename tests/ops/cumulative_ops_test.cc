// Cumsum and Cumprod (tf.math.cumsum, tf.math.cumprod): values against
// hand-computed running sums and products for every combination of
// exclusive and reverse, integer dtypes, the axis check, and Cumprod's
// gradient at a zero (TF's div_no_nan: 0 there). Gradients elsewhere:
// op_gradient_test.cc (central differences).

#include "ops/cumulative_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "ops/op_def.h"

namespace eager {
namespace {

using ::testing::HasSubstr;

TEST(CumulativeOpsTest, RunningSumsAndProductsAsByHand) {
  const Tensor x = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(Cumsum(x, 1).ToVector<float>(), (std::vector<float>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(Cumsum(x, 1, true).ToVector<float>(), (std::vector<float>{0, 1, 3, 0, 4, 9}));
  EXPECT_EQ(Cumsum(x, 1, false, true).ToVector<float>(), (std::vector<float>{6, 5, 3, 15, 11, 6}));
  EXPECT_EQ(Cumsum(x, -1, true, true).ToVector<float>(), (std::vector<float>{5, 3, 0, 11, 6, 0}));
  EXPECT_EQ(Cumsum(x, 0).ToVector<float>(), (std::vector<float>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(Cumprod(x, 1).ToVector<float>(), (std::vector<float>{1, 2, 6, 4, 20, 120}));
  EXPECT_EQ(Cumprod(x, 1, true).ToVector<float>(), (std::vector<float>{1, 1, 2, 1, 4, 20}));
  EXPECT_EQ(Cumprod(x, 1, false, true).ToVector<float>(),
            (std::vector<float>{6, 6, 3, 120, 30, 6}));
  EXPECT_EQ(Cumprod(x, 1, true, true).ToVector<float>(), (std::vector<float>{6, 3, 1, 30, 6, 1}));
  EXPECT_EQ(Cumprod(x, -2, true).ToVector<float>(), (std::vector<float>{1, 1, 1, 1, 2, 3}));
  const Tensor ints = Tensor::Vector<int64_t>({3, -2, 5, 7});
  EXPECT_EQ(Cumprod(ints, 0).ToVector<int64_t>(), (std::vector<int64_t>{3, -6, -30, -210}));
  EXPECT_EQ(Cumsum(Tensor::Vector<int32_t>({3, -2, 5}), 0, false, true).ToVector<int32_t>(),
            (std::vector<int32_t>{6, 3, 5}));
  // An empty axis gives an empty result.
  EXPECT_EQ(Cumprod(Tensor::FromVector<double>({}, Shape{2, 0}), 1).shape(), (Shape{2, 0}));
}

TEST(CumulativeOpsTest, AxisOutsideTheRankIsRefused) {
  const Tensor x = Tensor::FromVector<float>({1, 2, 3, 4}, Shape{2, 2});
  EXPECT_THAT([&] { Cumsum(x, 2); },
              ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("axis 2 is out of range")));
  EXPECT_THAT([&] { Cumprod(x, -3); },
              ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("axis -3")));
  EXPECT_THAT([] { Cumsum(Tensor(1.0f), 0); }, ::testing::Throws<InvalidArgumentError>());
  EXPECT_THAT([] { Cumsum(Tensor::Vector<bool>({true}), 0); },
              ::testing::Throws<InvalidArgumentError>());
}

// TF's _CumprodGrad divides by x with div_no_nan: where x is 0 the gradient
// is 0 (the true derivative there is not), and no NaN comes out.
TEST(CumulativeOpsTest, CumprodGradientIsZeroAtAZeroAsTFs) {
  const Tensor x = Tensor::Vector<double>({2.0, 0.0, 3.0});
  const Tensor y = Cumprod(x, 0);
  const Attrs attrs{{"axis", int64_t{0}}, {"exclusive", false}, {"reverse", false}};
  const Tensor g =
      *kCumprodOp.gradient(OpCall{.op = &kCumprodOp, .inputs = {x}, .output = y, .attrs = attrs},
                           Tensor::Vector<double>({1.0, 1.0, 1.0}))[0];
  // d(x0 + x0 x1 + x0 x1 x2)/dx0 = 1 + x1 + x1 x2 = 1; at x1: 0 (TF's); d/dx2 = x0 x1 = 0.
  EXPECT_EQ(g.ToVector<double>(), (std::vector<double>{1.0, 0.0, 0.0}));
}

// Issue 37: int32 sums and products that overflow were signed overflow
// (undefined; UBSan flagged it). They wrap as TF's do (two's complement):
// tf.cumsum([2147483647, 1]) is [2147483647, -2147483648].
TEST(CumulativeOpsTest, IntegerOverflowWrapsAsTfs) {
  constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(Cumsum(Tensor::FromVector<int32_t>({kMax32, 1, 1}, Shape{3}), 0).ToVector<int32_t>(),
            (std::vector<int32_t>{kMax32, kMin32, kMin32 + 1}));
  EXPECT_EQ(Cumsum(Tensor::FromVector<int32_t>({kMin32, -1}, Shape{2}), 0, false, true)
                .ToVector<int32_t>(),
            (std::vector<int32_t>{kMax32, -1}));
  EXPECT_EQ(
      Cumprod(Tensor::FromVector<int32_t>({46341, 46341, 2}, Shape{3}), 0).ToVector<int32_t>(),
      (std::vector<int32_t>{46341, -2147479015, 9266}));
  EXPECT_EQ(Cumprod(Tensor::FromVector<int32_t>({65536, 65536}, Shape{2}), 0).ToVector<int32_t>(),
            (std::vector<int32_t>{65536, 0}));
  constexpr int64_t kMax64 = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(Cumsum(Tensor::FromVector<int64_t>({kMax64, 1}, Shape{2}), 0).ToVector<int64_t>(),
            (std::vector<int64_t>{kMax64, std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ(Cumprod(Tensor::FromVector<int64_t>({int64_t{1} << 32, int64_t{1} << 32}, Shape{2}), 0)
                .ToVector<int64_t>(),
            (std::vector<int64_t>{int64_t{1} << 32, 0}));
}

}  // namespace
}  // namespace eager
