// Adam against TensorFlow's formulas (FORMAT.md 7.1-7.3), recomputed here
// independently of autodiff/adam.cc: float32 steps are done in double and
// rounded to float after every operation (exact for +, -, *, /, sqrt, since
// double has more than 2 * 24 + 2 bits), float64 steps in plain double with
// contraction off, so neither side fuses multiply-adds.
#if defined(__clang__)
#pragma clang fp contract(off)
#else
#pragma GCC optimize("fp-contract=off")
#endif

#include "autodiff/adam.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "runtime/errors.h"
#include "runtime/names.h"
#include "runtime/threads.h"

namespace eager {
namespace {

float F(double x) { return static_cast<float>(x); }

// One Keras (or TF1) Adam step on float32 values, every op rounded to float.
struct Float32Reference {
  std::vector<float> var, m, v;
  void Step(const std::vector<float>& g, float lr, float b1, float b2, float b1p, float b2p,
            float eps) {
    const float alpha = F(F(double(lr) * std::sqrt(double(F(1.0 - b2p)))) / double(F(1.0 - b1p)));
    const float omb1 = F(1.0 - b1), omb2 = F(1.0 - b2);
    for (size_t i = 0; i < var.size(); ++i) {
      m[i] = F(m[i] + double(F(double(F(double(g[i]) - m[i])) * omb1)));
      v[i] = F(v[i] + double(F(double(F(double(F(double(g[i]) * g[i])) - v[i])) * omb2)));
      const float num = F(double(m[i]) * alpha);
      const float den = F(double(F(std::sqrt(double(v[i])))) + eps);
      var[i] = F(var[i] - double(F(double(num) / den)));
    }
  }
};

struct Float64Reference {
  std::vector<double> var, m, v;
  void Step(const std::vector<double>& g, double lr, double b1, double b2, double b1p, double b2p,
            double eps) {
    const double alpha = lr * std::sqrt(1.0 - b2p) / (1.0 - b1p);
    for (size_t i = 0; i < var.size(); ++i) {
      m[i] = m[i] + (g[i] - m[i]) * (1.0 - b1);
      v[i] = v[i] + (g[i] * g[i] - v[i]) * (1.0 - b2);
      var[i] = var[i] - (m[i] * alpha) / (std::sqrt(v[i]) + eps);
    }
  }
};

// Gradients that change sign and size from step to step.
std::vector<float> Grad32(int step) {
  return {F(0.5 * std::sin(step + 1.0)), F(-3.0 + step * 0.25), F(1e-3 * (step % 3)), 7.0f};
}
std::vector<double> Grad64(int step) {
  return {0.5 * std::sin(step + 1.0), -3.0 + step * 0.25, 1e-3 * (step % 3), 7.0};
}

class AdamTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetDefaultNames(); }
};

TEST_F(AdamTest, KerasDefaultsAndVariableLayout) {
  Adam adam;
  EXPECT_EQ(adam.name(), "Adam");
  EXPECT_DOUBLE_EQ(adam.epsilon(), 1e-7);
  std::vector<Trackable::Child> children = adam.Children();
  ASSERT_EQ(children.size(), 5u);
  const char* expected[] = {"iter", "beta_1", "beta_2", "decay", "learning_rate"};
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(children[i].name, expected[i]);
  auto* iter = dynamic_cast<Variable*>(children[0].object);
  ASSERT_NE(iter, nullptr);
  EXPECT_EQ(iter->name(), "Adam/iter:0");
  EXPECT_EQ(iter->dtype(), DType::kInt64);
  EXPECT_FALSE(iter->trainable());
  EXPECT_EQ(adam.learning_rate().name(), "Adam/learning_rate:0");
  EXPECT_EQ(adam.learning_rate().value().scalar<float>(), 0.001f);
  EXPECT_EQ(adam.beta_1().value().scalar<float>(), 0.9f);
  EXPECT_EQ(adam.beta_2().value().scalar<float>(), 0.999f);
  EXPECT_EQ(adam.decay().value().scalar<float>(), 0.0f);
  EXPECT_TRUE(adam.Slots().empty());
}

