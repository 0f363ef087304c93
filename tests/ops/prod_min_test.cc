// Prod and Min (tf.reduce_prod, tf.reduce_min): values against hand-computed
// products and minima, TF's axis checks, and Prod's gradient where the input
// has zeros (one zero in a group: only it gets a gradient, the product of the
// others; two zeros: none), against central differences in float64
// (graph_prod_min_gradient_test.cc: in a graph with an unknown batch), and
// where prod / x fails: products that overflow or underflow (TF's
// formulation, exclusive cumulative products from both sides).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/execute.h"
#include "ops/graph_ops.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "runtime/graph.h"
#include "tests/testing/numeric_gradient.h"

namespace eager {
namespace {

using ::testing::HasSubstr;

Attrs Axes(std::vector<int64_t> axes, bool keep) {
  return Attrs{{"axis", std::move(axes)}, {"keep_dims", keep}};
}

TEST(ProdMinTest, ValuesAsComputedByHand) {
  const Tensor x = Tensor::FromVector<float>({1, -2, 3, 4, 0.5f, -1}, Shape{2, 3});
  EXPECT_EQ(ReduceProd(x, {1}).ToVector<float>(), (std::vector<float>{-6, -2}));
  EXPECT_EQ(ReduceProd(x, {0}).ToVector<float>(), (std::vector<float>{4, -1, -3}));
  EXPECT_EQ(ReduceProd(x).ToVector<float>(), (std::vector<float>{12}));
  EXPECT_EQ(ReduceProd(x, {-1}, true).shape(), (Shape{2, 1}));
  EXPECT_EQ(ReduceMin(x, {1}).ToVector<float>(), (std::vector<float>{-2, -1}));
  EXPECT_EQ(ReduceMin(x).ToVector<float>(), (std::vector<float>{-2}));
  const Tensor ints = Tensor::FromVector<int32_t>({2, 3, 4, 5}, Shape{2, 2});
  EXPECT_EQ(ReduceProd(ints, {0}).ToVector<int32_t>(), (std::vector<int32_t>{8, 15}));
  EXPECT_EQ(ReduceMin(ints, {1}).ToVector<int32_t>(), (std::vector<int32_t>{2, 4}));
  // Empty groups: the identities, 1 and +inf (TF's).
  const Tensor empty = Tensor::FromVector<float>({}, Shape{0, 2});
  EXPECT_EQ(ReduceProd(empty, {0}).ToVector<float>(), (std::vector<float>{1, 1}));
  EXPECT_EQ(ReduceMin(empty, {0}).ToVector<float>()[0], INFINITY);
}

TEST(ProdMinTest, LargeInputsReduceInBlocks) {
  // Over the parallel threshold (blocks reduced alone, then combined): a
  // float64 product of many values near 1 and a minimum, against loops.
  std::vector<double> v(1 << 17);
  double want = 1, least = INFINITY;
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = 1.0 + std::sin(static_cast<double>(i)) * 1e-5;
    want *= v[i];
    least = std::min(least, v[i]);
  }
  const Tensor t = Tensor::FromVector<double>(v);
  EXPECT_NEAR(ReduceProd(t).ToVector<double>()[0], want, 1e-10);
  EXPECT_EQ(ReduceMin(t).ToVector<double>()[0], least);
  // Rows of a [2, n/2] matrix: each row reduced alone.
  const std::vector<double> rows =
      ReduceProd(Tensor::FromVector<double>(v, Shape{2, 1 << 16}), {1}).ToVector<double>();
  EXPECT_NEAR(rows[0] * rows[1], want, 1e-10);
}

TEST(ProdMinTest, AxesAreCheckedAsForTheOtherReductions) {
  const Tensor x = Tensor::FromVector<float>({1, 2, 3, 4}, Shape{2, 2});
  EXPECT_THAT([&] { ReduceProd(x, {2}); }, ::testing::Throws<InvalidArgumentError>());
  EXPECT_THAT(
      [&] {
        ReduceMin(x, {0, -2});
      },
      ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("more than once")));
  EXPECT_THAT([] { ReduceProd(Tensor(true)); }, ::testing::Throws<InvalidArgumentError>());
}

