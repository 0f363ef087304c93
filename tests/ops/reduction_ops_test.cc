#include "ops/reduction_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace eager {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// x[i][j][k] = 100 i + 10 j + k, shape [2,3,4]: sums are easy to do by hand.
Tensor Cube() {
  std::vector<double> v;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) v.push_back(100 * i + 10 * j + k);
  return Tensor::FromVector<double>(v, Shape{2, 3, 4});
}

TEST(ReductionOpsTest, SumOverAllAxes) {
  // sum i: 12 * 100 = 1200; sum j: 8 * 30 = 240; sum k: 6 * 6 = 36.
  Tensor s = ReduceSum(Cube());
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(s.scalar<double>(), 1476);
}

TEST(ReductionOpsTest, SumOverEachAxisAndKeepDims) {
  Tensor rows = ReduceSum(Tensor::Matrix<float>({{1, 2, 3}, {4, 5, 6}}), {0});
  EXPECT_EQ(rows.ToVector<float>(), (std::vector<float>{5, 7, 9}));
  Tensor cols = ReduceSum(Tensor::Matrix<float>({{1, 2, 3}, {4, 5, 6}}), {-1}, true);
  EXPECT_EQ(cols.shape(), (Shape{2, 1}));
  EXPECT_EQ(cols.ToVector<float>(), (std::vector<float>{6, 15}));
  // Over axes 0 and 2 of the cube: for each j, sum_i sum_k = 4*100 + 8*10 j + 2*6.
  Tensor outer = ReduceSum(Cube(), {0, 2}, true);
  EXPECT_EQ(outer.shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(outer.ToVector<double>(), (std::vector<double>{412, 492, 572}));
  // Over the middle axis only: for each (i, k): 3*(100 i + k) + 30.
  Tensor middle = ReduceSum(Cube(), {1});
  EXPECT_EQ(middle.shape(), (Shape{2, 4}));
  EXPECT_EQ(middle.ToVector<double>(), (std::vector<double>{30, 33, 36, 39, 330, 333, 336, 339}));
}

TEST(ReductionOpsTest, IntegerSumAndMean) {
  Tensor x = Tensor::Matrix<int32_t>({{1, 2}, {3, 5}});
  EXPECT_EQ(ReduceSum(x, {1}).ToVector<int32_t>(), (std::vector<int32_t>{3, 8}));
  EXPECT_EQ(ReduceMean(x, {1}).ToVector<int32_t>(), (std::vector<int32_t>{1, 4}));  // truncates
  EXPECT_EQ(ReduceMax(Tensor::Vector<int64_t>({-5, -2, -9})).scalar<int64_t>(), -2);
}

TEST(ReductionOpsTest, MeanAndMax) {
  Tensor x = Tensor::Matrix<double>({{1, 5, 3}, {-4, -2, -6}});
  EXPECT_EQ(ReduceMean(x).scalar<double>(), -0.5);
  EXPECT_EQ(ReduceMean(x, {0}).ToVector<double>(), (std::vector<double>{-1.5, 1.5, -1.5}));
  EXPECT_EQ(ReduceMax(x, {1}).ToVector<double>(), (std::vector<double>{5, -2}));
  EXPECT_EQ(ReduceMax(x, {0}, true).ToVector<double>(), (std::vector<double>{1, 5, 3}));
}

TEST(ReductionOpsTest, ReduceMaxGradientSplitsAmongTies) {
  Tensor x = Tensor::Matrix<double>({{1, 3, 3}, {7, 2, 0}});
  const Attrs attrs{{"axis", std::vector<int64_t>{1}}, {"keep_dims", false}};
  OpCall call{&kMaxOp, {x}, ReduceMax(x, {1}), attrs};
  auto grads = kMaxOp.gradient(call, Tensor::Vector<double>({1, 4}));
  EXPECT_EQ(grads[0]->ToVector<double>(), (std::vector<double>{0, 0.5, 0.5, 4, 0, 0}));
}

TEST(ReductionOpsTest, ArgMaxReturnsFirstIndexOfMaximumAsInt64) {
  Tensor x = Tensor::Matrix<float>({{1, 9, 9}, {8, 2, 8}});
  Tensor a = ArgMax(x, 1);
  EXPECT_EQ(a.dtype(), DType::kInt64);
  EXPECT_EQ(a.ToVector<int64_t>(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(ArgMax(x, 0).ToVector<int64_t>(), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(ArgMax(Cube(), -2).ToVector<int64_t>(), std::vector<int64_t>(8, 2));
  EXPECT_EQ(kArgMaxOp.gradient, nullptr);
}

TEST(ReductionOpsTest, BadAxisThrowsNamingShape) {
  try {
    ReduceSum(Tensor::Zeros(Shape{2, 3}), {2});
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("Sum"), HasSubstr("axis 2"), HasSubstr("[2,3]")));
  }
  EXPECT_THROW(ReduceMax(Tensor::Zeros(Shape{2, 3}), {1, -1}), InvalidArgumentError);
  EXPECT_THROW(ArgMax(Tensor::Zeros(Shape{2}), 1), InvalidArgumentError);
  EXPECT_THROW(ReduceSum(Tensor(true)), InvalidArgumentError);
}

TEST(ReductionOpsTest, EmptyReductionsGiveIdentity) {
  EXPECT_EQ(ReduceSum(Tensor::Zeros(Shape{0, 3}), {0}).ToVector<float>(),
            (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(ReduceMax(Tensor::Zeros(Shape{2, 0}), {1}).ToVector<float>(),
            std::vector<float>(2, -std::numeric_limits<float>::infinity()));
}

// Integer Sum, Prod and Mean wrap in two's complement as TF's do, never
// signed overflow (UBSan caught an int64 Prod in a fuzzed graph); expected
// values computed here in unsigned arithmetic. Large inputs take the
// blocked, pooled path; a kept axis the per-column accumulation.
TEST(ReductionOpsTest, IntegerSumProdAndMeanWrapAsTfs) {
  constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(ReduceSum(Tensor::FromVector<int32_t>({kMax32, 1, 1}, Shape{3})).ToVector<int32_t>(),
            (std::vector<int32_t>{kMin32 + 1}));
  EXPECT_EQ(
      ReduceProd(Tensor::FromVector<int32_t>({65536, 65536, 3}, Shape{3})).ToVector<int32_t>(),
      (std::vector<int32_t>{0}));
  EXPECT_EQ(ReduceMean(Tensor::FromVector<int32_t>({kMax32, kMax32}, Shape{2})).ToVector<int32_t>(),
            (std::vector<int32_t>{-1}));  // (2^31 - 1) * 2 wraps to -2, halved
  const int64_t n = 1 << 20;
  const std::vector<int64_t> threes(static_cast<size_t>(n), 3);
  uint64_t prod = 1;
  for (int64_t i = 0; i < n; ++i) prod *= 3u;
  EXPECT_EQ(ReduceProd(Tensor::FromVector<int64_t>(threes, Shape{n})).ToVector<int64_t>(),
            (std::vector<int64_t>{static_cast<int64_t>(prod)}));
  const std::vector<int64_t> big(static_cast<size_t>(n), std::numeric_limits<int64_t>::max());
  const uint64_t sum =
      static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) * uint64_t{1 << 20};
  EXPECT_EQ(ReduceSum(Tensor::FromVector<int64_t>(big, Shape{n})).ToVector<int64_t>(),
            (std::vector<int64_t>{static_cast<int64_t>(sum)}));
  // Over axis 0 of [n / 4, 4]: each column the product of n / 4 threes.
  uint64_t column = 1;
  for (int64_t i = 0; i < n / 4; ++i) column *= 3u;
  EXPECT_EQ(
      ReduceProd(Tensor::FromVector<int64_t>(threes, Shape{n / 4, 4}), {0}).ToVector<int64_t>(),
      std::vector<int64_t>(4, static_cast<int64_t>(column)));
}

}  // namespace
}  // namespace eager