TEST_F(AdamTest, SecondOptimizerGetsAUniqueScope) {
  Adam first;
  Adam second;
  EXPECT_EQ(second.name(), "Adam_1");
  EXPECT_EQ(second.learning_rate().name(), "Adam_1/learning_rate:0");
}

TEST_F(AdamTest, SlotsAreCreatedOnFirstApplyAndOrderedAllMThenAllV) {
  Variable kernel(Tensor::FromVector<float>({1, 2}, Shape{2}), "dense/kernel");
  Variable bias(Tensor::FromVector<float>({0}, Shape{1}), "dense/bias");
  Adam adam;
  EXPECT_EQ(adam.GetSlot(kernel, "m"), nullptr);
  adam.ApplyGradients({{Tensor::FromVector<float>({1, 1}, Shape{2}), &kernel},
                       {Tensor::FromVector<float>({1}, Shape{1}), &bias}});
  std::vector<Trackable::Slot> slots = adam.Slots();
  ASSERT_EQ(slots.size(), 4u);
  EXPECT_EQ(slots[0].name, "m");
  EXPECT_EQ(slots[0].original, &kernel);
  EXPECT_EQ(slots[1].name, "m");
  EXPECT_EQ(slots[1].original, &bias);
  EXPECT_EQ(slots[2].name, "v");
  EXPECT_EQ(slots[2].original, &kernel);
  EXPECT_EQ(slots[3].name, "v");
  EXPECT_EQ(slots[3].original, &bias);
  EXPECT_EQ(slots[0].slot->name(), "Adam/dense/kernel/m:0");
  EXPECT_EQ(slots[3].slot->name(), "Adam/dense/bias/v:0");
  EXPECT_FALSE(slots[0].slot->trainable());
  EXPECT_EQ(adam.GetSlot(kernel, "v"), slots[2].slot);
  EXPECT_EQ(adam.iterations(), 1);
}

TEST_F(AdamTest, NullGradientsAreSkipped) {
  Variable a(Tensor::FromVector<float>({1}, Shape{1}), "a");
  Variable b(Tensor::FromVector<float>({1}, Shape{1}), "b");
  Adam adam;
  adam.ApplyGradients({{std::nullopt, &a}, {Tensor::FromVector<float>({2}, Shape{1}), &b}});
  EXPECT_EQ(a.value().ToVector<float>(), std::vector<float>{1});
  EXPECT_NE(b.value().ToVector<float>(), std::vector<float>{1});
  EXPECT_EQ(adam.GetSlot(a, "m"), nullptr);
  EXPECT_EQ(adam.Slots().size(), 2u);
}

TEST_F(AdamTest, RejectsBadGradientsBeforeChangingAnything) {
  Variable a(Tensor::FromVector<float>({1}, Shape{1}), "a");
  Variable b(Tensor::FromVector<float>({1, 2}, Shape{2}), "b");
  Adam adam;
  try {
    adam.ApplyGradients({{Tensor::FromVector<float>({1}, Shape{1}), &a},
                         {Tensor::FromVector<float>({1}, Shape{1}), &b}});
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("'b'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[2]"), std::string::npos) << e.what();
  }
  EXPECT_EQ(a.value().ToVector<float>(), std::vector<float>{1});
  EXPECT_EQ(adam.iterations(), 0);
  EXPECT_THROW(adam.ApplyGradients({{std::nullopt, &a}}), InvalidArgumentError);
  Variable n(Tensor::FromVector<int32_t>({1}, Shape{1}), "n");
  EXPECT_THROW(adam.ApplyGradients({{Tensor::FromVector<int32_t>({1}, Shape{1}), &n}}),
               InvalidArgumentError);
}

TEST_F(AdamTest, FirstStepMovesEachWeightByAboutTheLearningRate) {
  // With zero slots, step 1 gives m = 0.1 g, v = 0.001 g^2 and
  // alpha = lr sqrt(0.001) / 0.1, so the update is lr * g / (|g| + eps').
  Variable w(Tensor::FromVector<float>({1, 1, 1}, Shape{3}), "w");
  Adam adam(0.01);
  adam.ApplyGradients({{Tensor::FromVector<float>({4, -0.5, 100}, Shape{3}), &w}});
  std::vector<float> got = w.value().ToVector<float>();
  EXPECT_NEAR(got[0], 0.99f, 1e-6);
  EXPECT_NEAR(got[1], 1.01f, 1e-6);
  EXPECT_NEAR(got[2], 0.99f, 1e-6);
}

