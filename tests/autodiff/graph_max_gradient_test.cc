// The gradient of Max in a graph whose input has an unknown batch dimension
// (Placeholder [-1, 3]): TF's _MaxGrad, the gradient shared equally among
// the elements equal to the maximum, with the kept-dims shape read from
// Shape(x) when the graph runs. Checked against central differences of the
// loss in double on batches of 1, 5 and 2; the batches repeat a row, so
// maxima over the batch are ties that stay ties when w moves (each tied
// element gets its share, and the shares add up to the derivative).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "autodiff/graph_gradients.h"
#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/names.h"

namespace eager {
namespace {

using Matrix = std::vector<std::vector<double>>;

// `rows` rows of 3; the last row repeats the first when rows > 2.
Matrix Batch(int rows, int seed) {
  Matrix x(static_cast<size_t>(rows), std::vector<double>(3));
  for (int r = 0; r < rows; ++r) {
    const int source = rows > 2 && r == rows - 1 ? 0 : r;
    for (int c = 0; c < 3; ++c) x[r][c] = std::cos(seed * 2.1 + source * 1.1 + c * 0.7) * 1.4;
  }
  return x;
}

const std::vector<double> kC = {0.7, -1.2, 0.4};

// sum_k c_k max_r y_rk + sum_r (max_k y_rk)^2 + 0.5 max y, y = x * w.
double Loss(const Matrix& x, const std::vector<double>& w) {
  double loss = 0, all = -INFINITY;
  std::vector<double> col(3, -INFINITY);
  for (const auto& row : x) {
    double row_max = -INFINITY;
    for (int k = 0; k < 3; ++k) {
      const double y = row[k] * w[k];
      col[k] = std::max(col[k], y);
      row_max = std::max(row_max, y);
      all = std::max(all, y);
    }
    loss += row_max * row_max;
  }
  for (int k = 0; k < 3; ++k) loss += kC[k] * col[k];
  return loss + 0.5 * all;
}

TEST(GraphMaxGradientTest, UnknownBatchMatchesCentralDifferences) {
  ResetDefaultNames();
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor x = Placeholder(DType::kFloat64, Shape::Partial({-1, 3}), "x");
  const std::vector<double> w0 = {0.9, -0.7, 1.3};
  Variable w(Tensor::FromVector<double>(w0), "w");
  const Tensor y = Mul(x, w.value());
  const Tensor loss = Add(Add(ReduceSum(Mul(ReduceMax(y, {0}), Tensor::FromVector<double>(kC))),
                              ReduceSum(Square(ReduceMax(y, {1})))),
                          Mul(ReduceMax(y), Tensor::Scalar<double>(0.5)));
  const std::vector<std::optional<Tensor>> g = ::eager::Gradients(loss, {&w});
  ASSERT_TRUE(g[0].has_value());
  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  for (const int rows : {1, 5, 2}) {
    SCOPED_TRACE(StrCat("batch ", rows));
    const Matrix batch = Batch(rows, rows);
    std::vector<double> flat;
    for (const auto& row : batch) flat.insert(flat.end(), row.begin(), row.end());
    const Tensor got = sess.Run(*g[0], {{x, Tensor::FromVector<double>(flat, Shape{rows, 3})}});
    const std::vector<double> gv = got.ToVector<double>();
    ASSERT_EQ(gv.size(), 3u);
    for (int k = 0; k < 3; ++k) {
      std::vector<double> up = w0, down = w0;
      const double h = 1e-6;
      up[k] += h;
      down[k] -= h;
      const double want = (Loss(batch, up) - Loss(batch, down)) / (2 * h);
      EXPECT_NEAR(gv[k], want, 1e-6 * (1 + std::abs(want))) << "dw[" << k << "]";
    }
  }
}

}  // namespace
}  // namespace eager
