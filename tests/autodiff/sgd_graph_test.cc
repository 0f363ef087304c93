// TF1 GradientDescentOptimizer and MomentumOptimizer in graph mode
// (SGD::Minimize(loss) with tf1_compatible): TF's node names, ops and
// attributes (training/gradient_descent.py and momentum.py: ApplyGradientDescent,
// ApplyMomentum with use_nesterov, slot "<v>/Momentum"), and the variables
// after steps on batches of 2 and 5 (Placeholder [-1, 3]) equal an
// independent double-precision evaluation of TF's published updates
// (training_ops.cc): var -= lr * g; accum = accum * m + g, var -= lr * accum,
// or with Nesterov var -= g * lr + accum * m * lr. On resource variables
// (Graph::UseResourceVariables, as an imported TF 2.x graph's) the same
// steps are ResourceApplyGradientDescent / ResourceApplyMomentum nodes on
// VarHandleOp variables and slots.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <vector>

#include "autodiff/gradient_tape.h"
#include "autodiff/sgd.h"
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

Matrix Batch(int rows, int seed) {
  Matrix x(static_cast<size_t>(rows), std::vector<double>(3));
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < 3; ++c) x[r][c] = std::cos(seed * 1.3 + r * 0.7 + c * 0.5) * 1.2;
  }
  return x;
}

Tensor ToTensor(const Matrix& x) {
  std::vector<float> v;
  for (const auto& row : x) v.insert(v.end(), row.begin(), row.end());
  return Tensor::FromVector<float>(std::move(v), Shape{static_cast<int64_t>(x.size()), 3});
}

// loss = mean((x w + b)^2) over [n, 2].
void LossGradients(const Matrix& x, const std::vector<double>& w, const std::vector<double>& b,
                   std::vector<double>& gw, std::vector<double>& gb) {
  const double n = static_cast<double>(x.size());
  gw.assign(6, 0.0);
  gb.assign(2, 0.0);
  for (const auto& row : x) {
    for (int j = 0; j < 2; ++j) {
      double y = b[j];
      for (int k = 0; k < 3; ++k) y += row[k] * w[k * 2 + j];
      const double dy = y / n;
      gb[j] += dy;
      for (int k = 0; k < 3; ++k) gw[k * 2 + j] += row[k] * dy;
    }
  }
}

constexpr double kLr = 0.1;
constexpr double kMomentum = 0.9;