TEST_F(AdamTest, KerasFloat32MatchesTheFormulasOverManySteps) {
  const std::vector<float> init = {0.25f, -1.5f, 3.0f, 1e-4f};
  Variable w(Tensor::FromVector<float>(init, Shape{2, 2}), "w");
  Adam adam(0.05, 0.8, 0.99, 1e-7);
  Float32Reference ref{init, std::vector<float>(4, 0.0f), std::vector<float>(4, 0.0f)};
  for (int step = 0; step < 25; ++step) {
    std::vector<float> g = Grad32(step);
    adam.ApplyGradients({{Tensor::FromVector<float>(g, Shape{2, 2}), &w}});
    const float t = static_cast<float>(step + 1);
    ref.Step(g, 0.05f, 0.8f, 0.99f, std::pow(0.8f, t), std::pow(0.99f, t), F(1e-7));
    ASSERT_EQ(w.value().ToVector<float>(), ref.var) << "step " << step + 1;
    ASSERT_EQ(adam.GetSlot(w, "m")->value().ToVector<float>(), ref.m) << "step " << step + 1;
    ASSERT_EQ(adam.GetSlot(w, "v")->value().ToVector<float>(), ref.v) << "step " << step + 1;
  }
  EXPECT_EQ(adam.iterations(), 25);
}

// When someone else holds the value, m or v (an asynchronous save), Adam
// writes the step into new buffers in one pass instead of copying first
// (autodiff/internal/writable_value.h): the same numbers, bit for bit, and
// the held tensors keep theirs. Steps alternate between nothing held, all
// three held and only one held; 37 elements run the vectorized loop too.
TEST_F(AdamTest, KerasFloat32StepsIntoNewBuffersWhenValuesAreHeld) {
  constexpr int kSize = 37;
  std::vector<float> init(kSize);
  for (int i = 0; i < kSize; ++i) init[static_cast<size_t>(i)] = F(0.1 * i - 1.7);
  Variable w(Tensor::FromVector<float>(init, Shape{kSize}), "w");
  Adam adam(0.05, 0.8, 0.99, 1e-7);
  Float32Reference ref{init, std::vector<float>(kSize, 0.0f), std::vector<float>(kSize, 0.0f)};
  for (int step = 0; step < 12; ++step) {
    std::vector<float> g(kSize);
    for (int i = 0; i < kSize; ++i) g[static_cast<size_t>(i)] = F(std::sin(step * 3.0 + i));
    std::vector<Tensor> held;
    if (step > 0 && step % 3 == 1) {
      held = {w.value(), adam.GetSlot(w, "m")->value(), adam.GetSlot(w, "v")->value()};
    } else if (step > 0 && step % 3 == 2) {
      held = {adam.GetSlot(w, "v")->value()};
    }
    std::vector<std::vector<float>> held_values;
    held_values.reserve(held.size());
    for (const Tensor& t : held) held_values.push_back(t.ToVector<float>());
    adam.ApplyGradients({{Tensor::FromVector<float>(g, Shape{kSize}), &w}});
    const float t = static_cast<float>(step + 1);
    ref.Step(g, 0.05f, 0.8f, 0.99f, std::pow(0.8f, t), std::pow(0.99f, t), F(1e-7));
    ASSERT_EQ(w.value().ToVector<float>(), ref.var) << "step " << step + 1;
    ASSERT_EQ(adam.GetSlot(w, "m")->value().ToVector<float>(), ref.m) << "step " << step + 1;
    ASSERT_EQ(adam.GetSlot(w, "v")->value().ToVector<float>(), ref.v) << "step " << step + 1;
    for (size_t i = 0; i < held.size(); ++i) {
      ASSERT_EQ(held[i].ToVector<float>(), held_values[i]) << "held tensor " << i;
    }
  }
}

