// FusedConv2D (ops/fused_conv.h): the unfused Conv2D, BiasAdd and Relu (bit
// for bit on the im2col path, to float32 rounding on oneDNN's), the same
// bits on any thread count, its gradient against the unfused ops'
// gradients (fused pass and the ops a recording tape sees), the graph's
// unfused nodes and its errors. Its gradient against finite differences is
// in op_gradient_test.cc.

#include "ops/fused_conv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ops/array_ops.h"
#include "ops/conv_ops.h"
#include "ops/graph_ops.h"
#include "ops/nn_ops.h"
#include "ops/random_generator.h"
#include "ops/recorder.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/threads.h"
#include "tests/testing/tensor_compare.h"

namespace eager {
namespace {

using testing::SameBits;
using testing::WorstError;

using Grads = std::vector<std::optional<Tensor>>;

Tensor Sizes(const Shape& shape) {
  std::vector<int32_t> dims;
  for (int64_t d : shape.dims()) dims.push_back(static_cast<int32_t>(d));
  return Tensor::FromVector<int32_t>(dims);
}

Attrs FusedAttrs(const Conv2DOptions& o, bool relu) {
  return Attrs{{"strides", o.strides},
               {"padding", o.padding},
               {"data_format", std::string("NHWC")},
               {"dilations", o.dilations},
               {"relu", relu}};
}

// Records nothing, but makes IsRecording() true while registered.
class IdleRecorder final : public OpRecorder {
 public:
  bool ShouldRecord(const OpDef&, std::span<const Tensor>) override { return false; }
  void Record(const OpCall&) override {}
};

struct Case {
  Shape input;
  Shape filter;
  Conv2DOptions options;
};

// The main job's layers (batch 5: oneDNN's chunks are uneven on 2 cores),
// a stride, VALID padding, a dilation and channel counts oneDNN's vector
// kernels take and some they do not.
std::vector<Case> Cases() {
  return {
      {Shape{5, 28, 28, 1}, Shape{5, 5, 1, 32}, {.padding = "SAME"}},
      {Shape{5, 14, 14, 32}, Shape{5, 5, 32, 64}, {.padding = "SAME"}},
      {Shape{3, 11, 9, 3}, Shape{3, 2, 3, 4}, {.strides = {1, 2, 2, 1}, .padding = "SAME"}},
      {Shape{2, 9, 9, 16}, Shape{3, 3, 16, 16}, {.padding = "VALID"}},
      {Shape{2, 9, 9, 16}, Shape{3, 3, 16, 32}, {.padding = "SAME", .dilations = {1, 2, 2, 1}}}};
}

class FusedConv2DTest : public ::testing::Test {
 protected:
  void TearDown() override { SetNumThreads(saved_); }
  const int saved_ = GetNumThreads();
};

TEST_F(FusedConv2DTest, EqualsConvBiasAddReluOnAnyThreadCount) {
  uint64_t seed = 1;
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (const Case& c : Cases()) {
      const Tensor x = RandomUniform(c.input, seed++, -1, 1, dtype);
      const Tensor w = RandomUniform(c.filter, seed++, -0.5, 0.5, dtype);
      const Tensor b = RandomUniform(Shape{c.filter.dim(3)}, seed++, -1, 1, dtype);
      for (bool relu : {false, true}) {
        SCOPED_TRACE(::testing::Message() << dtype << " input " << c.input << " filter " << c.filter
                                          << " relu " << relu);
        SetNumThreads(1);
        const Tensor sum = BiasAdd(Conv2D(x, w, c.options), b);
        const Tensor want = relu ? Relu(sum) : sum;
        const Tensor got = FusedConv2D(x, w, b, relu, c.options);
        if (dtype == DType::kFloat64) {  // im2col + GEMM, then one pass
          EXPECT_TRUE(SameBits(got, want));
        } else {  // oneDNN adds the bias inside its kernel
          EXPECT_LE(WorstError(got, want), 2e-6);
        }
        SetNumThreads(2);
        EXPECT_TRUE(SameBits(FusedConv2D(x, w, b, relu, c.options), got));
      }
    }
  }
}

TEST_F(FusedConv2DTest, ReluZeroesExactlyTheNegativeSums) {
  // A 1x1 filter of 1 over [[1, -2], [3, -4]] (one channel), bias 0.5.
  const Tensor x = Tensor::FromVector<float>({1, -2, 3, -4}, Shape{1, 2, 2, 1});
  const Tensor w = Tensor::FromVector<float>({1}, Shape{1, 1, 1, 1});
  const Tensor b = Tensor::FromVector<float>({0.5f}, Shape{1});
  EXPECT_EQ(FusedConv2D(x, w, b, false).ToVector<float>(),
            (std::vector<float>{1.5f, -1.5f, 3.5f, -3.5f}));
  EXPECT_EQ(FusedConv2D(x, w, b, true).ToVector<float>(), (std::vector<float>{1.5f, 0, 3.5f, 0}));
}

// The gradient function against the unfused ops' gradients on the same
// output y: ReluGrad(g, y), its sum over batch and pixels, Conv2D's two
// gradient ops on it. The fused pass (no tape records) and the ops an outer
// tape would record give the same values; neither depends on the threads.
TEST_F(FusedConv2DTest, GradientIsTheUnfusedOpsGradient) {
  uint64_t seed = 100;
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (const Case& c : Cases()) {
      for (bool relu : {false, true}) {
        SCOPED_TRACE(::testing::Message() << dtype << " input " << c.input << " filter " << c.filter
                                          << " relu " << relu);
        const Tensor x = RandomUniform(c.input, seed++, -1, 1, dtype);
        const Tensor w = RandomUniform(c.filter, seed++, -0.5, 0.5, dtype);
        const Tensor b = RandomUniform(Shape{c.filter.dim(3)}, seed++, -0.2, 0.2, dtype);
        SetNumThreads(1);
        const Tensor y = FusedConv2D(x, w, b, relu, c.options);
        const Tensor g = RandomUniform(y.shape(), seed++, -1, 1, dtype);
        const OpCall call{&kFusedConv2DOp, {x, w, b}, y, FusedAttrs(c.options, relu)};
        const Tensor dz = relu ? ReluGrad(g, y) : g;
        const Tensor want_dx = Conv2DBackpropInput(Sizes(x.shape()), w, dz, c.options);
        const Tensor want_dw = Conv2DBackpropFilter(x, Sizes(w.shape()), dz, c.options);
        const Tensor want_db = ReduceSum(Cast(dz, DType::kFloat64), {0, 1, 2});
        const Grads fused = kFusedConv2DOp.gradient(call, g);
        ASSERT_EQ(fused.size(), 3u);
        ASSERT_TRUE(fused[0] && fused[1] && fused[2]);
        EXPECT_TRUE(SameBits(*fused[0], want_dx));
        EXPECT_TRUE(SameBits(*fused[1], want_dw));
        EXPECT_LE(WorstError(*fused[2], want_db), dtype == DType::kFloat32 ? 1e-5 : 1e-12);
        {
          IdleRecorder recorder;
          const ScopedRecording recording(&recorder);
          ASSERT_TRUE(IsRecording());
          const Grads ops = kFusedConv2DOp.gradient(call, g);
          EXPECT_TRUE(SameBits(*ops[0], want_dx));
          EXPECT_TRUE(SameBits(*ops[1], want_dw));
          EXPECT_LE(WorstError(*ops[2], want_db), dtype == DType::kFloat32 ? 1e-5 : 1e-12);
        }
        EXPECT_FALSE(IsRecording());
        SetNumThreads(2);
        const Grads two = kFusedConv2DOp.gradient(call, g);
        for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(SameBits(*two[i], *fused[i])) << "input " << i;
      }
    }
  }
}

