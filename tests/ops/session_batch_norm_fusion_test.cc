// A Session folds an inference FusedBatchNormV3 after a Conv2D (+ BiasAdd)
// into the convolution's filter and bias (ops/internal/graph_fusion.h): the
// fused plan computes what the unfused one computes (SessionOptions::
// fuse_ops = false) to float32 rounding, with the normalization's inputs
// read on each run; a read of the batch norm's other outputs, training mode
// or NCHW keep the nodes apart; Session::last_run_fused_nodes counts them.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/batch_norm_ops.h"
#include "ops/binary_ops.h"
#include "ops/conv_ops.h"
#include "ops/graph_ops.h"
#include "ops/nn_ops.h"
#include "ops/random_generator.h"
#include "ops/session.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"

namespace eager {
namespace {

enum class Act { kNone, kRelu, kRelu6 };

std::string Name(Act a) { return a == Act::kNone ? "none" : a == Act::kRelu ? "Relu" : "Relu6"; }

// x [2, h, w, 3] * filter [3, 3, 3, channels] (SAME) [+ bias], then
// FusedBatchNormV3 with fed scale, offset, mean and variance, then `act`.
struct BnGraph {
  BnGraph(int64_t channels, int64_t h, int64_t w, bool bias, Act act,
          const FusedBatchNormOptions& options = {.epsilon = 1e-3, .is_training = false})
      : channels(channels) {
    Graph::AsDefault in(graph);
    x = Placeholder(DType::kFloat32, Shape::Partial({-1, h, w, 3}), "x");
    const Shape vec = Shape::Partial({-1});
    scale = Placeholder(DType::kFloat32, vec, "scale");
    offset = Placeholder(DType::kFloat32, vec, "offset");
    mean = Placeholder(DType::kFloat32, vec, "mean");
    variance = Placeholder(DType::kFloat32, vec, "variance");
    const Tensor filter = RandomUniform(Shape{3, 3, 3, channels}, 1, -0.5, 0.5, DType::kFloat32);
    conv = Conv2D(x, filter, {.padding = "SAME"});
    Tensor pre = conv;
    if (bias) pre = BiasAdd(conv, RandomUniform(Shape{channels}, 2, -1, 1, DType::kFloat32));
    bn = FusedBatchNorm(pre, scale, offset, mean, variance, options);
    y = act == Act::kNone ? bn.y : act == Act::kRelu ? Relu(bn.y) : Relu6(bn.y);
    value = RandomUniform(Shape{2, h, w, 3}, 3, -2, 2, DType::kFloat32);
  }

  // The BN's inputs for run `seed` (each run draws others).
  Feeds FeedsFor(int seed) const {
    const Shape vec{channels};
    return {{x, value},
            {scale, RandomUniform(vec, 10 + seed, 0.5, 1.5, DType::kFloat32)},
            {offset, RandomUniform(vec, 20 + seed, -0.5, 0.5, DType::kFloat32)},
            {mean, RandomUniform(vec, 30 + seed, -0.3, 0.3, DType::kFloat32)},
            {variance, RandomUniform(vec, 40 + seed, 0.2, 2.0, DType::kFloat32)}};
  }

