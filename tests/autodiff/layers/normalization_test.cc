// layers::BatchNormalization and layers::LayerNormalization (autodiff/layers/normalization.h)
// against references computed here in double from Keras's formulas, and
// their gradients against central finite differences (float64).

#include "autodiff/layers/normalization.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/gradient_tape.h"
#include "autodiff/sequential.h"
#include "ops/binary_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "runtime/errors.h"

namespace eager {
namespace {

std::vector<double> ToDouble(const Tensor& t) {
  std::vector<double> out;
  if (t.dtype() == DType::kFloat64) return t.ToVector<double>();
  for (float v : t.data<float>()) out.push_back(v);
  return out;
}

// Column statistics of a [rows, c] matrix (every axis but the last folded
// into rows): mean and biased variance per column.
void Moments(const std::vector<double>& x, int64_t c, std::vector<double>& mean,
             std::vector<double>& var) {
  const int64_t rows = static_cast<int64_t>(x.size()) / c;
  mean.assign(c, 0.0);
  var.assign(c, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < c; ++j) mean[j] += x[r * c + j] / rows;
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < c; ++j)
      var[j] += (x[r * c + j] - mean[j]) * (x[r * c + j] - mean[j]) / rows;
  }
}

std::vector<double> BatchNormReference(const std::vector<double>& x, int64_t c,
                                       const std::vector<double>& mean,
                                       const std::vector<double>& var,
                                       const std::vector<double>& gamma,
                                       const std::vector<double>& beta, double eps) {
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t j = i % c;
    y[i] = (x[i] - mean[j]) / std::sqrt(var[j] + eps) * gamma[j] + beta[j];
  }
  return y;
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

Tensor Vec(const std::vector<double>& v, DType dtype = DType::kFloat32) {
  if (dtype == DType::kFloat64) return Tensor::FromVector<double>(v);
  std::vector<float> f(v.begin(), v.end());
  return Tensor::FromVector<float>(f);
}

TEST(BatchNormalizationTest, InferenceUsesTheMovingStatistics) {
  layers::BatchNormalization bn;
  const Tensor x = RandomNormal(Shape{2, 3, 4}, 11, 1.0, 2.0);
  bn(x);  // build
  const std::vector<double> mean = {0.5, -1.0, 0.25, 2.0}, var = {1.5, 0.5, 4.0, 0.1};
  const std::vector<double> gamma = {1.0, 2.0, -0.5, 0.75}, beta = {0.0, 0.1, -0.2, 3.0};
  bn.moving_mean().Assign(Vec(mean));
  bn.moving_variance().Assign(Vec(var));
  bn.gamma()->Assign(Vec(gamma));
  bn.beta()->Assign(Vec(beta));
  const std::vector<double> want = BatchNormReference(ToDouble(x), 4, mean, var, gamma, beta, 1e-3);
  ExpectNear(ToDouble(bn(x)), want, 2e-6);
  ExpectNear(ToDouble(bn(x, false)), want, 2e-6);
  // Inference updates nothing.
  ExpectNear(ToDouble(bn.moving_mean().value()), mean, 0);
}

TEST(BatchNormalizationTest, TrainingUsesBatchStatisticsAndUpdatesMovingOnes) {
  layers::BatchNormalization bn(/*momentum=*/0.9, /*epsilon=*/1e-2);
  const Tensor x = RandomNormal(Shape{5, 2, 3}, 12, 0.5, 3.0);
  const std::vector<double> xs = ToDouble(x);
  std::vector<double> mean, var;
  Moments(xs, 3, mean, var);
  const Tensor y = bn(x, /*training=*/true);
  ASSERT_EQ(y.shape(), x.shape());
  ExpectNear(ToDouble(y), BatchNormReference(xs, 3, mean, var, {1, 1, 1}, {0, 0, 0}, 1e-2), 2e-5);
  std::vector<double> want_mean(3), want_var(3);
  for (int j = 0; j < 3; ++j) {
    want_mean[j] = 0.0 * 0.9 + mean[j] * 0.1;
    want_var[j] = 1.0 * 0.9 + var[j] * 0.1;  // the biased variance, as Keras 3
  }
  ExpectNear(ToDouble(bn.moving_mean().value()), want_mean, 1e-6);
  ExpectNear(ToDouble(bn.moving_variance().value()), want_var, 1e-5);
}