TEST_F(FusedConv2DTest, SkipsTheGradientsNobodyWants) {
  const Tensor x = RandomUniform(Shape{2, 6, 6, 3}, 1, -1, 1);
  const Tensor w = RandomUniform(Shape{3, 3, 3, 4}, 2, -1, 1);
  const Tensor b = RandomUniform(Shape{4}, 3, -1, 1);
  const Conv2DOptions o{.padding = "SAME"};
  OpCall call{&kFusedConv2DOp, {x, w, b}, FusedConv2D(x, w, b, true, o), FusedAttrs(o, true)};
  const Tensor g = RandomUniform(call.output.shape(), 4, -1, 1);
  call.skip_gradient = 0b101;  // only the filter's
  const Grads grads = kFusedConv2DOp.gradient(call, g);
  ASSERT_EQ(grads.size(), 3u);
  EXPECT_FALSE(grads[0].has_value());
  ASSERT_TRUE(grads[1].has_value());
  EXPECT_FALSE(grads[2].has_value());
  EXPECT_TRUE(
      SameBits(*grads[1], Conv2DBackpropFilter(x, Sizes(w.shape()), ReluGrad(g, call.output), o)));
}

// Many rows (more than one block of the fused pass) of a constant gradient:
// each channel's sum is exact in float32.
TEST_F(FusedConv2DTest, BiasGradientSumsEveryRow) {
  const Shape shape{7, 30, 30, 2};  // 6300 rows
  std::vector<float> g(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < g.size(); ++i) g[i] = i % 2 == 0 ? 0.5f : -0.25f;
  const Tensor x = Tensor::Zeros(shape);
  const Tensor w = Tensor::Zeros(Shape{1, 1, 2, 2});
  const Tensor b = Tensor::FromVector<float>({1, 1}, Shape{2});  // y = 1 > 0 everywhere
  const Conv2DOptions o;
  const OpCall call{&kFusedConv2DOp, {x, w, b}, FusedConv2D(x, w, b, true, o), FusedAttrs(o, true)};
  const Grads grads = kFusedConv2DOp.gradient(call, Tensor::FromVector<float>(g, shape));
  EXPECT_EQ(grads[2]->ToVector<float>(), (std::vector<float>{3150.0f, -1575.0f}));
}