TEST(ProdMinTest, ProdGradientWithZerosMatchesCentralDifferences) {
  // Row 0: no zero; row 1: one zero; row 2: two zeros.
  const Tensor x =
      Tensor::FromVector<double>({1.5, -0.5, 2.0, 0.7, 0.0, -1.3, 0.0, 0.9, 0.0}, Shape{3, 3});
  for (const auto& [axes, keep] :
       {std::pair{std::vector<int64_t>{1}, false}, std::pair{std::vector<int64_t>{0}, true},
        std::pair{std::vector<int64_t>{0, 1}, false}}) {
    const testing::GradientCheck check = testing::CheckGradient(kProdOp, {x}, Axes(axes, keep));
    EXPECT_LE(check.max_error, 1e-7) << check.worst;
  }
  // By hand, along rows: the lone zero gets 0.7 * -1.3; the others 0; row 2 all 0.
  Tensor grad = *kProdOp.gradient(
      OpCall{
          .op = &kProdOp, .inputs = {x}, .output = ReduceProd(x, {1}), .attrs = Axes({1}, false)},
      Tensor::Vector<double>({1, 1, 1}))[0];
  const std::vector<double> g = grad.ToVector<double>();
  EXPECT_DOUBLE_EQ(g[0], -0.5 * 2.0);
  EXPECT_DOUBLE_EQ(g[3], 0.0);
  EXPECT_DOUBLE_EQ(g[4], 0.7 * -1.3);
  EXPECT_DOUBLE_EQ(g[5], 0.0);
  for (int i = 6; i < 9; ++i) EXPECT_DOUBLE_EQ(g[i], 0.0);
}

Tensor ProdGrad(const Tensor& x, std::vector<int64_t> axes, bool keep, const Tensor& grad) {
  const Attrs attrs = Axes(std::move(axes), keep);
  const Tensor y = Execute(kProdOp, x, attrs);
  return *kProdOp.gradient(OpCall{.op = &kProdOp, .inputs = {x}, .output = y, .attrs = attrs},
                           grad)[0];
}

// Where prod / x fails and the others' product does not: the whole product
// overflows (inf / x) or underflows to 0 (0 / x), while the exclusive
// cumulative products from both sides stay in range. By hand, in double.
TEST(ProdMinTest, ProdGradientWhereTheWholeProductOverflowsOrUnderflows) {
  const Tensor ones = Tensor::Vector<double>({1.0});
  // Product 1e300 (overflows: 1e400 on the way); x0's others: 1e200 * 1e-100.
  std::vector<double> g =
      ProdGrad(Tensor::FromVector<double>({1e200, 1e200, 1e-100}, Shape{1, 3}), {1}, false, ones)
          .ToVector<double>();
  EXPECT_DOUBLE_EQ(g[0], 1e100);
  EXPECT_DOUBLE_EQ(g[1], 1e100);
  EXPECT_EQ(g[2], INFINITY);  // its others' product, 1e400, is not a double
  // Product 1e-250, computed as 1e-400 (0) * 1e150: prod / x would give 0.
  g = ProdGrad(Tensor::FromVector<double>({1e-200, 1e-200, 1e150}, Shape{3, 1}), {0}, true, ones)
          .ToVector<double>();
  EXPECT_DOUBLE_EQ(g[0], 1e-50);
  EXPECT_DOUBLE_EQ(g[1], 1e-50);
  EXPECT_EQ(g[2], 0.0);  // 1e-400 underflows
  // float32: the product 1e40 overflows, x0's others (1e30 * 1e-20) do not.
  const std::vector<float> f =
      ProdGrad(Tensor::Vector<float>({1e30f, 1e30f, 1e-20f}), {0}, false, Tensor(1.0f))
          .ToVector<float>();
  EXPECT_EQ(f[0], 1e-20f * 1e30f);
  EXPECT_EQ(f[1], 1e30f * 1e-20f);
  EXPECT_EQ(f[2], INFINITY);
}

