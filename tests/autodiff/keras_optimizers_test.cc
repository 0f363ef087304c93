// RMSprop, Adagrad and SGD's newer Keras layouts against the formulas of
// Keras 3 and tf_keras 2.11+ (keras/src/optimizers/{rmsprop,adagrad,sgd}.py),
// recomputed here op by op with every float32 result rounded; and the
// checkpoint edges each line writes (checked against TF 2.21's own files by
// tests/tf_keras/keras_optimizers_test.py).
#if defined(__clang__)
#pragma clang fp contract(off)
#else
#pragma GCC optimize("fp-contract=off")
#endif

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "autodiff/adagrad.h"
#include "autodiff/adam.h"
#include "autodiff/nadam.h"
#include "autodiff/rmsprop.h"
#include "autodiff/sgd.h"
#include "runtime/errors.h"
#include "runtime/names.h"

namespace eager {
namespace {

class KerasOptimizersTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetDefaultNames(); }
};

std::vector<std::string> ChildNames(Trackable& t) {
  std::vector<std::string> out;
  for (const Trackable::Child& c : t.Children()) out.push_back(c.name);
  return out;
}

// The object behind "_variables/<i>".
Trackable* VariablesItem(Optimizer& optimizer, size_t i) {
  for (const Trackable::Child& c : optimizer.Children()) {
    if (c.name != "_variables") continue;
    std::vector<Trackable::Child> items = c.object->Children();
    return i < items.size() ? items[i].object : nullptr;
  }
  return nullptr;
}

Tensor Vec(std::vector<float> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<float>(std::move(v), Shape{n});
}

TEST_F(KerasOptimizersTest, RMSpropCenteredMomentumFollowsKeras3Formula) {
  RMSprop opt({.learning_rate = 0.01, .rho = 0.8, .momentum = 0.5, .centered = true});
  Variable w(Vec({0.5f, -1.0f, 2.0f}), "w");
  std::vector<float> x = {0.5f, -1.0f, 2.0f}, vel(3, 0.0f), avg(3, 0.0f), mom(3, 0.0f);
  const float lr = 0.01f, rho = 0.8f, omr = static_cast<float>(1.0 - 0.8), m = 0.5f, eps = 1e-7f;
  for (int step = 0; step < 5; ++step) {
    std::vector<float> g = {0.3f * static_cast<float>(step) - 0.1f, 1.5f, -0.25f};
    opt.ApplyGradients({{Vec(g), &w}});
    for (size_t i = 0; i < 3; ++i) {
      vel[i] = rho * vel[i] + omr * (g[i] * g[i]);
      avg[i] = rho * avg[i] + omr * g[i];
      const float denominator = vel[i] - avg[i] * avg[i] + eps;
      const float increment = (lr * g[i]) / std::sqrt(denominator);
      mom[i] = m * mom[i] + increment;
      x[i] = x[i] - mom[i];
    }
    ASSERT_EQ(w.value().ToVector<float>(), x) << "step " << step + 1;
    ASSERT_EQ(opt.GetSlot(w, "velocity")->value().ToVector<float>(), vel);
    ASSERT_EQ(opt.GetSlot(w, "average_gradient")->value().ToVector<float>(), avg);
    ASSERT_EQ(opt.GetSlot(w, "momentum")->value().ToVector<float>(), mom);
  }
  EXPECT_EQ(opt.iterations(), 5);
}

TEST_F(KerasOptimizersTest, RMSpropPlainFloat64) {
  RMSprop opt({.learning_rate = 0.1});
  Variable w(Tensor::FromVector<double>({1.0, -3.0}, Shape{2}), "w");
  std::vector<double> x = {1.0, -3.0}, vel(2, 0.0);
  const double lr = double(0.1f);  // the float32 learning-rate variable, cast
  for (int step = 0; step < 4; ++step) {
    std::vector<double> g = {0.7 - step, 2.0 / (step + 1)};
    opt.ApplyGradients({{Tensor::FromVector<double>(g, Shape{2}), &w}});
    for (size_t i = 0; i < 2; ++i) {
      vel[i] = 0.9 * vel[i] + (1.0 - 0.9) * (g[i] * g[i]);
      x[i] = x[i] - (lr * g[i]) / std::sqrt(vel[i] + 1e-7);
    }
    ASSERT_EQ(w.value().ToVector<double>(), x) << "step " << step + 1;
  }
  EXPECT_EQ(opt.GetSlot(w, "momentum"), nullptr);  // momentum 0: no slot, as Keras
}

