// FusedBatchNormV3 and FusedBatchNormGradV3 (ops/batch_norm_ops.h): values
// by hand in training and inference, the running averages with Bessel's
// correction, NCHW as NHWC transposed, the gradient op against central
// differences of the forward op, the graph nodes a Session runs, and the
// errors. tests/tf_graphs/layer_ops_test.py compares both with TF itself.

#include "ops/batch_norm_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ops/graph_ops.h"
#include "ops/session.h"
#include "runtime/graph.h"
#include "tests/testing/op_errors.h"

namespace eager {
namespace {

using ::eager::testing::ErrorOf;

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

using Floats = std::vector<float>;

Tensor Vec(Floats v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<float>(std::move(v), Shape{n});
}

TEST(FusedBatchNormTest, TrainingNormalizesByTheBatchAndCorrectsTheVariance) {
  // NHWC [2, 1, 2, 2]: channel 0 holds 1, 2, 3, 6 (mean 3, variance 3.5),
  // channel 1 holds 10, 10, 14, 14 (mean 12, variance 4).
  const Tensor x = Tensor::FromVector<float>({1, 10, 2, 10, 3, 14, 6, 14}, Shape{2, 1, 2, 2});
  FusedBatchNormOptions o{.epsilon = 0.5};
  const FusedBatchNormOutputs r = FusedBatchNorm(x, Vec({2, 1}), Vec({1, -1}), Vec({}), Vec({}), o);
  // (x - 3) / sqrt(3.5 + 0.5) * 2 + 1 and (x - 12) / sqrt(4.5) - 1.
  const float s = 1.0f / std::sqrt(4.5f);
  EXPECT_THAT(r.y.ToVector<float>(),
              Pointwise(FloatNear(1e-6f),
                        Floats{-1, -1 - 2 * s, 0, -1 - 2 * s, 1, -1 + 2 * s, 4, -1 + 2 * s}));
  EXPECT_THAT(r.batch_mean.ToVector<float>(), ElementsAre(3, 12));
  // Bessel: n = 4 per channel, so * 4 / 3.
  EXPECT_THAT(r.batch_variance.ToVector<float>(),
              Pointwise(FloatNear(1e-6f), Floats{3.5f * 4 / 3, 4.0f * 4 / 3}));
  EXPECT_THAT(r.reserve_space_1.ToVector<float>(), ElementsAre(3, 12));
  EXPECT_THAT(r.reserve_space_2.ToVector<float>(), ElementsAre(3.5f, 4));
  EXPECT_EQ(r.reserve_space_3.shape(), Shape{0});

  // exponential_avg_factor 0.25 mixes in the inputs: 0.75 * old + 0.25 * new.
  o.exponential_avg_factor = 0.25;
  const FusedBatchNormOutputs avg =
      FusedBatchNorm(x, Vec({2, 1}), Vec({1, -1}), Vec({7, 0}), Vec({1, 2}), o);
  EXPECT_THAT(avg.batch_mean.ToVector<float>(), Pointwise(FloatNear(1e-6f), Floats{6, 3}));
  EXPECT_THAT(avg.batch_variance.ToVector<float>(),
              Pointwise(FloatNear(1e-6f),
                        Floats{0.75f + 0.25f * 3.5f * 4 / 3, 1.5f + 0.25f * 4.0f * 4 / 3}));
  EXPECT_EQ(avg.y.ToVector<float>(), r.y.ToVector<float>());
  EXPECT_THAT(avg.reserve_space_2.ToVector<float>(), ElementsAre(3.5f, 4));
}

TEST(FusedBatchNormTest, InferenceUsesTheGivenMeanAndVariance) {
  const Tensor x = Tensor::FromVector<float>({1, 10, 2, 10}, Shape{1, 1, 2, 2});
  const FusedBatchNormOutputs r =
      FusedBatchNorm(x, Vec({2, 1}), Vec({1, -1}), Vec({0, 10}), Vec({3.5f, 0.5f}),
                     {.epsilon = 0.5, .is_training = false});
  // (x - 0) / 2 * 2 + 1 and (x - 10) / 1 - 1.
  EXPECT_THAT(r.y.ToVector<float>(), Pointwise(FloatNear(1e-6f), Floats{2, -1, 3, -1}));
  EXPECT_THAT(r.batch_mean.ToVector<float>(), ElementsAre(0, 10));
  EXPECT_THAT(r.batch_variance.ToVector<float>(), ElementsAre(3.5f, 0.5f));
  EXPECT_THAT(r.reserve_space_2.ToVector<float>(), ElementsAre(3.5f, 0.5f));
}

// x NHWC [2, 3, 2, 3] from a seed, and its NCHW transpose.
std::vector<float> Random(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> d(0.5f, 2.0f);
  std::vector<float> v(n);
  for (float& e : v) e = d(gen);
  return v;
}

Tensor ToNchw(const Tensor& nhwc) {
  const Shape& s = nhwc.shape();
  const int64_t n = s.dim(0), h = s.dim(1), w = s.dim(2), c = s.dim(3);
  const auto in = nhwc.data<float>();
  std::vector<float> out(in.size());
  for (int64_t a = 0; a < n; ++a)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int64_t k = 0; k < c; ++k)
          out[((a * c + k) * h + y) * w + x] = in[((a * h + y) * w + x) * c + k];
  return Tensor::FromVector<float>(std::move(out), Shape{n, c, h, w});
}

TEST(FusedBatchNormTest, NchwIsNhwcTransposed) {
  const Tensor x = Tensor::FromVector<float>(Random(36, 1), Shape{2, 3, 2, 3});
  const Tensor scale = Vec({1.5f, -0.5f, 2}), offset = Vec({0, 1, -1});
  for (bool training : {true, false}) {
    FusedBatchNormOptions o{.exponential_avg_factor = 0.5, .is_training = training};
    const FusedBatchNormOutputs a =
        FusedBatchNorm(x, scale, offset, Vec({1, 2, 3}), Vec({1, 2, 3}), o);
    o.data_format = "NCHW";
    const FusedBatchNormOutputs b =
        FusedBatchNorm(ToNchw(x), scale, offset, Vec({1, 2, 3}), Vec({1, 2, 3}), o);
    EXPECT_THAT(b.y.ToVector<float>(), Pointwise(FloatNear(1e-5f), ToNchw(a.y).ToVector<float>()));
    EXPECT_THAT(b.batch_variance.ToVector<float>(),
                Pointwise(FloatNear(1e-5f), a.batch_variance.ToVector<float>()));
  }
}

// The gradient op against central differences of sum(y * w) through the
// forward op, in training (mean and variance depend on x) and inference.
TEST(FusedBatchNormTest, GradientMatchesCentralDifferences) {
  for (const char* format : {"NHWC", "NCHW"}) {
    for (bool training : {true, false}) {
      const Shape shape{2, 2, 3, 2};
      std::vector<float> xv = Random(24, 2);
      const Tensor w = Tensor::FromVector<float>(Random(24, 3), shape);
      const int64_t channels = 2;  // dimension 3 (NHWC) and 1 (NCHW) of shape
      const Tensor scale = Vec({1.5f, -0.7f}), offset = Vec({0.3f, 1});
      const Tensor mean = Vec({0.2f, -0.1f}), var = Vec({2, 3});
      const FusedBatchNormOptions o{
          .epsilon = 1e-3, .data_format = format, .is_training = training};
      const auto loss = [&](const std::vector<float>& xs, const Tensor& sc, const Tensor& of) {
        const Tensor y =
            FusedBatchNorm(Tensor::FromVector<float>(xs, shape), sc, of, mean, var, o).y;
        double sum = 0;
        for (size_t i = 0; i < xs.size(); ++i)
          sum += double{y.data<float>()[i]} * w.data<float>()[i];
        return sum;
      };
      const FusedBatchNormOutputs f =
          FusedBatchNorm(Tensor::FromVector<float>(xv, shape), scale, offset, mean, var, o);
      const FusedBatchNormGradOutputs g = FusedBatchNormGrad(
          w, Tensor::FromVector<float>(xv, shape), scale, training ? f.reserve_space_1 : mean,
          training ? f.reserve_space_2 : var, f.reserve_space_3, o);
      const float h = 1e-2f;
      for (size_t i = 0; i < xv.size(); ++i) {
        std::vector<float> up = xv, down = xv;
        up[i] += h;
        down[i] -= h;
        const double numeric = (loss(up, scale, offset) - loss(down, scale, offset)) / (2 * h);
        EXPECT_NEAR(g.x_backprop.data<float>()[i], numeric, 2e-3)
            << format << " training " << training << " x[" << i << "]";
      }
      for (int64_t c = 0; c < channels; ++c) {
        for (int which = 0; which < 2; ++which) {
          std::vector<float> up = (which == 0 ? scale : offset).ToVector<float>(), down = up;
          up[static_cast<size_t>(c)] += h;
          down[static_cast<size_t>(c)] -= h;
          const double numeric =
              which == 0 ? (loss(xv, Vec(up), offset) - loss(xv, Vec(down), offset)) / (2 * h)
                         : (loss(xv, scale, Vec(up)) - loss(xv, scale, Vec(down))) / (2 * h);
          const Tensor& got = which == 0 ? g.scale_backprop : g.offset_backprop;
          EXPECT_NEAR(got.data<float>()[c], numeric, 2e-3) << format << " " << which << " " << c;
        }
      }
      EXPECT_EQ(g.reserve_space_4.shape(), Shape{0});
    }
  }
}

TEST(FusedBatchNormTest, GraphNodesRunAsEagerAndErrorsNameTheNode) {
  const Tensor xv = Tensor::FromVector<float>(Random(24, 4), Shape{2, 2, 3, 2});
  const Tensor dy = Tensor::FromVector<float>(Random(24, 5), Shape{2, 2, 3, 2});
  const FusedBatchNormOptions o{.epsilon = 1e-3, .exponential_avg_factor = 0.1};
  Graph graph;
  FusedBatchNormOutputs r;
  FusedBatchNormGradOutputs g;
  {
    Graph::AsDefault in(graph);
    const Tensor x =
        Placeholder(DType::kFloat32, Shape::Partial({Shape::kUnknownDim, 2, 3, 2}), "x");
    r = FusedBatchNorm(x, Constant(Vec({1, 2})), Constant(Vec({0, 1})), Constant(Vec({0, 0})),
                       Constant(Vec({1, 1})), o);
    g = FusedBatchNormGrad(Constant(dy), x, Constant(Vec({1, 2})), r.reserve_space_1,
                           r.reserve_space_2, r.reserve_space_3, o);
  }
  EXPECT_EQ(r.batch_variance.name(), "FusedBatchNormV3:2");
  EXPECT_EQ(graph.node(graph.FindNodeIndex("FusedBatchNormV3")).output_specs[1].shape,
            Shape::Partial({2}));
  const FusedBatchNormOutputs e =
      FusedBatchNorm(xv, Vec({1, 2}), Vec({0, 1}), Vec({0, 0}), Vec({1, 1}), o);
  const FusedBatchNormGradOutputs ge = FusedBatchNormGrad(dy, xv, Vec({1, 2}), e.reserve_space_1,
                                                          e.reserve_space_2, e.reserve_space_3, o);
  Session sess(graph);
  const auto run = [&](const Tensor& t) { return sess.Run(t, {{"x:0", xv}}).ToVector<float>(); };
  EXPECT_EQ(run(r.y), e.y.ToVector<float>());
  EXPECT_EQ(run(r.batch_mean), e.batch_mean.ToVector<float>());
  EXPECT_EQ(run(r.batch_variance), e.batch_variance.ToVector<float>());
  EXPECT_EQ(run(g.x_backprop), ge.x_backprop.ToVector<float>());
  EXPECT_EQ(run(g.scale_backprop), ge.scale_backprop.ToVector<float>());
  // A batch of the wrong channel count when the graph runs.
  Graph any;
  Tensor y;
  {
    Graph::AsDefault in(any);
    const Tensor x = Placeholder(DType::kFloat32, Shape::UnknownRank(), "x");
    y = FusedBatchNorm(x, Constant(Vec({1, 2})), Constant(Vec({0, 1})), Constant(Vec({0, 0})),
                       Constant(Vec({1, 1})), o)
            .y;
  }
  Session any_sess(any);
  EXPECT_THAT(
      ErrorOf([&] {
        any_sess.Run(y, {{"x:0", Tensor::FromVector<float>(Random(36, 6), Shape{2, 2, 3, 3})}});
      }),
      AllOf(HasSubstr("node 'FusedBatchNormV3' (FusedBatchNormV3)"),
            HasSubstr("scale must be a float32 vector of 3 elements"), HasSubstr("[2]")));
  // A node of the wrong arity.
  Graph bad;
  bad.AddNode(
      Node{.name = "c", .op = "Const", .attrs = {{"value", xv}, {"dtype", DType::kFloat32}}});
  bad.AddNode(Node{.name = "bn",
                   .op = "FusedBatchNormV3",
                   .inputs = {"c", "c"},
                   .attrs = {{"T", DType::kFloat32}, {"U", DType::kFloat32}}});
  Session bad_sess(bad);
  std::string error;
  try {
    bad_sess.Run("bn:0");
  } catch (const Error& err) {
    error = err.what();
  }
  EXPECT_THAT(error, AllOf(HasSubstr("'bn'"), HasSubstr("FusedBatchNormV3")));
}

TEST(FusedBatchNormTest, BadShapesAndFormatsAreRefused) {
  const Tensor x4 = Tensor::Zeros(Shape{1, 2, 2, 3}, DType::kFloat32);
  const Tensor v3 = Vec({1, 1, 1});
  EXPECT_THAT(ErrorOf([&] {
                FusedBatchNorm(Tensor::Zeros(Shape{2, 3}, DType::kFloat32), v3, v3, v3, v3);
              }),
              AllOf(HasSubstr("FusedBatchNormV3"), HasSubstr("4-dimensional"), HasSubstr("[2,3]")));
  EXPECT_THAT(ErrorOf([&] { FusedBatchNorm(x4, v3, v3, v3, v3, {.data_format = "HWCN"}); }),
              HasSubstr("unknown data_format 'HWCN'"));
  EXPECT_THAT(ErrorOf([&] {
                FusedBatchNorm(x4, v3, Vec({1, 1}), v3, v3);
              }),
              AllOf(HasSubstr("offset must be a float32 vector of 3"), HasSubstr("[2]")));
  // Inference needs the mean and variance; training with factor 1 does not.
  EXPECT_THAT(ErrorOf([&] { FusedBatchNorm(x4, v3, v3, Vec({}), v3, {.is_training = false}); }),
              HasSubstr("mean must be a float32 vector of 3"));
  EXPECT_EQ(FusedBatchNorm(x4, v3, v3, Vec({}), Vec({})).y.shape(), x4.shape());
  EXPECT_THAT(ErrorOf([&] {
                FusedBatchNorm(Tensor::Zeros(Shape{1, 2, 2, 3}, DType::kFloat64), v3, v3, v3, v3);
              }),
              HasSubstr("x must be float32"));
  EXPECT_THAT(ErrorOf([&] { FusedBatchNormGrad(v3, x4, v3, v3, v3, Vec({})); }),
              AllOf(HasSubstr("FusedBatchNormGradV3"), HasSubstr("y_backprop")));
}

}  // namespace
}  // namespace eager
