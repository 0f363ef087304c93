// Graph gradients of broadcasting binary ops whose operands have dimensions
// unknown when the graph is built (Placeholders [-1, k]): which axes a
// gradient is summed over is decided when the graph runs, from
// BroadcastGradientArgs(Shape(x), Shape(y)), as TF's math_grad does. The
// same graph trains on steps where a different operand has a batch of one
// (x fed 1 row against 5-row targets, then 5 against 1-row weights, then 2
// against 1-row targets); the variables after each GradientDescent step
// equal a double-precision reference whose gradient comes from central
// differences of the loss written out with NumPy broadcasting.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "autodiff/graph_gradients.h"
#include "autodiff/sgd.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/matmul.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "ops/shape_ops.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/names.h"

namespace eager {
namespace {

using Matrix = std::vector<std::vector<double>>;

Matrix Rows(int rows, int cols, double seed) {
  Matrix m(static_cast<size_t>(rows), std::vector<double>(static_cast<size_t>(cols)));
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) m[r][c] = std::sin(seed * 1.9 + r * 0.8 + c * 0.45) * 1.3;
  }
  return m;
}

Tensor ToTensor(const Matrix& m) {
  std::vector<float> v;
  for (const auto& row : m) v.insert(v.end(), row.begin(), row.end());
  return Tensor::FromVector<float>(
      std::move(v), Shape{static_cast<int64_t>(m.size()), static_cast<int64_t>(m[0].size())});
}

// The variables W [3, 2], b [2], s [1, 2], flattened in that order.
struct Params {
  std::vector<double> w, b, s;
};

// Row r of a broadcast operand with `rows` rows (1 or the output's).
const std::vector<double>& Row(const Matrix& m, size_t r) { return m[m.size() == 1 ? 0 : r]; }

// loss = mean(maximum(wts * ((x W + b) / s - u)^2, floor)), in double,
// over the broadcast [R, 2].
double Loss(const Params& p, const Matrix& x, const Matrix& u, const Matrix& wts,
            const Matrix& floor) {
  const size_t rows = std::max({x.size(), u.size(), wts.size(), floor.size()});
  double total = 0;
  for (size_t r = 0; r < rows; ++r) {
    for (int j = 0; j < 2; ++j) {
      double a = p.b[j];
      for (int k = 0; k < 3; ++k) a += Row(x, r)[k] * p.w[k * 2 + j];
      const double d = a / p.s[j] - Row(u, r)[j];
      total += std::max(Row(wts, r)[0] * d * d, Row(floor, r)[0]);
    }
  }
  return total / static_cast<double>(rows * 2);
}

// Central differences of Loss over every parameter.
Params NumericGradient(Params p, const std::function<double(const Params&)>& loss) {
  Params g = p;
  for (std::vector<double>* v : {&p.w, &p.b, &p.s}) {
    std::vector<double>& out = v == &p.w ? g.w : v == &p.b ? g.b : g.s;
    for (size_t i = 0; i < v->size(); ++i) {
      const double keep = (*v)[i];
      const double h = 1e-6;
      (*v)[i] = keep + h;
      const double up = loss(p);
      (*v)[i] = keep - h;
      const double down = loss(p);
      (*v)[i] = keep;
      out[i] = (up - down) / (2 * h);
    }
  }
  return g;
}

void ExpectNear(const Tensor& got, const std::vector<double>& want, const char* what) {
  const std::vector<float> g = got.ToVector<float>();
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(g[i], want[i], 2e-5 * (1 + std::abs(want[i]))) << what << "[" << i << "]";
  }
}

std::vector<float> Floats(const std::vector<double>& v) { return {v.begin(), v.end()}; }

TEST(GraphBroadcastGradientTest, TrainsWhenAnyOperandHasABatchOfOneAtRunTime) {
  ResetDefaultNames();
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1, 3}), "x");
  const Tensor u = Placeholder(DType::kFloat32, Shape::Partial({-1, 2}), "u");
  const Tensor wts = Placeholder(DType::kFloat32, Shape::Partial({-1, 1}), "wts");
  const Tensor floor = Placeholder(DType::kFloat32, Shape::Partial({-1, 1}), "floor");
  Params want{{0.5, -0.3, 0.2, 0.8, -0.6, 0.1}, {0.05, -0.2}, {1.5, 0.8}};
  Variable w(Tensor::FromVector<float>(Floats(want.w), Shape{3, 2}), "w");
  Variable b(Tensor::FromVector<float>(Floats(want.b)), "b");
  Variable s(Tensor::FromVector<float>(Floats(want.s), Shape{1, 2}), "s");
  // [?, 2] - [?, 2], [?, 1] * [?, 2], Maximum([?, 2], [?, 1]): the static
  // shapes cannot say which side a batch of one is on.
  const Tensor d = Sub(Div(Add(MatMul(x, w.value()), b.value()), s.value()), u);
  const Tensor loss = ReduceMean(Maximum(Mul(wts, Square(d)), floor));
  constexpr double kLr = 0.2;
  SGDOptions options;
  options.learning_rate = kLr;
  options.tf1_compatible = true;
  SGD sgd(options);
  const Operation train = sgd.Minimize(loss, {&w, &b, &s});
  int args_nodes = 0;
  for (int i = 0; i < graph.num_nodes(); ++i) {
    if (graph.node(i).op == "BroadcastGradientArgs") ++args_nodes;
  }
  EXPECT_GE(args_nodes, 3);  // Sub, Mul, Maximum; Add's b and Div's s are static

  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  struct Step {
    int x_rows, u_rows, wts_rows;
  };
  int seed = 0;
  for (const Step& step : {Step{1, 5, 5}, Step{5, 5, 1}, Step{2, 1, 2}}) {
    SCOPED_TRACE(StrCat("x rows ", step.x_rows, ", u rows ", step.u_rows));
    ++seed;
    const Matrix xv = Rows(step.x_rows, 3, seed), uv = Rows(step.u_rows, 2, seed + 0.3);
    Matrix wv = Rows(step.wts_rows, 1, seed + 0.6), fv = Rows(step.wts_rows, 1, seed + 0.9);
    for (auto& row : wv) row[0] = 0.5 + std::abs(row[0]);
    for (auto& row : fv) row[0] = 0.3 * std::abs(row[0]);  // some elements below, some above
    const Params g =
        NumericGradient(want, [&](const Params& p) { return Loss(p, xv, uv, wv, fv); });
    sess.Run({train},
             {{x, ToTensor(xv)}, {u, ToTensor(uv)}, {wts, ToTensor(wv)}, {floor, ToTensor(fv)}});
    for (size_t i = 0; i < want.w.size(); ++i) want.w[i] -= kLr * g.w[i];
    for (size_t i = 0; i < want.b.size(); ++i) want.b[i] -= kLr * g.b[i];
    for (size_t i = 0; i < want.s.size(); ++i) want.s[i] -= kLr * g.s[i];
    ExpectNear(sess.Run(w.value()), want.w, "w");
    ExpectNear(sess.Run(b.value()), want.b, "b");
    ExpectNear(sess.Run(s.value()), want.s, "s");
  }
}