  int64_t channels;
  Graph graph;
  Tensor x, scale, offset, mean, variance, conv, y, value;
  FusedBatchNormOutputs bn;
};

struct Both {
  std::vector<Tensor> fused, unfused;
  int64_t fused_nodes = 0;
};

// Two runs of `fetches` with other BN inputs each, fused and unfused; the
// second run's values.
Both RunBoth(const BnGraph& g, const std::vector<Fetch>& fetches) {
  Both out;
  Session fused(const_cast<Graph&>(g.graph));
  SessionOptions off;
  off.fuse_ops = false;
  Session unfused(const_cast<Graph&>(g.graph), off);
  for (int run = 0; run < 2; ++run) {
    out.fused.clear();
    out.unfused.clear();
    for (auto& t : fused.Run(fetches, g.FeedsFor(run))) out.fused.push_back(*t);
    for (auto& t : unfused.Run(fetches, g.FeedsFor(run))) out.unfused.push_back(*t);
    EXPECT_EQ(unfused.last_run_fused_nodes(), 0);
  }
  out.fused_nodes = fused.last_run_fused_nodes();
  return out;
}

// Equal to float32 rounding: the folded filter rounds w * s once per
// element, the unfused BN rounds the convolution's sum before scaling it.
void ExpectClose(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  const auto x = a.data<float>();
  const auto y = b.data<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_NEAR(x[i], y[i], 2e-6 * (1 + std::abs(y[i]))) << what << " element " << i;
  }
}

TEST(SessionBatchNormFusionTest, ConvBatchNormRunsFusedWithTheUnfusedValues) {
  for (int64_t channels = 1; channels <= 65; ++channels) {
    for (const bool bias : {false, true}) {
      for (const Act act : {Act::kNone, Act::kRelu, Act::kRelu6}) {
        const std::string what = StrCat(channels, " channels", bias ? " BiasAdd " : " ", Name(act));
        const BnGraph g(channels, 5, 7, bias, act);
        const Both r = RunBoth(g, {g.y});
        EXPECT_EQ(r.fused_nodes, 2 + (bias ? 1 : 0) + (act != Act::kNone ? 1 : 0)) << what;
        ExpectClose(r.fused[0], r.unfused[0], what);
      }
    }
  }
}

TEST(SessionBatchNormFusionTest, OddSpatialSizesAndStrides) {
  for (const int64_t h : {1, 3, 9}) {
    for (const int64_t w : {1, 5, 11}) {
      const BnGraph g(17, h, w, true, Act::kRelu);
      const Both r = RunBoth(g, {g.y});
      EXPECT_EQ(r.fused_nodes, 4);
      ExpectClose(r.fused[0], r.unfused[0], StrCat(h, "x", w));
    }
  }
}

TEST(SessionBatchNormFusionTest, ReadingBatchMeanKeepsTheBatchNormApart) {
  const BnGraph g(8, 5, 5, true, Act::kRelu);
  const Both r = RunBoth(g, {g.y, g.bn.batch_mean});
  EXPECT_EQ(r.fused_nodes, 2);  // Conv2D + BiasAdd alone
  ExpectClose(r.fused[0], r.unfused[0], "y");
  ExpectClose(r.fused[1], r.unfused[1], "batch_mean");
}

TEST(SessionBatchNormFusionTest, BatchMeanReadByAnotherNodeKeepsTheBatchNormApart) {
  BnGraph g(8, 5, 5, false, Act::kNone);
  Tensor sum;
  {
    Graph::AsDefault in(g.graph);
    sum = Add(g.y, g.bn.batch_variance);
  }
  const Both r = RunBoth(g, {sum});
  EXPECT_EQ(r.fused_nodes, 0);
  ExpectClose(r.fused[0], r.unfused[0], "y + batch_variance");
}

TEST(SessionBatchNormFusionTest, FetchingTheConvolutionKeepsTheNodesApart) {
  const BnGraph g(8, 5, 5, false, Act::kRelu);
  const Both r = RunBoth(g, {g.y, g.conv});
  EXPECT_EQ(r.fused_nodes, 0);
  ExpectClose(r.fused[0], r.unfused[0], "y");
}

TEST(SessionBatchNormFusionTest, TrainingIsNotFused) {
  const BnGraph g(8, 5, 5, false, Act::kRelu, {.epsilon = 1e-3, .is_training = true});
  const Both r = RunBoth(g, {g.y});
  EXPECT_EQ(r.fused_nodes, 0);
  ExpectClose(r.fused[0], r.unfused[0], "y");
}

TEST(SessionBatchNormFusionTest, NchwIsNotFused) {
  // The convolution's NHWC output [2, 6, 5, 6] read as NCHW: 6 channels on axis 1.
  const BnGraph g(6, 6, 5, false, Act::kNone,
                  {.epsilon = 1e-3, .data_format = "NCHW", .is_training = false});
  const Both r = RunBoth(g, {g.y});
  EXPECT_EQ(r.fused_nodes, 0);
  ExpectClose(r.fused[0], r.unfused[0], "y");
}

TEST(SessionBatchNormFusionTest, VectorsOfTheWrongLengthFailAsUnfused) {
  const BnGraph g(8, 5, 5, false, Act::kRelu);
  Feeds feeds = g.FeedsFor(0);
  feeds[2].second = RandomUniform(Shape{7}, 5, -1, 1, DType::kFloat32);  // offset
  Session fused(const_cast<Graph&>(g.graph));
  SessionOptions off;
  off.fuse_ops = false;
  Session unfused(const_cast<Graph&>(g.graph), off);
  std::string fused_error, unfused_error;
  try {
    fused.Run(g.y, feeds);
  } catch (const InvalidArgumentError& e) {
    fused_error = e.what();
  }
  try {
    unfused.Run(g.y, feeds);
  } catch (const InvalidArgumentError& e) {
    unfused_error = e.what();
  }
  EXPECT_NE(unfused_error, "");
  EXPECT_EQ(fused_error, unfused_error);
  EXPECT_EQ(fused.last_run_fused_nodes(), 0);
}

// Keras 3's inference BatchNormalization: Conv2D [+ BiasAdd], then y * s
// + o with s and o computed by other nodes (here fed), in either operand
// order.
struct AffineGraph {
  AffineGraph(int64_t channels, bool bias, Act act, bool swapped, const Shape& vector_shape)
      : vector_shape(vector_shape) {
    Graph::AsDefault in(graph);
    x = Placeholder(DType::kFloat32, Shape::Partial({-1, 5, 7, 3}), "x");
    s = Placeholder(DType::kFloat32, Shape::UnknownRank(), "s");
    o = Placeholder(DType::kFloat32, Shape::UnknownRank(), "o");
    const Tensor filter = RandomUniform(Shape{3, 3, 3, channels}, 1, -0.5, 0.5, DType::kFloat32);
    conv = Conv2D(x, filter, {.padding = "SAME"});
    Tensor pre = conv;
    if (bias) pre = BiasAdd(conv, RandomUniform(Shape{channels}, 2, -1, 1, DType::kFloat32));
    scaled = swapped ? Mul(s, pre) : Mul(pre, s);
    const Tensor shifted = swapped ? Add(o, scaled) : Add(scaled, o);
    y = act == Act::kNone ? shifted : act == Act::kRelu ? Relu(shifted) : Relu6(shifted);
    value = RandomUniform(Shape{2, 5, 7, 3}, 3, -2, 2, DType::kFloat32);
  }
  Feeds FeedsFor(int seed) const {
    return {{x, value},
            {s, RandomUniform(vector_shape, 10 + seed, 0.5, 1.5, DType::kFloat32)},
            {o, RandomUniform(vector_shape, 20 + seed, -0.5, 0.5, DType::kFloat32)}};
  }
  Shape vector_shape;
  Graph graph;
  Tensor x, s, o, conv, scaled, y, value;
};

Both RunBoth(const AffineGraph& g, const std::vector<Fetch>& fetches) {
  Both out;
  Session fused(const_cast<Graph&>(g.graph));
  SessionOptions off;
  off.fuse_ops = false;
  Session unfused(const_cast<Graph&>(g.graph), off);
  for (int run = 0; run < 2; ++run) {
    out.fused.clear();
    out.unfused.clear();
    for (auto& t : fused.Run(fetches, g.FeedsFor(run))) out.fused.push_back(*t);
    for (auto& t : unfused.Run(fetches, g.FeedsFor(run))) out.unfused.push_back(*t);
  }
  out.fused_nodes = fused.last_run_fused_nodes();
  return out;
}

TEST(SessionBatchNormFusionTest, ConvMulAddRunsFusedWithTheUnfusedValues) {
  for (int64_t channels = 1; channels <= 65; channels += 4) {
    for (const bool bias : {false, true}) {
      for (const bool swapped : {false, true}) {
        for (const Act act : {Act::kNone, Act::kRelu, Act::kRelu6}) {
          const std::string what = StrCat(channels, " channels", bias ? " BiasAdd " : " ",
                                          swapped ? "vector first " : "", Name(act));
          const AffineGraph g(channels, bias, act, swapped, Shape{channels});
          const Both r = RunBoth(g, {g.y});
          EXPECT_EQ(r.fused_nodes, 3 + (bias ? 1 : 0) + (act != Act::kNone ? 1 : 0)) << what;
          ExpectClose(r.fused[0], r.unfused[0], what);
        }
      }
    }
  }
}

TEST(SessionBatchNormFusionTest, ConvMulAddOfNoChannelVectorRunsTheNodesOneByOne) {
  for (const Shape& shape : {Shape{}, Shape{1, 1, 1, 6}, Shape{7, 6}}) {
    const AffineGraph g(6, true, Act::kRelu, false, shape);
    const Both r = RunBoth(g, {g.y});
    EXPECT_EQ(r.fused_nodes, 0) << shape;
    ASSERT_EQ(r.fused[0].shape(), r.unfused[0].shape()) << shape;
    const auto a = r.fused[0].data<float>();
    const auto b = r.unfused[0].data<float>();
    for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << shape << " element " << i;
  }
}

TEST(SessionBatchNormFusionTest, FetchingTheScaledConvolutionKeepsTheMulAndAddApart) {
  const AffineGraph g(6, true, Act::kRelu, false, Shape{6});
  const Both r = RunBoth(g, {g.y, g.scaled});
  EXPECT_EQ(r.fused_nodes, 2);  // Conv2D + BiasAdd alone
  ExpectClose(r.fused[0], r.unfused[0], "y");
  ExpectClose(r.fused[1], r.unfused[1], "scaled");
}

}  // namespace
}  // namespace eager
