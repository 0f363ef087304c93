// Elu, Rsqrt, SquaredDifference and Squeeze (and the gradient ops EluGrad,
// RsqrtGrad) against std math; their gradients are checked by central
// differences in op_gradient_test.cc.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ops/binary_ops.h"
#include "ops/shape_ops.h"
#include "ops/unary_ops.h"

namespace eager {
namespace {

using ::testing::HasSubstr;

const std::vector<double> kInputs = {-2.5, -0.5, 0.25, 1.0, 3.0};

void ExpectNear(const Tensor& t, const std::vector<double>& expected, double tol = 1e-14) {
  std::vector<double> got = t.ToVector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], tol) << i;
}

TEST(EluTest, IsXAboveZeroAndExpMinusOneBelow) {
  std::vector<double> want;
  want.reserve(kInputs.size());
  for (double v : kInputs) want.push_back(v > 0 ? v : std::expm1(v));
  ExpectNear(Elu(Tensor::FromVector<double>(kInputs, Shape{5})), want);
  EXPECT_EQ(Elu(Tensor::Vector<float>({0.0f, -1.0f})).ToVector<float>(),
            (std::vector<float>{0.0f, std::exp(-1.0f) - 1.0f}));
  EXPECT_THROW(Elu(Tensor::Vector<int32_t>({1})), InvalidArgumentError);
}

TEST(EluTest, GradScalesByOutputPlusOneBelowZero) {
  const Tensor y = Elu(Tensor::FromVector<double>(kInputs, Shape{5}));
  const Tensor g = Tensor::Vector<double>({1, 2, 3, 4, 5});
  std::vector<double> want;
  for (size_t i = 0; i < kInputs.size(); ++i) {
    const double x = kInputs[i];
    want.push_back((i + 1) * (x > 0 ? 1.0 : std::exp(x)));  // d elu(x)/dx
  }
  ExpectNear(EluGrad(g, y), want, 1e-12);
  EXPECT_THROW(EluGrad(g, Tensor::Vector<double>({1, 2})), InvalidArgumentError);
}

TEST(RsqrtTest, IsOneOverSqrtAndItsGradient) {
  const std::vector<double> x = {0.25, 1.0, 4.0, 10.0};
  std::vector<double> want, grad;
  for (double v : x) {
    want.push_back(1.0 / std::sqrt(v));
    grad.push_back(3.0 * -0.5 * std::pow(v, -1.5));  // 3 * d(x^-1/2)/dx
  }
  const Tensor y = Rsqrt(Tensor::FromVector<double>(x, Shape{4}));
  ExpectNear(y, want, 1e-15);
  ExpectNear(RsqrtGrad(y, Tensor::Vector<double>({3, 3, 3, 3})), grad, 1e-14);
  const std::vector<float> f = Rsqrt(Tensor::Vector<float>({4.0f, 0.01f})).ToVector<float>();
  EXPECT_FLOAT_EQ(f[0], 0.5f);
  EXPECT_FLOAT_EQ(f[1], 10.0f);
}

TEST(SquaredDifferenceTest, BroadcastsLikeSub) {
  const Tensor x = Tensor::FromVector<double>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const Tensor y = Tensor::Vector<double>({0.5, -1, 3});
  ExpectNear(SquaredDifference(x, y), {0.25, 9, 0, 12.25, 36, 9});
  EXPECT_EQ(SquaredDifference(Tensor::Vector<int32_t>({5}), Tensor::Vector<int32_t>({2, 7}))
                .ToVector<int32_t>(),
            (std::vector<int32_t>{9, 4}));
  EXPECT_THROW(SquaredDifference(x, Tensor::Vector<double>({1, 2})), InvalidArgumentError);
}

TEST(SqueezeTest, DropsSizeOneDimensions) {
  const Tensor x = Tensor::FromVector<float>({1, 2, 3}, Shape{1, 3, 1});
  EXPECT_EQ(Squeeze(x).shape(), Shape{3});
  EXPECT_EQ(Squeeze(x, {0}).shape(), (Shape{3, 1}));
  EXPECT_EQ(Squeeze(x, {-1}).shape(), (Shape{1, 3}));
  EXPECT_EQ(Squeeze(x).ToVector<float>(), (std::vector<float>{1, 2, 3}));
  try {
    Squeeze(x, {1});
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Can not squeeze dim[1], expected a dimension of 1, got 3"));
  }
  EXPECT_THROW(Squeeze(x, {3}), InvalidArgumentError);
}

}  // namespace
}  // namespace eager
