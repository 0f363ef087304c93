#include "ops/binary_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ops/random_generator.h"

namespace eager {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// Independent reference: NumPy broadcasting by explicit index arithmetic.
std::vector<double> NaiveBroadcast(const Tensor& x, const Tensor& y, const Shape& out,
                                   double (*f)(double, double)) {
  std::vector<double> result;
  auto xs = x.data<double>();
  auto ys = y.data<double>();
  for (int64_t flat = 0; flat < out.num_elements(); ++flat) {
    int64_t rem = flat, xi = 0, yi = 0, xstride = 1, ystride = 1;
    for (int d = out.rank() - 1; d >= 0; --d) {
      const int64_t idx = rem % out.dim(d);
      rem /= out.dim(d);
      const int xd = x.rank() - out.rank() + d;
      const int yd = y.rank() - out.rank() + d;
      if (xd >= 0) {
        xi += (x.shape().dim(xd) == 1 ? 0 : idx) * xstride;
        xstride *= x.shape().dim(xd);
      }
      if (yd >= 0) {
        yi += (y.shape().dim(yd) == 1 ? 0 : idx) * ystride;
        ystride *= y.shape().dim(yd);
      }
    }
    result.push_back(f(xs[xi], ys[yi]));
  }
  return result;
}

TEST(BinaryOpsTest, AddsSameShape) {
  Tensor z = Add(Tensor::Vector<float>({1, 2, 3}), Tensor::Vector<float>({10, 20, 30}));
  EXPECT_EQ(z.dtype(), DType::kFloat32);
  EXPECT_EQ(z.ToVector<float>(), (std::vector<float>{11, 22, 33}));
}

TEST(BinaryOpsTest, BroadcastsRowOverMatrix) {
  Tensor x = Tensor::Matrix<float>({{1, 2, 3}, {4, 5, 6}});
  Tensor bias = Tensor::Vector<float>({10, 20, 30});
  Tensor z = Add(x, bias);
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(z.ToVector<float>(), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(Sub(bias, x).ToVector<float>(), (std::vector<float>{9, 18, 27, 6, 15, 24}));
}

TEST(BinaryOpsTest, BroadcastsColumnAgainstRow) {
  Tensor col = Tensor::FromVector<double>({1, 2}, Shape{2, 1});
  Tensor row = Tensor::FromVector<double>({10, 20, 30}, Shape{1, 3});
  Tensor z = Mul(col, row);
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(z.ToVector<double>(), (std::vector<double>{10, 20, 30, 20, 40, 60}));
}

TEST(BinaryOpsTest, BroadcastsScalarWithTensor) {
  Tensor x = Tensor::Matrix<double>({{1, 2}, {3, 4}});
  EXPECT_EQ(Div(x, Tensor(2.0)).ToVector<double>(), (std::vector<double>{0.5, 1, 1.5, 2}));
  EXPECT_EQ(Sub(Tensor(10.0), x).ToVector<double>(), (std::vector<double>{9, 8, 7, 6}));
  EXPECT_EQ(Add(Tensor(1.0), Tensor(2.0)).shape(), Shape{});
}

TEST(BinaryOpsTest, HigherRankBroadcastMatchesNaiveReference) {
  struct Case {
    Shape x, y, out;
  };
  const std::vector<Case> cases = {{Shape{2, 1, 3}, Shape{4, 1}, Shape{2, 4, 3}},
                                   {Shape{3, 1, 2, 1}, Shape{1, 4, 1, 5}, Shape{3, 4, 2, 5}},
                                   {Shape{1}, Shape{2, 2}, Shape{2, 2}},
                                   {Shape{5, 1}, Shape{5, 7}, Shape{5, 7}},
                                   {Shape{2, 3, 4}, Shape{3, 4}, Shape{2, 3, 4}},
                                   {Shape{0, 3}, Shape{1, 3}, Shape{0, 3}}};
  RandomGenerator rng(3);
  for (const auto& [xs, ys, out] : cases) {
    Tensor x = rng.Uniform(xs, -1, 1, DType::kFloat64);
    Tensor y = rng.Uniform(ys, 1, 2, DType::kFloat64);
    Tensor z = Div(Sub(x, y), y);
    ASSERT_EQ(z.shape(), out);
    std::vector<double> expected =
        NaiveBroadcast(x, y, z.shape(), [](double a, double b) { return (a - b) / b; });
    std::vector<double> got = z.ToVector<double>();
    ASSERT_EQ(got.size(), expected.size()) << xs << " vs " << ys;
    for (size_t i = 0; i < got.size(); ++i) EXPECT_DOUBLE_EQ(got[i], expected[i]) << i;
  }
}

TEST(BinaryOpsTest, IntegerArithmeticTruncatesDivision) {
  Tensor x = Tensor::Vector<int32_t>({7, -7, 9});
  Tensor y = Tensor::Vector<int32_t>({2, 2, 3});
  EXPECT_EQ(Div(x, y).ToVector<int32_t>(), (std::vector<int32_t>{3, -3, 3}));
  EXPECT_EQ(Mul(x, y).dtype(), DType::kInt32);
  EXPECT_EQ(Sub(Tensor::Vector<int64_t>({5}), Tensor::Vector<int64_t>({7})).ToVector<int64_t>(),
            (std::vector<int64_t>{-2}));
  EXPECT_EQ(Maximum(x, y).ToVector<int32_t>(), (std::vector<int32_t>{7, 2, 9}));
}

TEST(BinaryOpsTest, IntegerDivisionByZeroThrows) {
  try {
    Div(Tensor::Vector<int32_t>({1, 2}), Tensor::Vector<int32_t>({1, 0}));
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("division by zero"), HasSubstr("[2]")));
  }
}

