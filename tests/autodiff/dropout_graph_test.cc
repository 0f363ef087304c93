// TF1's dropout graphs as each TF version builds tf.nn.dropout: TF <= 1.13's
// floor(keep_prob + u) * x / keep_prob, TF 1.14's x * (1 / keep_prob) *
// cast(u >= rate), TF 2.x's where(u >= rate, x * scale, 0), u from a
// RandomUniform node on Shape(x). Each zeros about `rate` of the entries and
// keeps the mean; graph gradients flow through the mask the run drew.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "autodiff/graph_gradients.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/matmul.h"
#include "ops/random_ops.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "ops/shape_ops.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/variable.h"

namespace eager {
namespace {

std::vector<uint32_t> Bits(const Tensor& t) {
  std::vector<uint32_t> bits;
  for (float v : t.data<float>()) bits.push_back(std::bit_cast<uint32_t>(v));
  return bits;
}

enum class Form { kFloor, kGreaterEqualCast, kSelectV2 };

// tf.nn.dropout(x, rate) as each TF version builds it.
Tensor Dropout(const Tensor& x, float rate, Form form, int64_t seed2) {
  const Tensor u = RandomUniformNode(ShapeOf(x), DType::kFloat32, 87654321, seed2);
  const Tensor keep = Tensor(1.0f - rate);
  switch (form) {
    case Form::kFloor:  // TF <= 1.13: floor(keep + u) is 1 with probability keep
      return Mul(Div(x, keep), Floor(Add(keep, u)));
    case Form::kGreaterEqualCast:  // TF 1.14
      return Mul(Mul(x, Div(Tensor(1.0f), keep)),
                 Cast(GreaterEqual(u, Tensor(rate)), DType::kFloat32));
    case Form::kSelectV2:  // TF 2.x
      return SelectV2(GreaterEqual(u, Tensor(rate)), Mul(x, Tensor(1.0f / (1.0f - rate))),
                      Tensor(0.0f));
  }
  return x;
}

TEST(DropoutGraphTest, ZerosAboutRateOfEntriesAndKeepsTheMean) {
  for (Form form : {Form::kFloor, Form::kGreaterEqualCast, Form::kSelectV2}) {
    SCOPED_TRACE(static_cast<int>(form));
    Graph graph;
    Graph::AsDefault in(graph);
    const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1, 100}), "x");
    const float rate = 0.3f;
    const Tensor y = Dropout(x, rate, form, 1);
    Session sess(graph);
    std::vector<float> xs(20000);
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = 1.0f + static_cast<float>(i % 7);
    const Tensor feed = Tensor::FromVector<float>(xs, Shape{200, 100});
    const Tensor out = sess.Run(y, {{x, feed}});
    ASSERT_EQ(out.shape(), (Shape{200, 100}));
    int zeros = 0;
    double sum_in = 0;
    double sum_out = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const float v = out.data<float>()[i];
      sum_in += xs[i];
      sum_out += v;
      if (v == 0.0f) {
        ++zeros;
      } else {  // a kept entry is x / keep (to float rounding)
        ASSERT_NEAR(v, xs[i] / 0.7f, 1e-5f * v);
      }
    }
    // Binomial(20000, 0.3): sd 65; 5 sd.
    EXPECT_NEAR(zeros, 6000, 325);
    EXPECT_NEAR(sum_out / sum_in, 1.0, 0.02);
    // The next run draws another mask.
    EXPECT_NE(Bits(sess.Run(y, {{x, feed}})), Bits(out));
  }
}

// The three forms keep the same entries for the same seeds at rate 0.5:
// u is a multiple of 2^-23 in [0, 1), so 0.5 + u is exact and
// floor(0.5 + u) = 1 exactly when u >= 0.5. (At other rates keep + u may
// round up to 1 just below u = rate, as in TF.)
TEST(DropoutGraphTest, FormsKeepTheSameEntriesForTheSameSeeds) {
  std::vector<std::vector<bool>> masks;
  for (Form form : {Form::kFloor, Form::kGreaterEqualCast, Form::kSelectV2}) {
    Graph graph;
    Graph::AsDefault in(graph);
    const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1}), "x");
    const Tensor y = Dropout(x, 0.5f, form, 7);
    Session sess(graph);
    const Tensor out =
        sess.Run(y, {{x, Tensor::FromVector<float>(std::vector<float>(4096, 1.0f), Shape{4096})}});
    std::vector<bool> mask;
    for (float v : out.data<float>()) mask.push_back(v != 0.0f);
    masks.push_back(mask);
  }
  EXPECT_EQ(masks[0], masks[1]);
  EXPECT_EQ(masks[1], masks[2]);
  EXPECT_NE(std::count(masks[0].begin(), masks[0].end(), true), 0);
  EXPECT_NE(std::count(masks[0].begin(), masks[0].end(), false), 0);
}

// Graph gradients through dropout: d sum(dropout(x w)) / dw = x^T (mask /
// keep), with the mask the same run drew (fetched together, RandomUniform
// runs once per Run).
TEST(DropoutGraphTest, GradientsFlowThroughTheMaskOfTheSameRun) {
  for (Form form : {Form::kFloor, Form::kGreaterEqualCast, Form::kSelectV2}) {
    SCOPED_TRACE(static_cast<int>(form));
    Graph graph;
    Graph::AsDefault in(graph);
    const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1, 3}), "x");
    Variable w(Tensor::FromVector<float>({0.5f, -0.3f, 0.2f, 0.8f, -0.6f, 0.1f}, Shape{3, 2}), "w");
    const Tensor h = MatMul(x, w.value());
    const Tensor y = Dropout(h, 0.4f, form, 3);
    const Tensor loss = ReduceSum(y);
    const std::vector<std::optional<Tensor>> g = ::eager::Gradients(loss, {&w});
    ASSERT_TRUE(g[0].has_value());
    Session sess(graph);
    sess.Run(GlobalVariablesInitializer());
    const std::vector<float> xs = {1, 2, 3, -1, 0.5f, 2, 0, 1, -2, 3, 1, 2};  // no h is 0
    const Tensor feed = Tensor::FromVector<float>(xs, Shape{4, 3});
    for (int run = 0; run < 3; ++run) {
      const auto out = sess.Run({y, *g[0], h}, {{x, feed}});
      const std::vector<float> ys = out[0]->ToVector<float>();
      const std::vector<float> hs = out[2]->ToVector<float>();
      std::vector<double> want(6, 0.0);
      for (int r = 0; r < 4; ++r) {
        for (int j = 0; j < 2; ++j) {
          ASSERT_GT(std::abs(hs[r * 2 + j]), 0.05f);
          const bool kept = ys[r * 2 + j] != 0.0f;
          const double d = kept ? 1.0 / 0.6 : 0.0;
          for (int k = 0; k < 3; ++k) want[k * 2 + j] += xs[r * 3 + k] * d;
        }
      }
      const std::vector<float> got = out[1]->ToVector<float>();
      for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::abs(want[i])));
    }
  }
}

}  // namespace
}  // namespace eager
