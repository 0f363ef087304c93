#include "ops/nn_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace eager {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// Reference softmax of one row, by the definition.
std::vector<double> RefSoftmax(const std::vector<double>& row) {
  double sum = 0;
  for (double v : row) sum += std::exp(v);
  std::vector<double> out;
  out.reserve(row.size());
  for (double v : row) out.push_back(std::exp(v) / sum);
  return out;
}

TEST(NnOpsTest, SoftmaxMatchesDefinitionPerRow) {
  Tensor x = Tensor::Matrix<double>({{1, 2, 3}, {-1, 0, 0.5}});
  std::vector<double> got = Softmax(x).ToVector<double>();
  std::vector<double> r0 = RefSoftmax({1, 2, 3}), r1 = RefSoftmax({-1, 0, 0.5});
  for (int j = 0; j < 3; ++j) {
    EXPECT_NEAR(got[j], r0[j], 1e-15);
    EXPECT_NEAR(got[3 + j], r1[j], 1e-15);
  }
  std::vector<double> log = LogSoftmax(x).ToVector<double>();
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(log[j], std::log(r0[j]), 1e-14);
}

TEST(NnOpsTest, SoftmaxIsStableForLargeLogits) {
  Tensor x = Tensor::Matrix<float>({{1000, 1001}, {-1000, -1000}});
  std::vector<float> s = Softmax(x).ToVector<float>();
  EXPECT_NEAR(s[0], 1 / (1 + std::exp(1.0f)), 1e-6);
  EXPECT_NEAR(s[1], 1 / (1 + std::exp(-1.0f)), 1e-6);
  EXPECT_FLOAT_EQ(s[2], 0.5f);
  std::vector<float> l = LogSoftmax(x).ToVector<float>();
  EXPECT_NEAR(l[1], -std::log1p(std::exp(-1.0f)), 1e-6);
  EXPECT_NEAR(l[3], -std::log(2.0f), 1e-6);
}

TEST(NnOpsTest, SparseCrossEntropyIsMinusLogSoftmaxOfLabel) {
  Tensor logits = Tensor::Matrix<double>({{1, 2, 3}, {-1, 0, 0.5}});
  Tensor loss = SparseSoftmaxCrossEntropyWithLogits(Tensor::Vector<int32_t>({2, 0}), logits);
  ASSERT_EQ(loss.shape(), Shape{2});
  EXPECT_NEAR(loss.ToVector<double>()[0], -std::log(RefSoftmax({1, 2, 3})[2]), 1e-14);
  EXPECT_NEAR(loss.ToVector<double>()[1], -std::log(RefSoftmax({-1, 0, 0.5})[0]), 1e-14);
}

TEST(NnOpsTest, SparseCrossEntropyGradientIsSoftmaxMinusOneHot) {
  Tensor logits = Tensor::Matrix<double>({{1, 2, 3}, {-1, 0, 0.5}});
  Tensor labels = Tensor::Vector<int64_t>({2, 0});
  OpCall call{&kSparseSoftmaxCrossEntropyOp,
              {logits, labels},
              SparseSoftmaxCrossEntropyWithLogits(labels, logits),
              {}};
  auto grads = kSparseSoftmaxCrossEntropyOp.gradient(call, Tensor::Vector<double>({1, 2}));
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_FALSE(grads[1].has_value());
  std::vector<double> g = grads[0]->ToVector<double>();
  std::vector<double> r0 = RefSoftmax({1, 2, 3}), r1 = RefSoftmax({-1, 0, 0.5});
  EXPECT_NEAR(g[0], r0[0], 1e-15);
  EXPECT_NEAR(g[2], r0[2] - 1, 1e-15);
  EXPECT_NEAR(g[3], 2 * (r1[0] - 1), 1e-15);
  EXPECT_NEAR(g[5], 2 * r1[2], 1e-15);
}

TEST(NnOpsTest, BadLabelThrowsNamingIt) {
  Tensor logits = Tensor::Zeros(Shape{2, 3});
  try {
    SparseSoftmaxCrossEntropyWithLogits(Tensor::Vector<int32_t>({0, 3}), logits);
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("label value of 3"), HasSubstr("[0, 3)"),
                                HasSubstr("labels[1]"), HasSubstr("[2,3]")));
  }
  EXPECT_THROW(SparseSoftmaxCrossEntropyWithLogits(Tensor::Vector<int32_t>({-1, 0}), logits),
               InvalidArgumentError);
  try {
    SparseSoftmaxCrossEntropyWithLogits(Tensor::Vector<int32_t>({0}), logits);
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("[2,3]"), HasSubstr("[1]")));
  }
  EXPECT_THROW(Softmax(Tensor::Vector<int32_t>({1})), InvalidArgumentError);
}

}  // namespace
}  // namespace eager
