// Adam's amsgrad and Keras's gradient clipping, against TensorFlow's
// published formulas:
// - amsgrad: tf_keras/src/optimizers/legacy/adam.py (_create_slots adds
//   "vhat" after all "m" and "v"; _resource_apply_dense runs
//   ResourceApplyAdamWithAmsgrad), whose CPU functor in
//   tensorflow/core/kernels/training_ops.cc is m += (g - m) * (1 - beta1),
//   v += (g^2 - v) * (1 - beta2), vhat = max(vhat, v),
//   var -= (m * alpha) / (sqrt(vhat) + epsilon). The first three steps
//   below were also run in TF 2.21 (tf_keras.optimizers.legacy.Adam).
// - clipping: tf_keras/src/optimizers/legacy/optimizer_v2.py
//   _transform_gradients (clipvalue, then clipnorm, then global_clipnorm)
//   and tensorflow/python/ops/clip_ops.py (clip_by_value, clip_by_norm,
//   clip_by_global_norm).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "autodiff/adam.h"
#include "autodiff/sgd.h"

namespace eager {
namespace {

// tf_keras's amsgrad step in float32, in the kernel's order.
struct AmsgradReference {
  std::vector<float> var, m, v, vhat;
  int64_t t = 0;
  void Step(const std::vector<float>& g, float lr = 0.001f, float b1 = 0.9f, float b2 = 0.999f,
            float eps = 1e-7f) {
    ++t;
    const float b1p = std::pow(b1, static_cast<float>(t));
    const float b2p = std::pow(b2, static_cast<float>(t));
    const float alpha = lr * std::sqrt(1.0f - b2p) / (1.0f - b1p);
    for (size_t i = 0; i < var.size(); ++i) {
      m[i] = m[i] + (g[i] - m[i]) * (1.0f - b1);
      v[i] = v[i] + (g[i] * g[i] - v[i]) * (1.0f - b2);
      vhat[i] = std::max(vhat[i], v[i]);
      var[i] = var[i] - (m[i] * alpha) / (std::sqrt(vhat[i]) + eps);
    }
  }
};

TEST(AdamAmsgradTest, FollowsApplyAdamWithAmsgradStepByStep) {
  AdamOptions options;
  options.amsgrad = true;
  Adam adam(options);
  Variable w(Tensor::Vector<float>({1.0f, -2.0f, 0.5f}), "w");
  AmsgradReference ref{{1.0f, -2.0f, 0.5f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  // A large gradient then small ones: vhat keeps the large v, so amsgrad's
  // steps differ from plain Adam's.
  const std::vector<std::vector<float>> grads = {
      {3.0f, -1.0f, 0.25f}, {0.1f, 0.2f, -0.3f}, {0.05f, -0.01f, 0.0f}, {-2.0f, 0.5f, 1.0f}};
  for (const std::vector<float>& g : grads) {
    adam.ApplyGradients({{Tensor::FromVector<float>(g), &w}});
    ref.Step(g);
    EXPECT_EQ(w.value().ToVector<float>(), ref.var) << "step " << ref.t;
    EXPECT_EQ(adam.GetSlot(w, "vhat")->value().ToVector<float>(), ref.vhat);
    EXPECT_EQ(adam.GetSlot(w, "v")->value().ToVector<float>(), ref.v);
    if (ref.t == 3) {
      // v decays after the first 3^2; vhat keeps its maximum.
      EXPECT_GT(ref.vhat[0], ref.v[0]);
    }
  }
}

// TF 2.21, tf_keras.optimizers.legacy.Adam(amsgrad=True) on w = [1, -2]
// with gradients [3, -1] then [0.1, 0.2] then [0.05, -0.01]: vhat ends at
// [0.009000884, 0.0010389866] and w at [0.99775827, -1.9980878] (TF's
// printed float32 values, 8 significant digits).
TEST(AdamAmsgradTest, MatchesTensorFlowPrintedValues) {
  AdamOptions options;
  options.amsgrad = true;
  Adam adam(options);
  Variable w(Tensor::Vector<float>({1.0f, -2.0f}), "w");
  for (const std::vector<float>& g :
       std::vector<std::vector<float>>{{3, -1}, {0.1f, 0.2f}, {0.05f, -0.01f}}) {
    adam.ApplyGradients({{Tensor::FromVector<float>(g), &w}});
  }
  const std::vector<float> vhat = adam.GetSlot(w, "vhat")->value().ToVector<float>();
  const std::vector<float> value = w.value().ToVector<float>();
  EXPECT_FLOAT_EQ(vhat[0], 0.009000884f);
  EXPECT_FLOAT_EQ(vhat[1], 0.0010389866f);
  EXPECT_FLOAT_EQ(value[0], 0.99775827f);
  EXPECT_FLOAT_EQ(value[1], -1.9980878f);
}

TEST(AdamAmsgradTest, SlotsAreNamedAndOrderedAsKeras) {
  AdamOptions options;
  options.amsgrad = true;
  options.name = "AmsAdam";
  Adam adam(options);
  Variable a(Tensor::Vector<float>({1}), "a");
  Variable b(Tensor::Vector<float>({2}), "b");
  adam.ApplyGradients({{Tensor::Vector<float>({1}), &a}, {Tensor::Vector<float>({1}), &b}});
  EXPECT_EQ(adam.slot_names(), (std::vector<std::string>{"m", "v", "vhat"}));
  std::vector<std::string> order;
  for (const Trackable::Slot& slot : adam.Slots()) {
    order.push_back(slot.name + ":" + std::string(slot.original->shared_name()));
  }
  ASSERT_EQ(order.size(), 6u);
  EXPECT_EQ(order[4].substr(0, 5), "vhat:");
  EXPECT_EQ(order[5].substr(0, 5), "vhat:");
  const std::string vhat_name(adam.GetSlot(a, "vhat")->shared_name());
  EXPECT_EQ(vhat_name, adam.scope() + std::string(a.shared_name()) + "/vhat");
}

TEST(AdamAmsgradTest, NotATf1Option) {
  AdamOptions options;
  options.amsgrad = true;
  options.tf1_compatible = true;
  EXPECT_THROW(Adam{options}, InvalidArgumentError);
}

// clip_by_value: maximum(minimum(g, c), -c), elementwise, exact.
TEST(GradientClippingTest, ClipValueBoundsEachElement) {
  SGD sgd(1.0);
  sgd.SetGradientClipping({.clipvalue = 0.5});
  Variable w(Tensor::Vector<float>({0, 0, 0, 0}), "w");
  sgd.ApplyGradients({{Tensor::Vector<float>({2.0f, -3.0f, 0.25f, -0.5f}), &w}});
  EXPECT_EQ(w.value().ToVector<float>(), std::vector<float>({-0.5f, 0.5f, -0.25f, 0.5f}));
}

// clip_by_norm per variable: g * c / max(||g||, c); a gradient already
// inside the ball is unchanged, an all-zero one stays zero.
TEST(GradientClippingTest, ClipNormScalesEachGradientToItsOwnNorm) {
  SGD sgd(1.0);
  sgd.SetGradientClipping({.clipnorm = 1.0});
  Variable a(Tensor::Vector<float>({0, 0}), "a");
  Variable b(Tensor::Vector<float>({0, 0}), "b");
  Variable z(Tensor::Vector<float>({0, 0}), "z");
  sgd.ApplyGradients({{Tensor::Vector<float>({3, 4}), &a},
                      {Tensor::Vector<float>({0.3f, 0.4f}), &b},
                      {Tensor::Vector<float>({0, 0}), &z}});
  // ||[3, 4]|| = 5 exactly: (3 * 1) / 5, (4 * 1) / 5 in float32.
  EXPECT_EQ(a.value().ToVector<float>(), std::vector<float>({-(3.0f / 5.0f), -(4.0f / 5.0f)}));
  EXPECT_EQ(b.value().ToVector<float>(), std::vector<float>({-0.3f, -0.4f}));
  EXPECT_EQ(z.value().ToVector<float>(), std::vector<float>({0, 0}));
}

// clip_by_global_norm: every gradient times c * min(1 / N, 1 / c) with N
// the norm over all of them together.
TEST(GradientClippingTest, GlobalClipNormScalesAllGradientsTogether) {
  SGD sgd(1.0);
  sgd.SetGradientClipping({.global_clipnorm = 2.0});
  Variable a(Tensor::Vector<double>({0, 0}), "a");
  Variable b(Tensor::Vector<double>({0}), "b");
  const std::vector<double> ga = {3, 4}, gb = {12};
  sgd.ApplyGradients({{Tensor::FromVector<double>(ga), &a}, {Tensor::FromVector<double>(gb), &b}});
  const double norm = std::sqrt(9.0 + 16.0 + 144.0);  // 13
  const double scale = 2.0 / norm;
  EXPECT_THAT(a.value().ToVector<double>(),
              ::testing::ElementsAre(::testing::DoubleNear(-3 * scale, 1e-15),
                                     ::testing::DoubleNear(-4 * scale, 1e-15)));
  EXPECT_THAT(b.value().ToVector<double>(),
              ::testing::ElementsAre(::testing::DoubleNear(-12 * scale, 1e-15)));
  // The clipped gradients' global norm is c.
  const std::vector<double> ua = a.value().ToVector<double>(), ub = b.value().ToVector<double>();
  EXPECT_NEAR(std::sqrt(ua[0] * ua[0] + ua[1] * ua[1] + ub[0] * ub[0]), 2.0, 1e-14);
}

TEST(GradientClippingTest, GlobalClipNormLeavesSmallGradientsAndPoisonsNonFinite) {
  SGD sgd(1.0);
  sgd.SetGradientClipping({.global_clipnorm = 10.0});
  Variable a(Tensor::Vector<float>({0, 0}), "a");
  sgd.ApplyGradients({{Tensor::Vector<float>({0.5f, -0.25f}), &a}});
  // scale = 10 * min(1 / N, 1 / 10) = 10 * 0.1f: 1 up to float32 rounding.
  const float scale = 10.0f * (1.0f / 10.0f);
  EXPECT_EQ(a.value().ToVector<float>(), std::vector<float>({-(0.5f * scale), 0.25f * scale}));
  // An infinite gradient makes the norm infinite: TF's (N - N) term turns
  // every clipped gradient into NaN.
  Variable b(Tensor::Vector<float>({0, 0}), "b");
  sgd.ApplyGradients({{Tensor::Vector<float>({INFINITY, 1.0f}), &b}});
  for (float x : b.value().ToVector<float>()) EXPECT_TRUE(std::isnan(x));
}

// _transform_gradients order: clipvalue first, then clipnorm.
TEST(GradientClippingTest, ClipValueRunsBeforeClipNorm) {
  SGD sgd(1.0);
  sgd.SetGradientClipping({.clipnorm = 1.0, .clipvalue = 0.6});
  Variable w(Tensor::Vector<float>({0, 0}), "w");
  sgd.ApplyGradients({{Tensor::Vector<float>({3, 0.8f}), &w}});
  // [3, 0.8] -> [0.6, 0.6], norm sqrt(0.72) < 1: unchanged by clipnorm.
  EXPECT_EQ(w.value().ToVector<float>(), std::vector<float>({-0.6f, -0.6f}));
}

TEST(GradientClippingTest, AdamOptionsCarryTheClipping) {
  AdamOptions options;
  options.clipping.clipvalue = 1e-3;
  Adam clipped(options);
  Adam plain;
  Variable a(Tensor::Vector<float>({1}), "a");
  Variable b(Tensor::Vector<float>({1}), "b");
  clipped.ApplyGradients({{Tensor::Vector<float>({5}), &a}});
  plain.ApplyGradients({{Tensor::Vector<float>({1e-3f}), &b}});
  // Clipping 5 to 1e-3 is the same step as a gradient of 1e-3.
  EXPECT_EQ(a.value().ToVector<float>(), b.value().ToVector<float>());
}

TEST(GradientClippingTest, RejectsClipNormWithGlobalClipNorm) {
  SGD sgd(1.0);
  EXPECT_THROW(sgd.SetGradientClipping({.clipnorm = 1.0, .global_clipnorm = 1.0}),
               InvalidArgumentError);
  EXPECT_THROW(sgd.SetGradientClipping({.clipvalue = -1.0}), InvalidArgumentError);
  EXPECT_FALSE(sgd.gradient_clipping().clipvalue.has_value());
}

}  // namespace
}  // namespace eager
