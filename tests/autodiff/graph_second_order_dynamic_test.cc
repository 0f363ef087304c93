// Second-order graph gradients through the nodes a first-order gradient adds
// where shapes are unknown until the graph runs: a Sum whose axes come from
// BroadcastGradientArgs, a Reshape to Shape(x); and the gradients of
// reductions whose axes are fed at run time. Against central differences in
// double of the expressions written out.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "autodiff/graph_gradients.h"
#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"

namespace eager {
namespace {

using Rows = std::vector<std::vector<double>>;

// d loss / d w_c written out: sum over the broadcast rows of
// 2 (x w - y) x w + (x w - y)^2, x or y repeated when it has one row.
std::vector<double> FirstGradient(const Rows& x, const Rows& y, const std::vector<double>& w) {
  const size_t rows = std::max(x.size(), y.size());
  std::vector<double> g(3, 0.0);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < 3; ++c) {
      const double xv = x[x.size() == 1 ? 0 : r][c];
      const double d = xv * w[c] - y[y.size() == 1 ? 0 : r][c];
      g[c] += 2 * d * xv * w[c] + d * d;
    }
  }
  return g;
}

Tensor Matrix(const Rows& rows) {
  std::vector<double> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return Tensor::FromVector<double>(flat, Shape{static_cast<int64_t>(rows.size()), 3});
}

// loss = sum((x * w - y)^2 * w) with x, y Placeholders [?, 3] (x - y
// broadcasts either way at run time: the first gradient sums over the axes
// BroadcastGradientArgs finds and reshapes to Shape(x)), w a Variable
// [1, 3]; then d sum(g^2) / dw through those nodes, on batches where x, y or
// neither has one row, against central differences of sum(g^2) with g
// written out.
TEST(GraphSecondOrderDynamicTest, GradientOfAGradientThroughRunTimeAxes) {
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor x = Placeholder(DType::kFloat64, Shape::Partial({-1, 3}), "x");
  const Tensor y = Placeholder(DType::kFloat64, Shape::Partial({-1, 3}), "y");
  const std::vector<double> w0 = {0.7, -1.2, 0.4};
  Variable w(Tensor::FromVector<double>(w0, Shape{1, 3}), "w");
  const Tensor d = Sub(Mul(x, w.value()), y);
  const Tensor loss = ReduceSum(Mul(Square(d), w.value()));
  const std::optional<Tensor> g = ::eager::Gradients(loss, {&w})[0];
  ASSERT_TRUE(g.has_value());
  const std::optional<Tensor> gg = ::eager::Gradients(ReduceSum(Square(*g)), {&w})[0];
  ASSERT_TRUE(gg.has_value());
  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  const std::vector<std::pair<Rows, Rows>> batches = {
      {{{0.5, -0.3, 1.1}}, {{0.2, 0.4, -0.6}, {1.0, -0.8, 0.3}, {-0.5, 0.9, 0.7}}},
      {{{0.5, -0.3, 1.1}, {-0.9, 0.6, 0.2}}, {{0.1, -0.2, 0.3}}},
      {{{0.5, -0.3, 1.1}, {-0.9, 0.6, 0.2}}, {{0.1, -0.2, 0.3}, {0.8, 0.5, -0.4}}}};
  for (const auto& [xs, ys] : batches) {
    SCOPED_TRACE(StrCat(xs.size(), " x rows, ", ys.size(), " y rows"));
    const Feeds feeds = {{x, Matrix(xs)}, {y, Matrix(ys)}};
    const std::vector<double> g_got = sess.Run(*g, feeds).ToVector<double>();
    const std::vector<double> g_want = FirstGradient(xs, ys, w0);
    for (size_t c = 0; c < 3; ++c) EXPECT_NEAR(g_got[c], g_want[c], 1e-12) << "g[" << c << "]";
    const std::vector<double> gg_got = sess.Run(*gg, feeds).ToVector<double>();
    for (size_t c = 0; c < 3; ++c) {
      std::vector<double> up = w0, down = w0;
      up[c] += 1e-6;
      down[c] -= 1e-6;
      double l_up = 0, l_down = 0;
      for (const double v : FirstGradient(xs, ys, up)) l_up += v * v;
      for (const double v : FirstGradient(xs, ys, down)) l_down += v * v;
      const double want = (l_up - l_down) / 2e-6;
      EXPECT_NEAR(gg_got[c], want, 1e-6 * (1 + std::abs(want))) << "gg[" << c << "]";
    }
  }
}