// BroadcastTo of a [?, 2] tensor to [4, 2]: the batch is 1 or 4 when the
// graph runs, and the gradient sums over it only when it was 1.
TEST(GraphBroadcastGradientTest, BroadcastToOfAnUnknownBatchSumsWhenItWasOne) {
  ResetDefaultNames();
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1, 3}), "x");
  const std::vector<double> w0 = {0.5, -0.3, 0.2, 0.8, -0.6, 0.1};
  Variable w(Tensor::FromVector<float>(Floats(w0), Shape{3, 2}), "w");
  const Matrix c = Rows(4, 2, 7);
  const Tensor loss = ReduceSum(Mul(BroadcastTo(MatMul(x, w.value()), Shape{4, 2}), ToTensor(c)));
  const std::vector<std::optional<Tensor>> g = ::eager::Gradients(loss, {&w});
  ASSERT_TRUE(g[0].has_value());
  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  for (const int rows : {1, 4}) {
    SCOPED_TRACE(StrCat("rows ", rows));
    const Matrix xv = Rows(rows, 3, rows);
    // d/dW[k][j] of sum_i c[i][j] (x[i or 0] W)[j] = sum_i c[i][j] x[i or 0][k].
    std::vector<double> want(6, 0.0);
    for (size_t i = 0; i < 4; ++i) {
      for (int k = 0; k < 3; ++k) {
        for (int j = 0; j < 2; ++j) want[k * 2 + j] += c[i][j] * Row(xv, i)[k];
      }
    }
    ExpectNear(sess.Run(*g[0], {{x, ToTensor(xv)}}), want, "dw");
  }
}

// The same with the target shape fed at run time, as an int32 or an int64
// tensor (TF's Tidx): x's shape for BroadcastGradientArgs takes the
// target's integer type, as TF's _BroadcastToGrad asks Shape for.
TEST(GraphBroadcastGradientTest, BroadcastToAFedShapeOfEitherIntegerType) {
  for (const DType index_type : {DType::kInt32, DType::kInt64}) {
    SCOPED_TRACE(StrCat("shape dtype ", index_type));
    ResetDefaultNames();
    Graph graph;
    Graph::AsDefault in(graph);
    const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1, 3}), "x");
    const Tensor shape = Placeholder(index_type, Shape{2}, "shape");
    Variable w(Tensor::FromVector<float>(Floats({0.5, -0.3, 0.2, 0.8, -0.6, 0.1}), Shape{3, 2}),
               "w");
    const Matrix c = Rows(4, 2, 7);
    const Tensor loss = ReduceSum(Mul(BroadcastTo(MatMul(x, w.value()), shape), ToTensor(c)));
    const std::vector<std::optional<Tensor>> g = ::eager::Gradients(loss, {&w});
    ASSERT_TRUE(g[0].has_value());
    Session sess(graph);
    sess.Run(GlobalVariablesInitializer());
    const Tensor target = index_type == DType::kInt32 ? Tensor::Vector<int32_t>({4, 2})
                                                      : Tensor::Vector<int64_t>({4, 2});
    for (const int rows : {1, 4}) {
      SCOPED_TRACE(StrCat("rows ", rows));
      const Matrix xv = Rows(rows, 3, rows);
      std::vector<double> want(6, 0.0);
      for (size_t i = 0; i < 4; ++i) {
        for (int k = 0; k < 3; ++k) {
          for (int j = 0; j < 2; ++j) want[k * 2 + j] += c[i][j] * Row(xv, i)[k];
        }
      }
      ExpectNear(sess.Run(*g[0], {{x, ToTensor(xv)}, {shape, target}}), want, "dw");
    }
  }
}

}  // namespace
}  // namespace eager