TEST_F(KerasOptimizersTest, AdagradStartsAtInitialAccumulator) {
  Adagrad opt({.learning_rate = 0.5, .initial_accumulator_value = 0.25});
  Variable w(Vec({1.0f, 2.0f}), "w");
  opt.Build({&w});
  ASSERT_NE(opt.GetSlot(w, "accumulator"), nullptr);
  EXPECT_EQ(opt.GetSlot(w, "accumulator")->value().ToVector<float>(),
            (std::vector<float>{0.25f, 0.25f}));
  std::vector<float> x = {1.0f, 2.0f}, acc = {0.25f, 0.25f};
  for (int step = 0; step < 4; ++step) {
    std::vector<float> g = {1.0f - static_cast<float>(step), 0.5f};
    opt.ApplyGradients({{Vec(g), &w}});
    for (size_t i = 0; i < 2; ++i) {
      acc[i] = acc[i] + g[i] * g[i];
      x[i] = x[i] - (0.5f * g[i]) / std::sqrt(acc[i] + 1e-7f);
    }
    ASSERT_EQ(w.value().ToVector<float>(), x) << "step " << step + 1;
  }
}

TEST_F(KerasOptimizersTest, RMSpropEdgesAndGroupedVariablesList) {
  RMSprop opt({.momentum = 0.9});
  Variable a(Vec({1, 2}), "a"), b(Vec({3}), "b");
  opt.Build({&a, &b});
  EXPECT_EQ(ChildNames(opt),
            (std::vector<std::string>{"_variables", "_trainable_variables", "_iterations",
                                      "_learning_rate", "_velocities", "_momentums"}));
  // Keras 3: iterations, learning rate, then every velocity, then every
  // momentum (one add_optimizer_variables call per kind).
  EXPECT_EQ(VariablesItem(opt, 2), opt.GetSlot(a, "velocity"));
  EXPECT_EQ(VariablesItem(opt, 3), opt.GetSlot(b, "velocity"));
  EXPECT_EQ(VariablesItem(opt, 4), opt.GetSlot(a, "momentum"));
  EXPECT_EQ(VariablesItem(opt, 5), opt.GetSlot(b, "momentum"));
  opt.UseKerasLayout(KerasLayout::kKeras2);  // tf_keras: no learning rate in the list
  EXPECT_EQ(ChildNames(opt),
            (std::vector<std::string>{"_variables", "_iterations", "_learning_rate", "_velocities",
                                      "_momentums"}));
  EXPECT_EQ(VariablesItem(opt, 1), opt.GetSlot(a, "velocity"));
  EXPECT_EQ(VariablesItem(opt, 3), opt.GetSlot(a, "momentum"));
  EXPECT_EQ(opt.GetSlot(a, "velocity")->name(), "RMSprop/a/velocity:0");
}

