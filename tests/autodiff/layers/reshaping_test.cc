// Keras's shape layers (autodiff/layers/reshaping.h) element by element
// against index arithmetic done here, and their gradients.

#include "autodiff/layers/reshaping.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/gradient_tape.h"
#include "autodiff/sequential.h"
#include "ops/binary_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "runtime/errors.h"

namespace eager {
namespace {

// d sum(y * w) / dx for a fixed w: for a layer that only moves elements,
// each input element's gradient is the w of where it went (0 if dropped).
std::vector<float> InputGradient(Layer& layer, const Tensor& x, const Tensor& w) {
  GradientTape tape;
  tape.Watch(x);
  const Tensor loss = ReduceSum(Mul(layer(x), w));
  const auto grads = tape.Gradient(loss, {x});
  EXPECT_TRUE(grads[0]);
  return grads[0] ? grads[0]->ToVector<float>() : std::vector<float>{};
}

TEST(ReshapingLayersTest, ActivationByKerasName) {
  const Tensor x = Tensor::FromVector<float>({-1.0f, 0.5f, 2.0f, -3.0f}, Shape{2, 2});
  layers::Activation relu("relu");
  EXPECT_EQ(relu.name().rfind("activation", 0), 0u);
  EXPECT_EQ(relu(x).ToVector<float>(), (std::vector<float>{0.0f, 0.5f, 2.0f, 0.0f}));
  EXPECT_EQ(layers::Activation("linear")(x).ToVector<float>(), x.ToVector<float>());
  const std::vector<float> s = layers::Activation("softmax")(x).ToVector<float>();
  EXPECT_NEAR(s[0], 1.0 / (1.0 + std::exp(1.5)), 1e-6);
  EXPECT_NEAR(s[2] + s[3], 1.0, 1e-6);
  EXPECT_NEAR(layers::Activation("sigmoid")(x).ToVector<float>()[2], 1.0 / (1.0 + std::exp(-2.0)),
              1e-6);
  EXPECT_NEAR(layers::Activation("tanh")(x).ToVector<float>()[1], std::tanh(0.5), 1e-6);
  EXPECT_NEAR(layers::Activation("elu")(x).ToVector<float>()[0], std::exp(-1.0) - 1.0, 1e-6);
  EXPECT_NEAR(layers::Activation("exponential")(x).ToVector<float>()[2], std::exp(2.0), 1e-5);
  EXPECT_THROW(layers::Activation("swishy"), InvalidArgumentError);
  layers::Activation custom([](const Tensor& t) { return Mul(t, t); }, "square");
  EXPECT_EQ(custom.activation_name(), "square");
  EXPECT_EQ(custom(x).ToVector<float>()[3], 9.0f);
  EXPECT_EQ(InputGradient(relu, x, Tensor::FromVector<float>({1, 2, 3, 4}, Shape{2, 2})),
            (std::vector<float>{0, 2, 3, 0}));
}

TEST(ReshapingLayersTest, ReshapeKeepsTheBatchAxis) {
  layers::Reshape reshape({3, -1});
  EXPECT_EQ(reshape.name().rfind("reshape", 0), 0u);
  const Tensor x = RandomNormal(Shape{2, 6}, 1);
  const Tensor y = reshape(x);
  EXPECT_EQ(y.shape(), Shape({2, 3, 2}));
  EXPECT_EQ(y.ToVector<float>(), x.ToVector<float>());
  EXPECT_THROW(layers::Reshape({5})(x), InvalidArgumentError);
  EXPECT_THROW(layers::Reshape({-1, -1}), InvalidArgumentError);
  EXPECT_THROW(layers::Reshape({0, 3}), InvalidArgumentError);
}

TEST(ReshapingLayersTest, PermuteMovesAxesAfterTheBatch) {
  layers::Permute permute({2, 1});
  EXPECT_EQ(permute.name().rfind("permute", 0), 0u);
  const Tensor x = RandomNormal(Shape{2, 3, 4}, 2);
  const Tensor y = permute(x);
  ASSERT_EQ(y.shape(), Shape({2, 4, 3}));
  const std::vector<float> xs = x.ToVector<float>(), ys = y.ToVector<float>();
  for (int b = 0; b < 2; ++b) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 4; ++j) EXPECT_EQ(ys[b * 12 + j * 3 + i], xs[b * 12 + i * 4 + j]);
    }
  }
  EXPECT_THROW(layers::Permute({0, 1}), InvalidArgumentError);
  EXPECT_THROW(layers::Permute({1, 3}), InvalidArgumentError);
  EXPECT_THROW(permute(Tensor::Zeros(Shape{2, 3})), InvalidArgumentError);
}