// A reduction node whose reduction_indices is a Placeholder (as an imported
// TF graph may have): its gradient reads the axes when the graph runs. Sum,
// Mean, Max and Min of x * w (x [?, 3], w [3]) over axis 0, 1 or -1, fed at
// run time; d sum(r^2) / dw against central differences. Prod's gradient
// needs its axes to transpose, and is refused naming the input.
TEST(GraphSecondOrderDynamicTest, ReductionsOverAxesFedAtRunTime) {
  const Rows xs = {{0.5, -0.3, 1.1}, {-0.9, 0.6, 0.2}, {0.4, 1.3, -0.7}, {0.8, -0.1, 0.5}};
  const std::vector<double> w0 = {0.7, -1.2, 0.4};
  // sum over the reduction's outputs of reduce(x * w)^2, written out.
  const auto reference = [&](const std::string& op, int axis, const std::vector<double>& w) {
    const size_t outer = axis == 0 ? 3 : xs.size(), inner = axis == 0 ? xs.size() : 3;
    double total = 0;
    for (size_t o = 0; o < outer; ++o) {
      double acc = op == "Max" ? -INFINITY : op == "Min" ? INFINITY : 0.0;
      for (size_t i = 0; i < inner; ++i) {
        const size_t r = axis == 0 ? i : o, c = axis == 0 ? o : i;
        const double v = xs[r][c] * w[c];
        acc = op == "Max" ? std::max(acc, v) : op == "Min" ? std::min(acc, v) : acc + v;
      }
      if (op == "Mean") acc /= static_cast<double>(inner);
      total += acc * acc;
    }
    return total;
  };
  for (const std::string op : {"Sum", "Mean", "Max", "Min", "Prod"}) {
    SCOPED_TRACE(op);
    Graph graph;
    Graph::AsDefault in(graph);
    const Tensor x = Placeholder(DType::kFloat64, Shape::Partial({-1, 3}), "x");
    const Tensor axes = Placeholder(DType::kInt32, Shape::Partial({-1}), "axes");
    Variable w(Tensor::FromVector<double>(w0), "w");
    const Tensor h = Mul(x, w.value());
    Node node{.name = graph.UniqueName(op), .op = op};
    const auto name_of = [&](const Tensor& t) {
      return graph.node(graph.OperationOf(t).index()).name;
    };
    node.inputs = {name_of(h), name_of(axes)};  // output 0 of each
    node.attrs = {{"T", DType::kFloat64}, {"Tidx", DType::kInt32}, {"keep_dims", false}};
    node.output_specs = {{Shape::Partial({-1}), DType::kFloat64}};
    const Tensor reduced = graph.Output(graph.AddNode(std::move(node)), 0);
    const Tensor loss = ReduceSum(Square(reduced));
    if (op == "Prod") {
      EXPECT_THAT([&] { ::eager::Gradients(loss, {&w}); },
                  ::testing::ThrowsMessage<InvalidArgumentError>(::testing::HasSubstr(
                      "input 'reduction_indices' must come from a Const node")));
      continue;
    }
    const std::optional<Tensor> g = ::eager::Gradients(loss, {&w})[0];
    ASSERT_TRUE(g.has_value());
    Session sess(graph);
    sess.Run(GlobalVariablesInitializer());
    for (const int axis : {0, 1, -1}) {
      const Tensor fed_axes = Tensor::FromVector<int32_t>({axis});
      const std::vector<double> got =
          sess.Run(*g, {{x, Matrix(xs)}, {axes, fed_axes}}).ToVector<double>();
      for (size_t c = 0; c < 3; ++c) {
        std::vector<double> up = w0, down = w0;
        up[c] += 1e-6;
        down[c] -= 1e-6;
        const int a = axis < 0 ? axis + 2 : axis;
        const double want = (reference(op, a, up) - reference(op, a, down)) / 2e-6;
        EXPECT_NEAR(got[c], want, 1e-6 * (1 + std::abs(want)))
            << "axis " << axis << ", dw[" << c << "]";
      }
    }
  }
}

}  // namespace
}  // namespace eager