// TF's kernels; momentum 0 is plain gradient descent.
void Step(std::vector<double>& var, std::vector<double>& accum, const std::vector<double>& g,
          double momentum, bool nesterov) {
  accum.resize(var.size(), 0.0);
  for (size_t i = 0; i < var.size(); ++i) {
    if (momentum == 0.0) {
      var[i] -= kLr * g[i];
      continue;
    }
    accum[i] = accum[i] * momentum + g[i];
    var[i] -= nesterov ? g[i] * kLr + accum[i] * momentum * kLr : kLr * accum[i];
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

struct Case {
  double momentum;
  bool nesterov;
  bool resource = false;  // resource variables: ResourceApply* and resource slots
};

class SgdGraphTest : public ::testing::TestWithParam<Case> {};

TEST_P(SgdGraphTest, MinimizeWritesTfNodesAndFollowsTfFormulas) {
  const Case c = GetParam();
  ResetDefaultNames();
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1, 3}), "x");
  std::vector<float> w0(kW0.begin(), kW0.end()), b0(kB0.begin(), kB0.end());
  std::optional<Graph::UseResourceVariables> resource;
  if (c.resource) resource.emplace(graph);
  Variable w(Tensor::FromVector<float>(w0, Shape{3, 2}), "w");
  Variable b(Tensor::FromVector<float>(b0), "b");
  resource.reset();  // the optimizer makes the slots as their variables are
  EXPECT_EQ(graph.FindNode("w")->op, c.resource ? "VarHandleOp" : "VariableV2");
  const Tensor loss = ReduceMean(Square(BiasAdd(MatMul(x, w.value()), b.value())));
  SGDOptions options;
  options.learning_rate = kLr;
  options.momentum = c.momentum;
  options.nesterov = c.nesterov;
  options.tf1_compatible = true;
  SGD sgd(options);
  const Operation train = sgd.Minimize(loss);

  const std::string name = c.momentum == 0.0 ? "GradientDescent" : "Momentum";
  EXPECT_EQ(sgd.name(), name);
  EXPECT_EQ(train.name(), name);
  EXPECT_EQ(graph.node(train.index()).op, "NoOp");
  const std::string op = std::string(c.resource ? "Resource" : "") +
                         (c.momentum == 0.0 ? "ApplyGradientDescent" : "ApplyMomentum");
  const Node* update = graph.FindNode(name + "/update_w/" + op);
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(update->op, op);
  EXPECT_EQ(update->inputs[0], "w");
  EXPECT_EQ(update->attrs.GetType("T"), DType::kFloat32);
  EXPECT_FALSE(update->attrs.GetBool("use_locking"));
  if (c.momentum == 0.0) {
    EXPECT_EQ(update->inputs[1], "GradientDescent/learning_rate");
    EXPECT_EQ(graph.FindNode("w/Momentum"), nullptr);  // no slot
  } else {
    EXPECT_EQ(update->inputs[1], "w/Momentum");
    EXPECT_EQ(update->inputs[2], "Momentum/learning_rate");
    EXPECT_EQ(update->inputs[4], "Momentum/momentum");
    EXPECT_EQ(update->attrs.GetBool("use_nesterov"), c.nesterov);
    ASSERT_NE(graph.FindNode("w/Momentum"), nullptr);
    EXPECT_EQ(graph.FindNode("w/Momentum")->op, c.resource ? "VarHandleOp" : "VariableV2");
  }
  // No variables of its own: only w, b and the slots.
  EXPECT_EQ(graph.GlobalVariables().size(), c.momentum == 0.0 ? 2u : 4u);

  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  std::vector<double> want_w = kW0, want_b = kB0, aw, ab, gw, gb;
  for (const auto& [rows, seed] : {std::pair{2, 1}, std::pair{5, 2}, std::pair{5, 3}}) {
    const Matrix batch = Batch(rows, seed);
    sess.Run({train}, {{x, ToTensor(batch)}});
    LossGradients(batch, want_w, want_b, gw, gb);
    Step(want_w, aw, gw, c.momentum, c.nesterov);
    Step(want_b, ab, gb, c.momentum, c.nesterov);
    ExpectNear(sess.Run(w.value()), want_w, "w");
    ExpectNear(sess.Run(b.value()), want_b, "b");
  }
}

INSTANTIATE_TEST_SUITE_P(Tf1, SgdGraphTest,
                         ::testing::Values(Case{0.0, false}, Case{kMomentum, false},
                                           Case{kMomentum, true}, Case{0.0, false, true},
                                           Case{kMomentum, false, true},
                                           Case{kMomentum, true, true}),
                         [](const auto& info) {
                           const std::string kind = info.param.momentum == 0.0 ? "GradientDescent"
                                                    : info.param.nesterov      ? "Nesterov"
                                                                               : "Momentum";
                           return info.param.resource ? "Resource" + kind : kind;
                         });

// The eager step of a tf1_compatible SGD runs the same TF1 formulas.
TEST(SgdTf1EagerTest, StepsFollowTfMomentumFormula) {
  ResetDefaultNames();
  Variable v(Tensor::Vector<float>({1.0f, -2.0f}), "v");
  SGDOptions options;
  options.learning_rate = kLr;
  options.momentum = kMomentum;
  options.tf1_compatible = true;
  SGD sgd(options);
  std::vector<double> want = {1.0, -2.0}, accum;
  for (int step = 0; step < 3; ++step) {
    // loss = sum(v^2): g = 2 v.
    std::vector<double> g = {2 * want[0], 2 * want[1]};
    sgd.Minimize([&] { return ReduceSum(Square(v.value())); }, {&v});
    Step(want, accum, g, kMomentum, false);
    ExpectNear(v.value(), want, "v");
  }
  ASSERT_NE(sgd.GetSlot(v, "momentum"), nullptr);
  EXPECT_EQ(sgd.GetSlot(v, "momentum")->shared_name(), "v/Momentum");
  SGDOptions keras = options;
  keras.tf1_compatible = false;
  SGD keras_sgd(keras);
  EXPECT_THROW(keras_sgd.Minimize(Tensor(1.0f)), FailedPreconditionError);
  options.decay = 0.1;
  EXPECT_THROW(SGD{options}, InvalidArgumentError);
}

}  // namespace
}  // namespace eager