TEST(ReshapingLayersTest, RepeatVectorRepeatsAlongANewAxis) {
  layers::RepeatVector repeat(3);
  EXPECT_EQ(repeat.name().rfind("repeat_vector", 0), 0u);
  const Tensor x = Tensor::FromVector<float>({1, 2, 3, 4}, Shape{2, 2});
  const Tensor y = repeat(x);
  ASSERT_EQ(y.shape(), Shape({2, 3, 2}));
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  // The gradient sums the copies.
  const Tensor w =
      Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, Shape{2, 3, 2});
  EXPECT_EQ(InputGradient(repeat, x, w), (std::vector<float>{9, 12, 27, 30}));
  EXPECT_THROW(repeat(Tensor::Zeros(Shape{2, 2, 2})), InvalidArgumentError);
  EXPECT_THROW(layers::RepeatVector(0), InvalidArgumentError);
}

TEST(ReshapingLayersTest, ZeroPaddingAndCroppingInvertEachOther) {
  layers::ZeroPadding2D pad(1, 2, 0, 3);
  EXPECT_EQ(pad.name().rfind("zero_padding2d", 0), 0u);
  const Tensor x = RandomNormal(Shape{2, 3, 4, 2}, 3);
  const Tensor y = pad(x);
  ASSERT_EQ(y.shape(), Shape({2, 6, 7, 2}));
  const std::vector<float> xs = x.ToVector<float>(), ys = y.ToVector<float>();
  for (int b = 0; b < 2; ++b) {
    for (int i = 0; i < 6; ++i) {
      for (int j = 0; j < 7; ++j) {
        for (int c = 0; c < 2; ++c) {
          const bool inside = i >= 1 && i < 4 && j < 4;
          const float want = inside ? xs[((b * 3 + (i - 1)) * 4 + j) * 2 + c] : 0.0f;
          EXPECT_EQ(ys[((b * 6 + i) * 7 + j) * 2 + c], want) << b << i << j << c;
        }
      }
    }
  }
  layers::Cropping2D crop(1, 2, 0, 3);
  EXPECT_EQ(crop.name().rfind("cropping2d", 0), 0u);
  EXPECT_EQ(crop(y).ToVector<float>(), xs);
  EXPECT_EQ(layers::ZeroPadding2D().name().rfind("zero_padding2d_", 0), 0u);
  EXPECT_EQ(layers::ZeroPadding2D()(x).shape(), Shape({2, 5, 6, 2}));  // Keras's default 1
  EXPECT_EQ(layers::Cropping2D()(x).ToVector<float>(), xs);            // Keras's default 0
  // Gradients: padding's are the inner slice of w; cropping's w put back
  // with zeros around.
  const Tensor w = RandomNormal(y.shape(), 4);
  EXPECT_EQ(InputGradient(pad, x, w), crop(w).ToVector<float>());
  const Tensor wc = RandomNormal(x.shape(), 5);
  EXPECT_EQ(InputGradient(crop, y, wc), pad(wc).ToVector<float>());
  EXPECT_THROW(pad(Tensor::Zeros(Shape{2, 3})), InvalidArgumentError);
  EXPECT_THROW(layers::Cropping2D(2)(x), InvalidArgumentError);
  EXPECT_THROW(layers::ZeroPadding2D(-1), InvalidArgumentError);
}

TEST(ReshapingLayersTest, InASequentialWithNothingToSave) {
  Sequential model;
  model.Add(std::make_unique<layers::ZeroPadding2D>(1));
  model.Add(std::make_unique<layers::Cropping2D>(1));
  model.Add(std::make_unique<layers::Reshape>(std::vector<int64_t>{-1}));
  model.Add(std::make_unique<layers::RepeatVector>(2));
  model.Add(std::make_unique<layers::Permute>(std::vector<int64_t>{2, 1}));
  model.Add(std::make_unique<layers::Activation>("relu"));
  const Tensor x = RandomNormal(Shape{2, 2, 2, 1}, 6);
  const Tensor y = model(x, true);
  EXPECT_EQ(y.shape(), Shape({2, 4, 2}));
  EXPECT_TRUE(model.Variables().empty());
  std::vector<std::string> edges;
  for (const auto& c : model.Children()) edges.push_back(c.name);
  EXPECT_EQ(edges.size(), 6u);
  EXPECT_EQ(edges[0], "layer-0");
}

}  // namespace
}  // namespace eager