TEST(BinaryOpsTest, PowMaximumMinimumMatchStdMath) {
  Tensor x = Tensor::Vector<double>({0.5, 2, 3});
  Tensor y = Tensor::Vector<double>({2, -1, 0.5});
  std::vector<double> p = Pow(x, y).ToVector<double>();
  EXPECT_DOUBLE_EQ(p[0], 0.25);
  EXPECT_DOUBLE_EQ(p[1], 0.5);
  EXPECT_DOUBLE_EQ(p[2], std::sqrt(3.0));
  EXPECT_EQ(Maximum(x, y).ToVector<double>(), (std::vector<double>{2, 2, 3}));
  EXPECT_EQ(Minimum(x, y).ToVector<double>(), (std::vector<double>{0.5, -1, 0.5}));
}

TEST(BinaryOpsTest, EqualReturnsBoolAndBroadcasts) {
  Tensor z = Equal(Tensor::Matrix<int64_t>({{1, 2}, {2, 1}}), Tensor::Vector<int64_t>({1, 1}));
  EXPECT_EQ(z.dtype(), DType::kBool);
  EXPECT_EQ(z.ToVector<bool>(), (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(Equal(Tensor(true), Tensor::Vector<bool>({true, false})).ToVector<bool>(),
            (std::vector<bool>{true, false}));
  EXPECT_EQ(kEqualOp.gradient, nullptr);
}

TEST(BinaryOpsTest, MaximumTieSendsGradientToX) {
  Tensor x = Tensor::Vector<double>({1, 2, 3});
  Tensor y = Tensor::Vector<double>({1, 5, 0});
  OpCall call{&kMaximumOp, {x, y}, Maximum(x, y), {}};
  auto grads = kMaximumOp.gradient(call, Tensor::Vector<double>({1, 1, 1}));
  EXPECT_EQ(grads[0]->ToVector<double>(), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(grads[1]->ToVector<double>(), (std::vector<double>{0, 1, 0}));
}

TEST(BinaryOpsTest, BroadcastGradientIsSummedToInputShape) {
  Tensor x = Tensor::Matrix<float>({{1, 2, 3}, {4, 5, 6}});
  Tensor b = Tensor::Vector<float>({0, 0, 0});
  OpCall call{&kAddOp, {x, b}, Add(x, b), {}};
  auto grads = kAddOp.gradient(call, Tensor::Matrix<float>({{1, 2, 3}, {10, 20, 30}}));
  EXPECT_EQ(grads[0]->shape(), (Shape{2, 3}));
  EXPECT_EQ(grads[1]->shape(), (Shape{3}));
  EXPECT_EQ(grads[1]->ToVector<float>(), (std::vector<float>{11, 22, 33}));
}

TEST(BinaryOpsTest, IncompatibleShapesThrowNamingBoth) {
  try {
    Add(Tensor::Zeros(Shape{2, 3}), Tensor::Zeros(Shape{4}));
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("AddV2"), HasSubstr("[2,3]"), HasSubstr("[4]")));
  }
}

TEST(BinaryOpsTest, DtypeMismatchThrowsNamingBoth) {
  try {
    Mul(Tensor::Zeros(Shape{2}, DType::kFloat32), Tensor::Zeros(Shape{2}, DType::kFloat64));
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("Mul"), HasSubstr("float32"), HasSubstr("float64"),
                                HasSubstr("[2]")));
  }
}

TEST(BinaryOpsTest, UnsupportedDtypeThrows) {
  EXPECT_THROW(Pow(Tensor::Vector<int32_t>({2}), Tensor::Vector<int32_t>({3})),
               InvalidArgumentError);
  try {
    Add(Tensor(true), Tensor(false));
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("AddV2"), HasSubstr("bool")));
  }
}

TEST(BinaryOpsTest, OutputsAreFreshTensors) {
  Tensor x = Tensor::Vector<float>({1});
  Tensor a = Add(x, x);
  Tensor b = Add(x, x);
  EXPECT_NE(a.id(), b.id());
  EXPECT_NE(a.id(), x.id());
}

}  // namespace
}  // namespace eager
