// Prod and Min (tf.reduce_prod, tf.reduce_min): values against hand-computed
// products and minima, TF's axis checks, and Prod's gradient where the input
// has zeros (one zero in a group: only it gets a gradient, the product of the
// others; two zeros: none), against central differences in float64
// (graph_prod_min_gradient_test.cc: in a graph with an unknown batch).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/reduction_ops.h"
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

}  // namespace
}  // namespace eager