// The two forms of the kernel (ops/apply_adam.h), side by side on
// float64: one variable always updated in place (its buffer stays), the other
// always into new buffers (its value, m and v held); the same bits at every
// step, over 1003 elements (vector loop and remainder).
TEST_F(AdamTest, Float64StepsInPlaceAndIntoNewBuffersGiveTheSameBits) {
  constexpr int kSize = 1003;
  std::vector<double> init(kSize);
  for (int i = 0; i < kSize; ++i) init[static_cast<size_t>(i)] = std::cos(0.37 * i) * (1 + i % 7);
  Variable in_place(Tensor::FromVector<double>(init, Shape{kSize}), "in_place");
  Variable held(Tensor::FromVector<double>(init, Shape{kSize}), "held");
  Adam adam(0.05, 0.8, 0.99, 1e-7);
  for (int step = 0; step < 6; ++step) {
    std::vector<double> g(kSize);
    for (int i = 0; i < kSize; ++i) g[static_cast<size_t>(i)] = std::sin(step * 3.0 + i) * 1e3;
    const Tensor grad = Tensor::FromVector<double>(g, Shape{kSize});
    const double* buffer = in_place.value().data<double>().data();
    std::vector<Tensor> holds = {held.value()};
    if (step > 0) {
      holds.push_back(adam.GetSlot(held, "m")->value());
      holds.push_back(adam.GetSlot(held, "v")->value());
    }
    adam.ApplyGradients({{grad, &in_place}, {grad, &held}});
    if (step > 0) {
      ASSERT_EQ(in_place.value().data<double>().data(), buffer) << "step " << step + 1;
    }
    ASSERT_NE(held.value().data<double>().data(), holds[0].data<double>().data());
    ASSERT_EQ(in_place.value().ToVector<double>(), held.value().ToVector<double>())
        << "step " << step + 1;
    for (const char* slot : {"m", "v"}) {
      ASSERT_EQ(adam.GetSlot(in_place, slot)->value().ToVector<double>(),
                adam.GetSlot(held, slot)->value().ToVector<double>())
          << slot << ", step " << step + 1;
    }
  }
}

// The first index where a and b differ in bits, or -1.
int64_t FirstMismatch(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i])) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

// Restores the intra-op thread count when the test ends.
struct ThreadCountGuard {
  int saved = GetNumThreads();
  ~ThreadCountGuard() { SetNumThreads(saved); }
};

// Variables of 2^16 elements or more are updated over the intra-op pool in
// blocks (ops/apply_adam.h). On 1, 2 and 3 threads, in place and
// into new buffers (value, m and v held by someone else), every element
// follows the formulas bit for bit: 200,011 elements are 12 whole blocks of
// 2^14 and a last one that is no multiple of the vector width.
TEST_F(AdamTest, LargeVariablesMatchTheFormulasOnAnyThreadCount) {
  const ThreadCountGuard guard;
  constexpr int kSize = 200011;
  std::vector<float> init(kSize);
  for (int i = 0; i < kSize; ++i)
    init[static_cast<size_t>(i)] = F(std::cos(0.37 * i) * (1 + i % 7));
  const std::vector<float> zeros(kSize, 0.0f);
  for (int threads : {1, 2, 3}) {
    SetNumThreads(threads);
    ResetDefaultNames();
    Variable in_place(Tensor::FromVector<float>(init, Shape{kSize}), "in_place");
    Variable held(Tensor::FromVector<float>(init, Shape{kSize}), "held");
    Adam adam(0.05, 0.8, 0.99, 1e-7);
    Float32Reference ref{init, zeros, zeros};
    for (int step = 0; step < 3; ++step) {
      std::vector<float> g(kSize);
      for (int i = 0; i < kSize; ++i) {
        g[static_cast<size_t>(i)] = F(std::sin(step * 3.0 + i) * (1 + i % 5));
      }
      const Tensor grad = Tensor::FromVector<float>(g, Shape{kSize});
      std::vector<Tensor> holds = {held.value()};
      if (step > 0) {
        holds.push_back(adam.GetSlot(held, "m")->value());
        holds.push_back(adam.GetSlot(held, "v")->value());
      }
      adam.ApplyGradients({{grad, &in_place}, {grad, &held}});
      const float t = static_cast<float>(step + 1);
      ref.Step(g, 0.05f, 0.8f, 0.99f, std::pow(0.8f, t), std::pow(0.99f, t), F(1e-7));
      ASSERT_NE(held.value().data<float>().data(), holds[0].data<float>().data());
      for (Variable* w : {&in_place, &held}) {
        const std::string where =
            StrCat(w->shared_name(), ", ", threads, " threads, step ", step + 1);
        ASSERT_EQ(FirstMismatch(w->value().ToVector<float>(), ref.var), -1) << where;
        ASSERT_EQ(FirstMismatch(adam.GetSlot(*w, "m")->value().ToVector<float>(), ref.m), -1)
            << "m of " << where;
        ASSERT_EQ(FirstMismatch(adam.GetSlot(*w, "v")->value().ToVector<float>(), ref.v), -1)
            << "v of " << where;
      }
    }
  }
}

