// Prod's and Min's gradients in a graph whose batch dimension is unknown
// (Placeholder [-1, 3]), on batches of 1, 3 and 2 rows with zeros, against
// central differences in double.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "autodiff/graph_gradients.h"
#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "runtime/graph.h"

namespace eager {
namespace {

// In a graph on Placeholder [-1, 3]: d/dw of sum(prod(x * w, axis 1)) +
// sum(min(x * w, axis 0)) with batches containing zeros, against central
// differences of the same expression written out in double.
TEST(GraphProdMinGradientTest, UnknownBatchWithZerosMatchesCentralDifferences) {
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor x = Placeholder(DType::kFloat64, Shape::Partial({-1, 3}), "x");
  const std::vector<double> w0 = {0.8, -1.1, 1.4};
  Variable w(Tensor::FromVector<double>(w0), "w");
  const Tensor y = Mul(x, w.value());
  const Tensor loss = Add(ReduceSum(ReduceProd(y, {1})), ReduceSum(ReduceMin(y, {0})));
  const std::vector<std::optional<Tensor>> g = ::eager::Gradients(loss, {&w});
  ASSERT_TRUE(g[0].has_value());
  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  const auto reference = [](const std::vector<double>& xs, const std::vector<double>& ws) {
    const size_t rows = xs.size() / 3;
    double total = 0;
    std::vector<double> col(3, INFINITY);
    for (size_t r = 0; r < rows; ++r) {
      double p = 1;
      for (size_t k = 0; k < 3; ++k) {
        p *= xs[r * 3 + k] * ws[k];
        col[k] = std::min(col[k], xs[r * 3 + k] * ws[k]);
      }
      total += p;
    }
    return total + col[0] + col[1] + col[2];
  };
  const std::vector<std::vector<double>> batches = {{0.0, 1.2, -0.7},
                                                    {0.5, 0.0, 1.1, -0.3, 0.9, 0.4, 0.0, 0.0, 2.0},
                                                    {1.3, -0.8, 0.6, 0.2, 0.7, -1.5}};
  for (const std::vector<double>& xs : batches) {
    const int64_t rows = static_cast<int64_t>(xs.size() / 3);
    SCOPED_TRACE(StrCat("batch ", rows));
    const std::vector<double> got =
        sess.Run(*g[0], {{x, Tensor::FromVector<double>(xs, Shape{rows, 3})}}).ToVector<double>();
    for (size_t k = 0; k < 3; ++k) {
      std::vector<double> up = w0, down = w0;
      up[k] += 1e-6;
      down[k] -= 1e-6;
      const double want = (reference(xs, up) - reference(xs, down)) / 2e-6;
      EXPECT_NEAR(got[k], want, 1e-6 * (1 + std::abs(want))) << "dw[" << k << "]";
    }
  }
}

}  // namespace
}  // namespace eager