TEST_F(KerasOptimizersTest, LegacyLayoutIsRefusedByName) {
  RMSprop rmsprop;
  try {
    rmsprop.UseKerasLayout(KerasLayout::kKeras2Legacy);
    FAIL() << "no error";
  } catch (const UnimplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("RMSprop 'RMSprop'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("keras2_legacy"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Adagrad({.layout = KerasLayout::kKeras2Legacy}), UnimplementedError);
  EXPECT_THROW(RMSprop({.rho = 1.5}), InvalidArgumentError);
}

TEST_F(KerasOptimizersTest, SGDNewerLayoutsListMomentums) {
  SGD sgd(0.1, 0.9);
  Variable w(Vec({1}), "w");
  sgd.Build({&w});
  SetKerasLayout(sgd, KerasLayout::kKeras3);
  EXPECT_EQ(ChildNames(sgd),
            (std::vector<std::string>{"_variables", "_trainable_variables", "_iterations",
                                      "_learning_rate", "momentums"}));
  EXPECT_EQ(VariablesItem(sgd, 2), sgd.GetSlot(w, "momentum"));
}

TEST_F(KerasOptimizersTest, TfKerasSGDKeepsAMomentumSlotWithoutMomentum) {
  SGD sgd(0.5);
  SetKerasLayout(sgd, KerasLayout::kKeras2);
  Variable w(Vec({1.0f, 2.0f}), "w");
  sgd.ApplyGradients({{Vec({0.25f, -1.0f}), &w}});
  ASSERT_NE(sgd.GetSlot(w, "momentum"), nullptr);
  EXPECT_EQ(sgd.GetSlot(w, "momentum")->value().ToVector<float>(),
            (std::vector<float>{-0.125f, 0.5f}));
  EXPECT_EQ(w.value().ToVector<float>(), (std::vector<float>{0.875f, 2.5f}));
}

TEST_F(KerasOptimizersTest, NadamFollowsKeras3Formula) {
  Nadam opt({.learning_rate = 0.01});
  Variable w(Vec({0.5f, -2.0f}), "w");
  std::vector<float> x = {0.5f, -2.0f}, m(2, 0.0f), v(2, 0.0f);
  float u_product = 1.0f;
  const float b1 = 0.9f, b2 = 0.999f, lr = 0.01f, eps = 1e-7f;
  for (int step = 0; step < 4; ++step) {
    std::vector<float> g = {0.25f - static_cast<float>(step), 1.5f};
    opt.ApplyGradients({{Vec(g), &w}});
    const auto t = static_cast<float>(step + 1);
    u_product = (u_product * b1) * (1.0f - 0.5f * std::pow(0.96f, t));
    const float u_t = b1 * (1.0f - 0.5f * std::pow(0.96f, t));
    const float u_t_1 = b1 * (1.0f - 0.5f * std::pow(0.96f, t + 1.0f));
    const float u_product_t_1 = u_product * u_t_1;
    for (size_t i = 0; i < 2; ++i) {
      m[i] = m[i] + (g[i] - m[i]) * (1.0f - b1);
      v[i] = v[i] + (g[i] * g[i] - v[i]) * (1.0f - b2);
      const float m_hat =
          (u_t_1 * m[i]) / (1.0f - u_product_t_1) + ((1.0f - u_t) * g[i]) / (1.0f - u_product);
      const float v_hat = v[i] / (1.0f - std::pow(b2, t));
      x[i] = x[i] - (m_hat * lr) / (std::sqrt(v_hat) + eps);
    }
    ASSERT_EQ(w.value().ToVector<float>(), x) << "step " << step + 1;
    ASSERT_EQ(opt.u_product()->value().scalar<float>(), u_product) << "step " << step + 1;
  }
  // Keras 3 lists u_product last in _variables, after the slots.
  EXPECT_EQ(VariablesItem(opt, 4), opt.u_product());
}

TEST_F(KerasOptimizersTest, AdamWDecaysBeforeTheAdamStep) {
  AdamOptions options;
  options.learning_rate = 0.1;
  options.weight_decay = 0.5;
  Adam adamw(options);
  EXPECT_EQ(adamw.keras_layout(), KerasLayout::kKeras3);
  Variable w(Vec({2.0f}), "w");
  adamw.ApplyGradients({{Vec({0.5f}), &w}});
  // var - var * wd * lr, then Adam's first step: m = 0.05, v = 0.00025...,
  // alpha = lr * sqrt(1 - b2) / (1 - b1).
  float x = 2.0f - (2.0f * 0.5f) * 0.1f;
  const float m = 0.0f + (0.5f - 0.0f) * static_cast<float>(1.0 - 0.9);
  const float v = 0.0f + (0.25f - 0.0f) * static_cast<float>(1.0 - 0.999);
  const float alpha = 0.1f * std::sqrt(1.0f - 0.999f) / (1.0f - 0.9f);
  x = x - (m * alpha) / (std::sqrt(v) + 1e-7f);
  EXPECT_NEAR(w.value().scalar<float>(), x, 1e-7f);
  EXPECT_THROW(adamw.UseKerasLayout(KerasLayout::kKeras2Legacy), UnimplementedError);
}

TEST_F(KerasOptimizersTest, FloatxFloat64LearningRate) {
  AdamOptions options;
  options.learning_rate = 0.1;
  options.floatx = DType::kFloat64;
  Adam adam(options);
  ASSERT_EQ(adam.learning_rate().dtype(), DType::kFloat64);
  EXPECT_EQ(adam.keras_layout(), KerasLayout::kKeras3);  // OptimizerV2 has no float64 hypers
  try {
    adam.UseKerasLayout(KerasLayout::kKeras2Legacy);
    FAIL() << "no error";
  } catch (const UnimplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("float64"), std::string::npos) << e.what();
  }
  // A float64 variable steps with the double 0.1, not float32's 0.1f.
  SGDOptions sgd_options;
  sgd_options.learning_rate = 0.1;
  sgd_options.floatx = DType::kFloat64;
  SGD sgd(sgd_options);
  Variable w(Tensor::FromVector<double>({1.0}, Shape{1}), "w");
  sgd.ApplyGradients({{Tensor::FromVector<double>({1.0}, Shape{1}), &w}});
  EXPECT_EQ(w.value().ToVector<double>(), (std::vector<double>{1.0 - 1.0 * 0.1}));
  RMSprop rmsprop({.floatx = DType::kFloat64});
  EXPECT_EQ(rmsprop.learning_rate().dtype(), DType::kFloat64);
}

}  // namespace
}  // namespace eager