// Several axes (listed in any order, negative), keep_dims, zeros in some
// groups: central differences in double, and the gradient times a
// non-uniform upstream gradient as computed by hand for one group.
TEST(ProdMinTest, ProdGradientOverSeveralAxesMatchesCentralDifferences) {
  std::vector<double> v(24);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.3 + 0.07 * static_cast<double>((i * 7) % 24);
  v[5] = 0.0;           // one zero in its group
  v[10] = v[22] = 0.0;  // two zeros in one group of axes {0, 2}
  v[15] = -v[15];
  const Tensor x = Tensor::FromVector<double>(v, Shape{2, 3, 4});
  for (const auto& [axes, keep] :
       {std::pair{std::vector<int64_t>{0, 2}, false}, std::pair{std::vector<int64_t>{-1, 0}, true},
        std::pair{std::vector<int64_t>{2, -3}, false}, std::pair{std::vector<int64_t>{1, 2}, true},
        std::pair{std::vector<int64_t>{}, false}, std::pair{std::vector<int64_t>{0, 1, 2}, true}}) {
    SCOPED_TRACE(::testing::PrintToString(axes));
    const testing::GradientCheck check = testing::CheckGradient(kProdOp, {x}, Axes(axes, keep));
    EXPECT_LE(check.max_error, 1e-7) << check.worst;
  }
  // Axes {0, 2}: the group of column 1 is x[:, 1, :] = v[4..7], v[16..19];
  // v[5] is its only zero, so only v[5] gets a gradient: grad * the others.
  const Tensor grad = Tensor::Vector<double>({2.0, -3.0, 0.5});
  const std::vector<double> g = ProdGrad(x, {0, 2}, false, grad).ToVector<double>();
  double others = 1;
  for (const size_t i : {4, 6, 7, 16, 17, 18, 19}) others *= v[i];
  EXPECT_NEAR(g[5], -3.0 * others, 1e-15);
  for (const size_t i : {4, 6, 7, 16, 17, 18, 19}) EXPECT_EQ(g[i], 0.0) << i;
  for (const size_t i : {10, 22, 8, 21}) EXPECT_EQ(g[i], 0.0) << i;  // column 2: two zeros
}

// In a graph whose input has every dimension unknown (Placeholder [?, ?, ?]),
// the folded [R, O] shape and the permuted shape come from Shape(x) at run
// time; the Session's gradient equals the eager one bit for bit, for
// several axis lists and both keep_dims.
TEST(ProdMinTest, ProdGradientInAGraphOfUnknownShapeEqualsEager) {
  std::vector<double> v(24);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.2 + 0.09 * static_cast<double>((i * 5) % 24);
  v[3] = v[14] = v[17] = 0.0;
  const Tensor x_value = Tensor::FromVector<double>(v, Shape{2, 3, 4});
  for (const auto& [axes, keep] :
       {std::pair{std::vector<int64_t>{2, 0}, false}, std::pair{std::vector<int64_t>{-2}, true},
        std::pair{std::vector<int64_t>{}, false}, std::pair{std::vector<int64_t>{0, 1, 2}, true}}) {
    SCOPED_TRACE(::testing::PrintToString(axes));
    const Tensor y = Execute(kProdOp, x_value, Axes(axes, keep));
    std::vector<double> u(static_cast<size_t>(y.num_elements()));
    for (size_t i = 0; i < u.size(); ++i) u[i] = 0.5 + 0.25 * static_cast<double>(i);
    const Tensor u_value = Tensor::FromVector<double>(u, y.shape());
    const Tensor want = ProdGrad(x_value, axes, keep, u_value);
    Graph graph;
    Graph::AsDefault in(graph);
    const Tensor x = Placeholder(DType::kFloat64, Shape::Partial({-1, -1, -1}), "x");
    const Tensor grad = Placeholder(
        DType::kFloat64, Shape::Partial(std::vector<int64_t>(static_cast<size_t>(y.rank()), -1)),
        "grad");
    const Tensor g = ProdGrad(x, axes, keep, grad);
    const Tensor got = Session(graph).Run(g, {{x, x_value}, {grad, u_value}});
    EXPECT_EQ(got.shape(), x_value.shape());
    EXPECT_EQ(got.ToVector<double>(), want.ToVector<double>());
  }
}

}  // namespace
}  // namespace eager
