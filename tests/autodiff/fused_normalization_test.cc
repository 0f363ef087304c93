// The fused batch-normalization ops (ops/fused_normalization.h) against the
// unfused ReduceMean / SquaredDifference / Mul / Add ops they replace:
// values and gradients (the fused pass, and the ops a recording tape sees),
// the same bits on one and two threads, second derivatives, the graph's
// unfused nodes, bad shapes. The BatchNormalization layer that runs them is
// judged by Keras (tests/tf_keras/keras_layers_test.py, keras_zoo_test.py)
// and against finite differences (tests/autodiff/normalization_test.cc).

#include "ops/fused_normalization.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "autodiff/gradient_tape.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "ops/shape_ops.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/threads.h"
#include "tests/testing/tensor_compare.h"

namespace eager {
namespace {

using testing::SameBits;
using testing::WorstError;

std::vector<int64_t> BatchAxes(const Tensor& x) {
  std::vector<int64_t> axes;
  for (int i = 0; i + 1 < x.rank(); ++i) axes.push_back(i);
  return axes;
}

// Keras's moments as the BatchNormalization layer computed them before.
Tensor UnfusedMoments(const Tensor& x) {
  const Tensor mean = ReduceMean(x, BatchAxes(x));
  return Pack({mean, ReduceMean(SquaredDifference(x, StopGradient(mean)), BatchAxes(x))}, 0);
}

// A conv activation at batch 8, a dense layer's output, one row.
std::vector<Shape> Shapes() { return {Shape{8, 6, 5, 64}, Shape{33, 7}, Shape{1, 5}}; }

class FusedNormalizationTest : public ::testing::Test {
 protected:
  void TearDown() override { SetNumThreads(saved_); }
  const int saved_ = GetNumThreads();
};

TEST_F(FusedNormalizationTest, MomentsAreTheUnfusedOnesOnAnyThreadCount) {
  uint64_t seed = 1;
  for (const Shape& shape : Shapes()) {
    SCOPED_TRACE(::testing::Message() << shape);
    // An offset mean: the variance must be taken about it, not from sums of
    // squares.
    const Tensor x = Add(RandomUniform(shape, seed++, -1, 1), Tensor::Scalar<float>(100.0f));
    SetNumThreads(1);
    const Tensor moments = BatchMoments(x);
    EXPECT_LE(WorstError(moments, UnfusedMoments(x)), 1e-6);
    SetNumThreads(2);
    EXPECT_TRUE(SameBits(BatchMoments(x), moments));
  }
}

TEST_F(FusedNormalizationTest, ScaleShiftIsMulThenAddBitForBit) {
  const Tensor x = RandomUniform(Shape{8, 6, 5, 64}, 3, -2, 2);
  const Tensor a = RandomUniform(Shape{64}, 4, -1, 1);
  const Tensor b = RandomUniform(Shape{64}, 5, -1, 1);
  for (int threads : {1, 2}) {
    SetNumThreads(threads);
    EXPECT_TRUE(SameBits(ChannelScaleShift(x, a, b), Add(Mul(x, a), b)));
  }
}

TEST_F(FusedNormalizationTest, GradientsAreTheUnfusedOpsGradients) {
  uint64_t seed = 10;
  for (const Shape& shape : Shapes()) {
    SCOPED_TRACE(::testing::Message() << shape);
    const int64_t channels = shape.dim(shape.rank() - 1);
    const Tensor x = RandomUniform(shape, seed++, -2, 2);
    const Tensor gamma = RandomUniform(Shape{channels}, seed++, 0.5, 1.5);
    const Tensor beta = RandomUniform(Shape{channels}, seed++, -1, 1);
    const Tensor w = RandomUniform(shape, seed++, -1, 1);
    // Keras's BatchNormalization in training, fused or not, and a loss
    // weighting every output differently.
    const auto loss = [&](bool fused) {
      const Tensor moments = fused ? BatchMoments(x) : UnfusedMoments(x);
      const Tensor mean = Reshape(Slice(moments, {0, 0}, {1, -1}), {channels});
      const Tensor variance = Reshape(Slice(moments, {1, 0}, {1, -1}), {channels});
      const Tensor inv = Mul(Rsqrt(Add(variance, Tensor::Scalar<float>(1e-3f))), gamma);
      const Tensor shift = Sub(beta, Mul(mean, inv));
      const Tensor y = fused ? ChannelScaleShift(x, inv, shift) : Add(Mul(x, inv), shift);
      return ReduceSum(Mul(y, w));
    };
    const auto gradients = [&](bool fused, bool persistent) {
      GradientTape tape(persistent);
      for (const Tensor* t : {&x, &gamma, &beta}) tape.Watch(*t);
      std::vector<Tensor> out;
      for (auto& g : tape.Gradient(loss(fused), {x, gamma, beta})) out.push_back(*g);
      return out;
    };
    const std::vector<Tensor> want = gradients(false, false);
    for (int threads : {1, 2}) {
      SetNumThreads(threads);
      const std::vector<Tensor> got = gradients(true, false);
      for (size_t i = 0; i < 3; ++i) EXPECT_LE(WorstError(got[i], want[i]), 2e-5) << i;
      if (threads == 2) {
        SetNumThreads(1);
        const std::vector<Tensor> one = gradients(true, false);
        for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(SameBits(got[i], one[i])) << i;
      }
    }
    // A tape recording its own backward pass gets the gradients as ops.
    const std::vector<Tensor> recorded = gradients(true, true);
    for (size_t i = 0; i < 3; ++i) EXPECT_LE(WorstError(recorded[i], want[i]), 2e-5) << i;
  }
}

TEST_F(FusedNormalizationTest, RecordedGradientsDifferentiateAgain) {
  const Tensor x = RandomUniform(Shape{6, 4}, 7, -2, 2);
  const Tensor v = RandomUniform(Shape{6, 4}, 8, -1, 1);
  const auto second = [&](bool fused) {
    GradientTape tape(/*persistent=*/true);
    tape.Watch(x);
    const Tensor m = fused ? BatchMoments(x) : UnfusedMoments(x);
    const Tensor y = fused ? ChannelScaleShift(x, Reshape(Slice(m, {1, 0}, {1, -1}), {4}),
                                               Reshape(Slice(m, {0, 0}, {1, -1}), {4}))
                           : Add(Mul(x, Reshape(Slice(m, {1, 0}, {1, -1}), {4})),
                                 Reshape(Slice(m, {0, 0}, {1, -1}), {4}));
    const Tensor dx = *tape.Gradient(ReduceSum(Mul(y, y)), {x})[0];
    return *tape.Gradient(ReduceSum(Mul(dx, v)), {x})[0];
  };
  const Tensor want = second(false);
  EXPECT_GT(ReduceSum(Abs(want)).scalar<float>(), 0.0f);
  EXPECT_LE(WorstError(second(true), want), 1e-4);
}

TEST_F(FusedNormalizationTest, InAGraphAddsTheUnfusedNodes) {
  const Tensor x = RandomUniform(Shape{4, 3}, 4, -1, 1);
  const Tensor a = RandomUniform(Shape{3}, 5, -1, 1);
  Graph graph;
  Tensor y, m;
  {
    Graph::AsDefault in(graph);
    const Tensor xc = Constant(x);
    m = BatchMoments(xc);
    y = ChannelScaleShift(xc, Constant(a), Constant(a));
  }
  for (int i = 0; i < graph.num_nodes(); ++i) {
    EXPECT_EQ(graph.node(i).op.find("_B"), std::string::npos) << graph.node(i).op;
    EXPECT_EQ(graph.node(i).op.find("_C"), std::string::npos) << graph.node(i).op;
  }
  Session session(graph);
  EXPECT_LE(WorstError(session.Run(m), BatchMoments(x)), 1e-6);
  EXPECT_TRUE(SameBits(session.Run(y), ChannelScaleShift(x, a, a)));
}

TEST_F(FusedNormalizationTest, Float64TakesTheUnfusedOps) {
  const Tensor x = RandomUniform(Shape{5, 3}, 4, -1, 1, DType::kFloat64);
  EXPECT_TRUE(SameBits(BatchMoments(x), UnfusedMoments(x)));
}

TEST_F(FusedNormalizationTest, RejectsShapesThatDoNotFit) {
  const Tensor x = RandomUniform(Shape{4, 3}, 4, -1, 1);
  const Tensor three = RandomUniform(Shape{3}, 5, -1, 1);
  for (const Tensor& bad : {RandomUniform(Shape{4}, 5, -1, 1), RandomUniform(Shape{1, 3}, 5, -1, 1),
                            RandomUniform(Shape{3}, 5, -1, 1, DType::kFloat64)}) {
    try {
      ChannelScaleShift(x, bad, three);
      ADD_FAILURE() << "accepted scale " << bad.shape();
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(
          std::string(e.what()).find("_ChannelScaleShift: expected scale and shift float32 [3]"),
          std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(BatchMoments(Tensor::Scalar<float>(1.0f)), InvalidArgumentError);
  EXPECT_THROW(BatchMoments(Tensor::FromVector<int32_t>({1, 2}, Shape{2})), InvalidArgumentError);
}

}  // namespace
}  // namespace eager