TEST_F(AdamTest, KerasFloat64UsesFloat32HyperParametersCastToDouble) {
  const std::vector<double> init = {0.25, -1.5, 3.0, 1e-4};
  Variable w(Tensor::FromVector<double>(init, Shape{4}), "w");
  Adam adam(0.05, 0.8, 0.99, 1e-7);
  Float64Reference ref{init, std::vector<double>(4, 0.0), std::vector<double>(4, 0.0)};
  // Keras keeps hyper-parameters as float32 variables and casts them; the
  // epsilon is a Python float converted to the variable's dtype directly.
  const double lr = double(0.05f), b1 = double(0.8f), b2 = double(0.99f);
  for (int step = 0; step < 25; ++step) {
    std::vector<double> g = Grad64(step);
    adam.ApplyGradients({{Tensor::FromVector<double>(g, Shape{4}), &w}});
    const double t = step + 1.0;
    ref.Step(g, lr, b1, b2, std::pow(b1, t), std::pow(b2, t), 1e-7);
    ASSERT_EQ(w.value().ToVector<double>(), ref.var) << "step " << step + 1;
  }
}

TEST_F(AdamTest, KerasDecayDividesTheLearningRate) {
  AdamOptions options;
  options.learning_rate = 0.1;
  options.decay = 0.5;
  Adam adam(options);
  Variable w(Tensor::FromVector<float>({1.0f}, Shape{1}), "w");
  Float32Reference ref{{1.0f}, {0.0f}, {0.0f}};
  for (int step = 0; step < 4; ++step) {
    std::vector<float> g = {F(0.3 + step)};
    adam.ApplyGradients({{Tensor::FromVector<float>(g, Shape{1}), &w}});
    const float lr = F(0.1f / double(F(1.0 + double(F(0.5 * step)))));
    const float t = static_cast<float>(step + 1);
    ref.Step(g, lr, 0.9f, 0.999f, std::pow(0.9f, t), std::pow(0.999f, t), F(1e-7));
    ASSERT_EQ(w.value().ToVector<float>(), ref.var) << "step " << step + 1;
  }
}

TEST_F(AdamTest, Tf1ModeLayoutAndNames) {
  AdamOptions options;
  options.tf1_compatible = true;
  Adam adam(options);
  EXPECT_DOUBLE_EQ(adam.epsilon(), 1e-8);
  EXPECT_TRUE(adam.Children().empty());  // no iter, no hyper variables
  EXPECT_THROW(adam.learning_rate(), FailedPreconditionError);
  Variable kernel(Tensor::FromVector<float>({1, 2}, Shape{2}), "dense/kernel");
  {
    NameScope scope("train");
    adam.ApplyGradients({{Tensor::FromVector<float>({1, 1}, Shape{2}), &kernel}});
  }
  ASSERT_NE(adam.beta1_power(), nullptr);
  EXPECT_EQ(adam.beta1_power()->name(), "train/beta1_power:0");
  EXPECT_EQ(adam.beta2_power()->name(), "train/beta2_power:0");
  EXPECT_EQ(adam.GetSlot(kernel, "m")->name(), "dense/kernel/Adam:0");
  EXPECT_EQ(adam.GetSlot(kernel, "v")->name(), "dense/kernel/Adam_1:0");
  std::vector<Trackable::Child> children = adam.Children();
  ASSERT_EQ(children.size(), 2u);
  EXPECT_EQ(children[0].name, "beta1_power");
  EXPECT_EQ(children[1].name, "beta2_power");
  // After one step the powers are beta^2, as float32 products.
  EXPECT_EQ(adam.beta1_power()->value().scalar<float>(), F(double(0.9f) * 0.9f));
  EXPECT_EQ(adam.beta2_power()->value().scalar<float>(), F(double(0.999f) * 0.999f));
}

