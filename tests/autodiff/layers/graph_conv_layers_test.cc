// The conv and pooling layers in graph mode: built inside Graph::AsDefault
// on a placeholder of unknown batch, they add TF's nodes under their name
// scopes, and a Session computes what the same layers compute eagerly.

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "autodiff/gradient_tape.h"
#include "autodiff/graph_gradients.h"
#include "autodiff/layers/conv.h"
#include "autodiff/layers/pooling.h"
#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/names.h"

namespace eager::layers {
namespace {

// A small CNN (with an upsampling Conv2DTranspose) over [?, 9, 8, 3] images and a 1D branch over
// [?, 10, 3].
struct Net {
  Conv2D conv{4, {3, 3}, {.padding = "same", .activation = Relu, .seed = 1}};
  MaxPooling2D pool;
  DepthwiseConv2D depthwise{{2, 2}, {.depth_multiplier = 2, .activation = Tanh, .seed = 2}};
  AveragePooling2D avg{{2, 2}, {.strides = std::array<int64_t, 2>{1, 1}, .padding = "same"}};
  Conv2DTranspose up{8, {2, 2}, {.strides = {2, 2}, .seed = 4}};
  GlobalAveragePooling2D gap;
  Conv1D conv1d{3, 3, {.strides = 2, .padding = "same", .seed = 3}};
  Conv1D causal{3, 2, {.padding = "causal", .dilation_rate = 2, .activation = Tanh, .seed = 5}};
  MaxPooling1D pool1d{2};
  GlobalMaxPooling1D gmp1d;

  Tensor Images(const Tensor& x) { return gap(up(avg(depthwise(pool(conv(x)))))); }
  Tensor Sequences(const Tensor& s) { return gmp1d(pool1d(conv1d(causal(s)))); }
  std::vector<Variable*> Kernels() {
    return {&conv.kernel(),   conv.bias(),     &depthwise.depthwise_kernel(),
            depthwise.bias(), &up.kernel(),    up.bias(),
            &conv1d.kernel(), &causal.kernel()};
  }
};

// A loss that weighs every output differently, so no gradient is uniform.
Tensor Loss(const Tensor& images, const Tensor& sequences) {
  const Tensor w8 = Tensor::FromVector<float>({1, -2, 3, 0.5f, -1, 2, 0.25f, 1.5f}, Shape{8});
  const Tensor w3 = Tensor::FromVector<float>({-1, 0.5f, 2}, Shape{3});
  return Add(ReduceSum(Mul(images, w8)), ReduceSum(Mul(sequences, w3)));
}

void ExpectNear(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  const std::vector<float> g = got.ToVector<float>(), w = want.ToVector<float>();
  for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], 1e-5f) << "at " << i;
}

// Forward, and the gradients of every kernel and bias (TF's backward ops:
// Conv2DBackprop*, DepthwiseConv2dNativeBackprop*, MaxPoolGrad, AvgPoolGrad
// with the input's shape taken at run time).
TEST(GraphConvLayersTest, RunInASessionAsEagerlyWithUnknownBatch) {
  ResetDefaultNames();
  const Tensor x = RandomNormal(Shape{2, 9, 8, 3}, 7);
  const Tensor s = RandomNormal(Shape{2, 10, 3}, 8);
  Net eager_net;
  const Tensor eager_images = eager_net.Images(x);
  const Tensor eager_sequences = eager_net.Sequences(s);
  GradientTape tape;
  const Tensor eager_loss = Loss(eager_net.Images(x), eager_net.Sequences(s));
  const std::vector<Variable*> eager_vars = eager_net.Kernels();
  const std::vector<std::optional<Tensor>> eager_grads = tape.Gradient(
      eager_loss, std::span<const Variable* const>(eager_vars.data(), eager_vars.size()));

  ResetDefaultNames();
  Graph graph;
  Graph::AsDefault in(graph);
  Net net;  // the same names and seeds, so the same initial kernels
  const Tensor xp = Placeholder(DType::kFloat32, Shape::Partial({-1, 9, 8, 3}), "x");
  const Tensor sp = Placeholder(DType::kFloat32, Shape::Partial({-1, 10, 3}), "s");
  const Tensor images = net.Images(xp);
  const Tensor sequences = net.Sequences(sp);
  EXPECT_EQ(images.shape().ToString(), "[?,8]");
  EXPECT_EQ(sequences.shape().ToString(), "[?,3]");
  EXPECT_EQ(graph.FindNode("conv2d/Conv2D")->op, "Conv2D");
  EXPECT_EQ(graph.FindNode("depthwise_conv2d/DepthwiseConv2dNative")->op, "DepthwiseConv2dNative");
  EXPECT_EQ(graph.FindNode("max_pooling2d/MaxPool")->op, "MaxPool");
  EXPECT_EQ(graph.FindNode("average_pooling2d/AvgPool")->op, "AvgPool");
  EXPECT_EQ(graph.FindNode("conv2d_transpose/Conv2DBackpropInput")->op, "Conv2DBackpropInput");
  EXPECT_EQ(net.conv.kernel().name(), "conv2d/kernel:0");

  const std::vector<Variable*> vars = net.Kernels();
  const std::vector<std::optional<Tensor>> grads =
      Gradients(Loss(images, sequences), std::span<Variable* const>(vars.data(), vars.size()));
  EXPECT_NE(graph.FindNode("gradients/average_pooling2d/AvgPool_grad/AvgPoolGrad"), nullptr);

  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  auto out = sess.Run({images, sequences}, {{xp, x}, {sp, s}});
  ExpectNear(*out[0], eager_images);
  ExpectNear(*out[1], eager_sequences);
  for (size_t i = 0; i < vars.size(); ++i) {
    SCOPED_TRACE(vars[i]->name());
    ASSERT_TRUE(grads[i].has_value() && eager_grads[i].has_value());
    ExpectNear(sess.Run(*grads[i], {{xp, x}, {sp, s}}), *eager_grads[i]);
  }
}

}  // namespace
}  // namespace eager::layers
