// Graph gradients where the batch dimension is unknown when the graph is
// built (Placeholder [-1, 3]), as TF's: math_grad.py's _SumGrad / _MeanGrad
// read the input's shape with array_ops.shape (a "Shape" node) when it is
// not fully defined, and gradients_util builds the seed from
// array_ops.shape(y) for a target of unknown shape. The same graph then
// trains on batches of any size; the variables after steps on batches of 2
// and 5 equal an independent double-precision evaluation of TF1 Adam's
// published update (AdamOptimizer's docstring, training_ops ApplyAdam).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "autodiff/adam.h"
#include "autodiff/graph_gradients.h"
#include "ops/graph_ops.h"
#include "ops/matmul.h"
#include "ops/nn_ops.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/names.h"

namespace eager {
namespace {

using Matrix = std::vector<std::vector<double>>;

// A batch of `rows` rows of 3 features, values from `seed`.
Matrix Batch(int rows, int seed) {
  Matrix x(static_cast<size_t>(rows), std::vector<double>(3));
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < 3; ++c) x[r][c] = std::sin(seed * 1.7 + r * 0.9 + c * 0.4) * 1.5;
  }
  return x;
}

Tensor ToTensor(const Matrix& x) {
  std::vector<float> v;
  for (const auto& row : x) v.insert(v.end(), row.begin(), row.end());
  return Tensor::FromVector<float>(std::move(v), Shape{static_cast<int64_t>(x.size()), 3});
}

// loss = mean((x w + b)^2) over [n, 2]: dL/dy = 2 y / (2 n); dw = x^T dy;
// db = column sums of dy.
void Gradients(const Matrix& x, const std::vector<double>& w, const std::vector<double>& b,
               std::vector<double>& gw, std::vector<double>& gb) {
  const double n = static_cast<double>(x.size());
  gw.assign(6, 0.0);
  gb.assign(2, 0.0);
  for (const auto& row : x) {
    for (int j = 0; j < 2; ++j) {
      double y = b[j];
      for (int k = 0; k < 3; ++k) y += row[k] * w[k * 2 + j];
      const double dy = 2.0 * y / (2.0 * n);
      gb[j] += dy;
      for (int k = 0; k < 3; ++k) gw[k * 2 + j] += row[k] * dy;
    }
  }
}

struct AdamState {
  std::vector<double> m, v;
};

// TF1 Adam, step t (1-based): lr_t = lr sqrt(1 - b2^t) / (1 - b1^t);
// m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; var -= lr_t m / (sqrt(v) + eps).
void AdamStep(std::vector<double>& var, AdamState& s, const std::vector<double>& g, int t) {
  const double lr = 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  const double lr_t = lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
  s.m.resize(var.size(), 0.0);
  s.v.resize(var.size(), 0.0);
  for (size_t i = 0; i < var.size(); ++i) {
    s.m[i] = b1 * s.m[i] + (1 - b1) * g[i];
    s.v[i] = b2 * s.v[i] + (1 - b2) * g[i] * g[i];
    var[i] -= lr_t * s.m[i] / (std::sqrt(s.v[i]) + eps);
  }
}

void ExpectNear(const Tensor& got, const std::vector<double>& want, const char* what) {
  const std::vector<float> g = got.ToVector<float>();
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(g[i], want[i], 1e-5 * (1 + std::abs(want[i]))) << what << "[" << i << "]";
  }
}

const std::vector<double> kW0 = {0.5, -0.3, 0.2, 0.8, -0.6, 0.1};
const std::vector<double> kB0 = {0.05, -0.2};

TEST(GraphUnknownBatchTest, MinimizeTrainsOnBatchesOfTwoAndFiveAsTheFormulasSay) {
  ResetDefaultNames();
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1, 3}), "x");
  std::vector<float> w0(kW0.begin(), kW0.end()), b0(kB0.begin(), kB0.end());
  Variable w(Tensor::FromVector<float>(w0, Shape{3, 2}), "w");
  Variable b(Tensor::FromVector<float>(b0), "b");
  const Tensor loss = ReduceMean(Square(BiasAdd(MatMul(x, w.value()), b.value())));
  AdamOptions options;
  options.learning_rate = 0.1;
  options.tf1_compatible = true;
  Adam adam(options);
  const Operation train = adam.Minimize(loss, {&w, &b});
  // The Mean's gradient reads x's batch size from a Shape node.
  bool has_shape = false;
  for (int i = 0; i < graph.num_nodes(); ++i) {
    const Node& node = graph.node(i);
    if (node.op == "Shape" && node.name.starts_with("gradients/")) has_shape = true;
  }
  EXPECT_TRUE(has_shape);

  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  std::vector<double> want_w = kW0, want_b = kB0, gw, gb;
  AdamState sw, sb;
  int t = 0;
  for (const auto& [rows, seed] : {std::pair{2, 1}, std::pair{5, 2}, std::pair{2, 3}}) {
    const Matrix batch = Batch(rows, seed);
    sess.Run({train}, {{x, ToTensor(batch)}});
    Gradients(batch, want_w, want_b, gw, gb);
    ++t;
    AdamStep(want_w, sw, gw, t);
    AdamStep(want_b, sb, gb, t);
    ExpectNear(sess.Run(w.value()), want_w, "w");
    ExpectNear(sess.Run(b.value()), want_b, "b");
  }
}

TEST(GraphUnknownBatchTest, GradientsOfATargetOfUnknownShapeSeedFromItsShape) {
  ResetDefaultNames();
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1, 3}), "x");
  std::vector<float> w0(kW0.begin(), kW0.end());
  Variable w(Tensor::FromVector<float>(w0, Shape{3, 2}), "w");
  // Target [?, 2]: d(sum of its elements)/dw = x^T ones = column sums of x, repeated.
  const Tensor y = MatMul(x, w.value());
  const std::vector<std::optional<Tensor>> g = ::eager::Gradients(y, {&w});
  ASSERT_TRUE(g[0].has_value());
  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  const Matrix batch = Batch(5, 4);
  std::vector<double> want(6, 0.0);
  for (const auto& row : batch) {
    for (int k = 0; k < 3; ++k) want[k * 2] += row[k], want[k * 2 + 1] += row[k];
  }
  ExpectNear(sess.Run(*g[0], {{x, ToTensor(batch)}}), want, "dw");
}

}  // namespace
}  // namespace eager