TEST_F(AdamTest, Tf1ModeMatchesTheFormulasWithAccumulatedPowers) {
  AdamOptions options;
  options.tf1_compatible = true;
  options.learning_rate = 0.01;
  Adam adam(options);
  const std::vector<float> init = {0.5f, -2.0f, 1.0f, 0.0f};
  Variable w(Tensor::FromVector<float>(init, Shape{4}), "w");
  Float32Reference ref{init, std::vector<float>(4, 0.0f), std::vector<float>(4, 0.0f)};
  float b1p = 0.9f, b2p = 0.999f;
  for (int step = 0; step < 30; ++step) {
    std::vector<float> g = Grad32(step);
    adam.ApplyGradients({{Tensor::FromVector<float>(g, Shape{4}), &w}});
    ref.Step(g, 0.01f, 0.9f, 0.999f, b1p, b2p, F(1e-8));
    b1p = F(double(b1p) * 0.9f);
    b2p = F(double(b2p) * 0.999f);
    ASSERT_EQ(w.value().ToVector<float>(), ref.var) << "step " << step + 1;
  }
}

TEST_F(AdamTest, Tf1ModeFloat64CastsTheFloat32Constants) {
  AdamOptions options;
  options.tf1_compatible = true;
  Adam adam(options);
  const std::vector<double> init = {0.5, -2.0};
  Variable w(Tensor::FromVector<double>(init, Shape{2}), "w");
  Float64Reference ref{init, {0.0, 0.0}, {0.0, 0.0}};
  float b1p = 0.9f, b2p = 0.999f;
  for (int step = 0; step < 10; ++step) {
    std::vector<double> g = {Grad64(step)[0], Grad64(step)[1]};
    adam.ApplyGradients({{Tensor::FromVector<double>(g, Shape{2}), &w}});
    ref.Step(g, double(0.001f), double(0.9f), double(0.999f), b1p, b2p, double(F(1e-8)));
    b1p = F(double(b1p) * 0.9f);
    b2p = F(double(b2p) * 0.999f);
    ASSERT_EQ(w.value().ToVector<double>(), ref.var) << "step " << step + 1;
  }
}

// TF1 mode against the real LeNet checkpoint's beta1_power and beta2_power:
// tests/saving/saver/adam_realdata_test.cc.

TEST_F(AdamTest, ValidatesOptions) {
  EXPECT_THROW(Adam(-1.0), InvalidArgumentError);
  EXPECT_THROW(Adam(0.001, 1.0), InvalidArgumentError);
  EXPECT_THROW(Adam(0.001, 0.9, 0.999, -1.0), InvalidArgumentError);
}

}  // namespace
}  // namespace eager

namespace eager {
namespace {

TEST(AdamInPlaceTest, TensorsReadBeforeAStepNeverChange) {
  // The optimizer updates a variable's buffer in place only when nobody else
  // holds it; a value read earlier keeps its contents and its id.
  Variable w(Tensor::FromVector<float>({1, 2, 3}, Shape{3}), "w");
  Adam adam;
  const Tensor g = Tensor::FromVector<float>({1, 1, 1}, Shape{3});
  adam.ApplyGradients({{g, &w}});
  const Tensor before = w.value();
  const Tensor m_before = adam.GetSlot(w, "m")->value();
  const std::vector<float> kept = before.ToVector<float>();
  const std::vector<float> m_kept = m_before.ToVector<float>();
  adam.ApplyGradients({{g, &w}});
  EXPECT_EQ(before.ToVector<float>(), kept);
  EXPECT_EQ(m_before.ToVector<float>(), m_kept);
  EXPECT_NE(w.value().ToVector<float>(), kept);
  EXPECT_NE(w.value().id(), before.id());
  // Without outside holders the next step still gives a new id.
  const TensorId id = w.value().id();
  adam.ApplyGradients({{g, &w}});
  EXPECT_NE(w.value().id(), id);
}

}  // namespace
}  // namespace eager