TEST(BatchNormalizationTest, DefaultsNamesAndEdges) {
  layers::BatchNormalization bn;
  EXPECT_EQ(bn.name().rfind("batch_normalization", 0), 0u);
  EXPECT_EQ(bn.momentum(), 0.99);
  EXPECT_EQ(bn.epsilon(), 1e-3);
  EXPECT_THROW(bn.gamma(), FailedPreconditionError);
  bn(Tensor::Zeros(Shape{2, 3}, DType::kFloat64));
  EXPECT_EQ(bn.gamma()->name(), bn.name() + "/gamma:0");
  EXPECT_EQ(bn.moving_variance().name(), bn.name() + "/moving_variance:0");
  EXPECT_EQ(bn.gamma()->dtype(), DType::kFloat64);
  EXPECT_EQ(ToDouble(bn.gamma()->value()), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(ToDouble(bn.beta()->value()), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(ToDouble(bn.moving_mean().value()), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(ToDouble(bn.moving_variance().value()), (std::vector<double>{1, 1, 1}));
  std::vector<std::string> edges;
  for (const auto& c : bn.Children()) edges.push_back(c.name);
  EXPECT_EQ(edges, (std::vector<std::string>{"gamma", "beta", "moving_mean", "moving_variance"}));
  EXPECT_EQ(bn.TrainableVariables().size(), 2u);
  EXPECT_EQ(bn.NonTrainableVariables().size(), 2u);
  layers::BatchNormalization second;
  EXPECT_NE(second.name(), bn.name());
  EXPECT_EQ(second.name().rfind("batch_normalization_", 0), 0u);
  layers::BatchNormalization bare(0.99, 1e-3, /*center=*/false, /*scale=*/false);
  bare(Tensor::Zeros(Shape{2, 3}));
  EXPECT_EQ(bare.gamma(), nullptr);
  EXPECT_EQ(bare.beta(), nullptr);
  EXPECT_EQ(bare.Variables().size(), 2u);
}

TEST(BatchNormalizationTest, BadInputsNameTheLayer) {
  layers::BatchNormalization bn(0.99, 1e-3, true, true, "bn_named");
  EXPECT_EQ(bn.name(), "bn_named");
  EXPECT_THROW(bn(Tensor::Zeros(Shape{3})), InvalidArgumentError);
  bn(Tensor::Zeros(Shape{2, 3}));
  try {
    bn(Tensor::Zeros(Shape{2, 4}));
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("bn_named"), std::string::npos) << e.what();
  }
  EXPECT_THROW(bn(Tensor::Zeros(Shape{2, 3}, DType::kFloat64)), InvalidArgumentError);
  EXPECT_THROW(layers::BatchNormalization(1.5), InvalidArgumentError);
  EXPECT_THROW(bn.Build(3), FailedPreconditionError);
}

// Central differences of loss(x, gamma, beta) = sum(y * w), w fixed, in
// float64, against the tape's gradients.
template <typename L>
void CheckGradients(L& layer, const Tensor& x, bool training, Variable* gamma, Variable* beta) {
  const Tensor w = RandomNormal(x.shape(), 99, 0.0, 1.0, DType::kFloat64);
  auto loss = [&](const Tensor& input) {
    return ToDouble(ReduceSum(Mul(layer(input, training), w)))[0];
  };
  GradientTape tape2;
  tape2.Watch(x);
  const Tensor l2 = ReduceSum(Mul(layer(x, training), w));
  auto gx = tape2.Gradient(l2, {x});
  GradientTape tape3;
  const Tensor l3 = ReduceSum(Mul(layer(x, training), w));
  const std::vector<const Variable*> vars = {gamma, beta};
  auto gv = tape3.Gradient(l3, vars);
  ASSERT_TRUE(gx[0] && gv[0] && gv[1]);
  const double h = 1e-6;
  std::vector<double> xs = ToDouble(x);
  const std::vector<double> got_x = ToDouble(*gx[0]);
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<double> p = xs, m = xs;
    p[i] += h;
    m[i] -= h;
    const double fd = (loss(Tensor::FromVector<double>(p, x.shape())) -
                       loss(Tensor::FromVector<double>(m, x.shape()))) /
                      (2 * h);
    EXPECT_NEAR(got_x[i], fd, 1e-6 * (1 + std::abs(fd))) << "d/dx at " << i;
  }
  for (int v = 0; v < 2; ++v) {
    Variable* var = v == 0 ? gamma : beta;
    const std::vector<double> base = ToDouble(var->value());
    const std::vector<double> got = ToDouble(*gv[v]);
    for (size_t j = 0; j < base.size(); ++j) {
      std::vector<double> p = base, m = base;
      p[j] += h;
      m[j] -= h;
      var->Assign(Tensor::FromVector<double>(p));
      const double lp = loss(x);
      var->Assign(Tensor::FromVector<double>(m));
      const double lm = loss(x);
      var->Assign(Tensor::FromVector<double>(base));
      const double fd = (lp - lm) / (2 * h);
      EXPECT_NEAR(got[j], fd, 1e-6 * (1 + std::abs(fd))) << (v == 0 ? "gamma" : "beta") << j;
    }
  }
}

TEST(BatchNormalizationTest, TrainingGradientsMatchFiniteDifferences) {
  layers::BatchNormalization bn;
  const Tensor x = RandomNormal(Shape{4, 2, 3}, 21, 0.3, 1.7, DType::kFloat64);
  bn(x);
  bn.gamma()->Assign(Tensor::FromVector<double>({0.5, -1.5, 2.0}));
  bn.beta()->Assign(Tensor::FromVector<double>({0.1, 0.2, -0.3}));
  CheckGradients(bn, x, /*training=*/true, bn.gamma(), bn.beta());
}

TEST(BatchNormalizationTest, InferenceGradientsMatchFiniteDifferences) {
  layers::BatchNormalization bn;
  const Tensor x = RandomNormal(Shape{3, 4}, 22, 0.3, 1.7, DType::kFloat64);
  bn(x);
  bn.moving_mean().Assign(Tensor::FromVector<double>({0.1, -0.2, 0.3, 0.0}));
  bn.moving_variance().Assign(Tensor::FromVector<double>({2.0, 0.5, 1.0, 3.0}));
  CheckGradients(bn, x, /*training=*/false, bn.gamma(), bn.beta());
}

TEST(BatchNormalizationTest, SequentialTrainsItsBatchNormalization) {
  Sequential model;
  auto owned = std::make_unique<layers::BatchNormalization>(0.5);
  layers::BatchNormalization* bn = owned.get();
  model.Add(std::move(owned));
  const Tensor x = Tensor::FromVector<float>({1, 2, 3, 5}, Shape{2, 2});
  model(x);
  EXPECT_EQ(ToDouble(bn->moving_mean().value()), (std::vector<double>{0, 0}));
  model(x, /*training=*/true);
  EXPECT_EQ(ToDouble(bn->moving_mean().value()), (std::vector<double>{1.0, 1.75}));
}

TEST(LayerNormalizationTest, NormalizesEachPositionOverTheLastAxis) {
  layers::LayerNormalization ln;
  EXPECT_EQ(ln.name().rfind("layer_normalization", 0), 0u);
  const Tensor x = RandomNormal(Shape{2, 3, 5}, 31, 1.0, 2.0);
  ln(x);
  const std::vector<double> gamma = {1.0, 2.0, -0.5, 0.75, 1.5}, beta = {0, 0.1, -0.2, 3, 1};
  ln.gamma()->Assign(Vec(gamma));
  ln.beta()->Assign(Vec(beta));
  const std::vector<double> xs = ToDouble(x);
  std::vector<double> want(xs.size());
  for (size_t r = 0; r < xs.size() / 5; ++r) {
    std::vector<double> row(xs.begin() + r * 5, xs.begin() + r * 5 + 5), mean, var;
    Moments(row, 1, mean, var);  // c = 1: mean[0] over the 5 entries
    for (int j = 0; j < 5; ++j) {
      want[r * 5 + j] = (row[j] - mean[0]) / std::sqrt(var[0] + 1e-3) * gamma[j] + beta[j];
    }
  }
  ExpectNear(ToDouble(ln(x)), want, 2e-5);
  ExpectNear(ToDouble(ln(x, true)), want, 2e-5);
  EXPECT_EQ(ln.gamma()->name(), ln.name() + "/gamma:0");
  std::vector<std::string> edges;
  for (const auto& c : ln.Children()) edges.push_back(c.name);
  EXPECT_EQ(edges, (std::vector<std::string>{"gamma", "beta"}));
  EXPECT_THROW(ln(Tensor::Zeros(Shape{2, 4})), InvalidArgumentError);
}

TEST(LayerNormalizationTest, GradientsMatchFiniteDifferences) {
  layers::LayerNormalization ln;
  const Tensor x = RandomNormal(Shape{3, 4}, 32, 0.3, 1.7, DType::kFloat64);
  ln(x);
  ln.gamma()->Assign(Tensor::FromVector<double>({0.5, -1.5, 2.0, 1.0}));
  ln.beta()->Assign(Tensor::FromVector<double>({0.1, 0.2, -0.3, 0.0}));
  CheckGradients(ln, x, /*training=*/true, ln.gamma(), ln.beta());
}

}  // namespace
}  // namespace eager
