#include "ops/unary_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace eager {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

const std::vector<double> kInputs = {-2.5, -0.5, 0.25, 1.0, 3.0};

template <typename F>
std::vector<double> Map(F f) {
  std::vector<double> out;
  out.reserve(kInputs.size());
  for (double v : kInputs) out.push_back(f(v));
  return out;
}

void ExpectNear(const Tensor& t, const std::vector<double>& expected, double tol = 1e-14) {
  std::vector<double> got = t.ToVector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], tol) << i;
}

TEST(UnaryOpsTest, MatchStdMathInFloat64) {
  Tensor x = Tensor::FromVector<double>(kInputs);
  ExpectNear(Neg(x), Map([](double v) { return -v; }));
  ExpectNear(Exp(x), Map([](double v) { return std::exp(v); }), 1e-13);
  ExpectNear(Square(x), Map([](double v) { return v * v; }));
  ExpectNear(Relu(x), Map([](double v) { return v > 0 ? v : 0.0; }));
  ExpectNear(Sigmoid(x), Map([](double v) { return 1 / (1 + std::exp(-v)); }), 1e-15);
  ExpectNear(Tanh(x), Map([](double v) { return std::tanh(v); }), 1e-15);
  Tensor positive = Tensor::Vector<double>({0.25, 1, 4});
  ExpectNear(Log(positive), {std::log(0.25), 0, std::log(4.0)});
  ExpectNear(Sqrt(positive), {0.5, 1, 2});
}

TEST(UnaryOpsTest, MatchStdMathInFloat32) {
  Tensor x = Tensor::Vector<float>({-3, -0.5f, 0.5f, 2, 8});
  std::vector<float> e = Exp(x).ToVector<float>();
  std::vector<float> t = Tanh(x).ToVector<float>();
  std::vector<float> s = Sigmoid(x).ToVector<float>();
  auto xs = x.data<float>();
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_NEAR(e[i], std::exp(xs[i]), 1e-6 * std::exp(xs[i]));
    EXPECT_NEAR(t[i], std::tanh(xs[i]), 1e-6);
    EXPECT_NEAR(s[i], 1 / (1 + std::exp(-xs[i])), 1e-6);
  }
}

// TF's Sqrt is correctly rounded; Eigen's fast AVX-512 sqrt was 1-2 bits off
// (sqrt(49) = 7.0000005), which tests/tf_graphs found against TF.
TEST(UnaryOpsTest, SqrtIsCorrectlyRoundedInFloat32) {
  std::vector<float> x;
  x.reserve(4097);
  for (int i = 0; i < 4096; ++i) x.push_back(0.37f * static_cast<float>(i) + 1e-3f);
  x.push_back(49.0f);
  const std::vector<float> got = Sqrt(Tensor::FromVector(x)).ToVector<float>();
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(got[i], std::sqrt(x[i])) << "sqrt(" << x[i] << ")";
}

TEST(UnaryOpsTest, NegAndSquareAcceptIntegers) {
  EXPECT_EQ(Neg(Tensor::Vector<int32_t>({1, -2})).ToVector<int32_t>(),
            (std::vector<int32_t>{-1, 2}));
  EXPECT_EQ(Square(Tensor::Vector<int64_t>({3, -4})).ToVector<int64_t>(),
            (std::vector<int64_t>{9, 16}));
}

TEST(UnaryOpsTest, FloatOpsRejectIntegersNamingOpAndDtype) {
  try {
    Exp(Tensor::Vector<int32_t>({1}));
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("Exp"), HasSubstr("int32"), HasSubstr("[1]")));
  }
}

TEST(UnaryOpsTest, ReluGradientIsZeroAtZero) {
  Tensor x = Tensor::Vector<double>({-1, 0, 2});
  OpCall call{&kReluOp, {x}, Relu(x), {}};
  auto grads = kReluOp.gradient(call, Tensor::Vector<double>({5, 5, 5}));
  EXPECT_EQ(grads[0]->ToVector<double>(), (std::vector<double>{0, 0, 5}));
}

TEST(UnaryOpsTest, StopGradientIsIdentityWithoutGradient) {
  Tensor x = Tensor::Vector<float>({1, 2});
  Tensor y = StopGradient(x);
  EXPECT_EQ(y.ToVector<float>(), x.ToVector<float>());
  EXPECT_NE(y.id(), x.id());
  OpCall call{&kStopGradientOp, {x}, y, {}};
  auto grads = kStopGradientOp.gradient(call, Tensor::Vector<float>({1, 1}));
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_FALSE(grads[0].has_value());
}

TEST(UnaryOpsTest, PreventGradientIsIdentityWhoseGradientIsAnError) {
  const Tensor x = Tensor::Vector<float>({1, 2});
  const Tensor y = PreventGradient(x, "no second derivative here");
  EXPECT_EQ(y.ToVector<float>(), x.ToVector<float>());
  const OpCall call{&kPreventGradientOp, {x}, y, Attrs{{"message", std::string("no second")}}};
  std::string error;
  try {
    kPreventGradientOp.gradient(call, Tensor::Vector<float>({1, 1}));
  } catch (const InvalidArgumentError& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("Gradient explicitly disabled"), std::string::npos) << error;
  EXPECT_NE(error.find("Reason: no second"), std::string::npos) << error;
}

TEST(UnaryOpsTest, ReluGradSelectsWherePositive) {
  Tensor g = ReluGrad(Tensor::Vector<float>({1, 2, 3}), Tensor::Vector<float>({-1, 0, 4}));
  EXPECT_EQ(g.ToVector<float>(), (std::vector<float>{0, 0, 3}));
  EXPECT_THROW(ReluGrad(Tensor::Vector<float>({1}), Tensor::Vector<float>({1, 2})),
               InvalidArgumentError);
}

}  // namespace
}  // namespace eager
