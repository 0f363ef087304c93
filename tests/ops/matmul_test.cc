#include "ops/matmul.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "ops/random_generator.h"

namespace eager {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// Independent reference: the textbook triple loop on op(a), op(b).
template <typename T>
std::vector<T> NaiveMatMul(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  const int64_t m = a.shape().dim(ta ? 1 : 0), k = a.shape().dim(ta ? 0 : 1);
  const int64_t n = b.shape().dim(tb ? 0 : 1);
  auto A = a.data<T>();
  auto B = b.data<T>();
  std::vector<T> c(static_cast<size_t>(m * n), T(0));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const T av = ta ? A[p * m + i] : A[i * k + p];
        const T bv = tb ? B[j * k + p] : B[p * n + j];
        sum += av * bv;
      }
      c[i * n + j] = sum;
    }
  }
  return c;
}

TEST(MatMulTest, MultipliesSmallMatrix) {
  Tensor a = Tensor::Matrix<float>({{1, 2}, {3, 4}});
  Tensor b = Tensor::Matrix<float>({{5, 6}, {7, 8}});
  EXPECT_EQ(MatMul(a, b).ToVector<float>(), (std::vector<float>{19, 22, 43, 50}));
  EXPECT_EQ(MatMul(a, b, true, false).ToVector<float>(), (std::vector<float>{26, 30, 38, 44}));
}

TEST(MatMulTest, AllTransposeFlagsMatchNaiveReference) {
  RandomGenerator rng(11);
  const int64_t m = 37, k = 53, n = 29;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      Tensor a = rng.Normal(ta ? Shape{k, m} : Shape{m, k}, 0, 1, DType::kFloat64);
      Tensor b = rng.Normal(tb ? Shape{n, k} : Shape{k, n}, 0, 1, DType::kFloat64);
      Tensor c = MatMul(a, b, ta, tb);
      ASSERT_EQ(c.shape(), (Shape{m, n}));
      std::vector<double> expected = NaiveMatMul<double>(a, b, ta, tb);
      std::vector<double> got = c.ToVector<double>();
      for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-12) << i;
    }
  }
}

TEST(MatMulTest, IntegerMatMulIsExact) {
  Tensor a = Tensor::Matrix<int64_t>({{1, -2, 3}, {4, 5, -6}});
  Tensor b = Tensor::Matrix<int64_t>({{7, 8}, {9, 10}, {11, 12}});
  EXPECT_EQ(MatMul(a, b).ToVector<int64_t>(), NaiveMatMul<int64_t>(a, b, false, false));
  Tensor ai = Tensor::Matrix<int32_t>({{2, 3}});
  EXPECT_EQ(MatMul(ai, ai, false, true).ToVector<int32_t>(), (std::vector<int32_t>{13}));
}

TEST(MatMulTest, EmptyInnerDimensionGivesZeros) {
  Tensor c = MatMul(Tensor::Zeros(Shape{2, 0}), Tensor::Zeros(Shape{0, 3}));
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  EXPECT_EQ(c.ToVector<float>(), std::vector<float>(6, 0.0f));
}

TEST(MatMulTest, InnerDimensionMismatchNamesBothShapes) {
  try {
    MatMul(Tensor::Zeros(Shape{2, 3}), Tensor::Zeros(Shape{4, 5}));
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("MatMul"), HasSubstr("[2,3]"), HasSubstr("[4,5]")));
  }
  EXPECT_THROW(MatMul(Tensor::Zeros(Shape{3}), Tensor::Zeros(Shape{3, 1})), InvalidArgumentError);
  EXPECT_THROW(MatMul(Tensor::Zeros(Shape{2, 2}), Tensor::Zeros(Shape{2, 2}, DType::kFloat64)),
               InvalidArgumentError);
}

}  // namespace
}  // namespace eager