TEST_F(FusedConv2DTest, InAGraphAddsTheUnfusedNodes) {
  const Tensor x = RandomUniform(Shape{2, 5, 5, 3}, 4, -1, 1);
  const Tensor w = RandomUniform(Shape{3, 3, 3, 4}, 5, -1, 1);
  const Tensor b = RandomUniform(Shape{4}, 6, -1, 1);
  const Conv2DOptions o{.padding = "SAME"};
  Graph graph;
  Tensor y;
  {
    Graph::AsDefault in(graph);
    y = FusedConv2D(Constant(x), Constant(w), Constant(b), true, o);
  }
  std::vector<std::string> ops;
  ops.reserve(static_cast<size_t>(graph.num_nodes()));
  for (int i = 0; i < graph.num_nodes(); ++i) ops.push_back(graph.node(i).op);
  EXPECT_EQ(ops,
            (std::vector<std::string>{"Const", "Const", "Const", "Conv2D", "BiasAdd", "Relu"}));
  EXPECT_LE(WorstError(Session(graph).Run(y), FusedConv2D(x, w, b, true, o)), 2e-6);
}

TEST_F(FusedConv2DTest, RejectsABiasThatIsNotAsLongAsTheOutputChannels) {
  const Tensor x = Tensor::Zeros(Shape{1, 4, 4, 2});
  const Tensor w = Tensor::Zeros(Shape{3, 3, 2, 5});
  try {
    FusedConv2D(x, w, Tensor::Zeros(Shape{2}), true);
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("_FusedConv2D"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("as long as the filter's 5 output channels; got "
                                               "bias [2] for filter [3,3,2,5]"));
  }
  EXPECT_THROW(FusedConv2D(x, w, Tensor::Zeros(Shape{1, 5}), true), InvalidArgumentError);
  EXPECT_THROW(FusedConv2D(x, w, Tensor::Zeros(Shape{5}, DType::kFloat64), true),
               InvalidArgumentError);
  // Conv2D's own checks.
  EXPECT_THROW(FusedConv2D(x, Tensor::Zeros(Shape{3, 3, 3, 5}), Tensor::Zeros(Shape{5}), true),
               InvalidArgumentError);
  EXPECT_THROW(FusedConv2D(x, w, Tensor::Zeros(Shape{5}), true, {.padding = "FULL"}),
               InvalidArgumentError);
}

}  // namespace
}  // namespace eager
