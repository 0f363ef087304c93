// ExponentialMovingAverage against TensorFlow (FORMAT.md 5.4 and the seed's
// golden number, printed by TensorFlow itself).
#if defined(__clang__)
#pragma clang fp contract(off)
#else
#pragma GCC optimize("fp-contract=off")
#endif

#include "autodiff/exponential_moving_average.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/names.h"
#include "runtime/threads.h"

namespace eager {
namespace {

float F(double x) { return static_cast<float>(x); }

class ExponentialMovingAverageTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetDefaultNames(); }
};

TEST_F(ExponentialMovingAverageTest, GoldenValueFromTensorFlow) {
  Variable v(0.1f, "v");
  ExponentialMovingAverage ema(0.999);
  ema.Apply({&v});
  Variable* shadow = ema.AverageVariable(v);
  ASSERT_NE(shadow, nullptr);
  EXPECT_EQ(shadow->name(), "v/ExponentialMovingAverage:0");
  EXPECT_FALSE(shadow->trainable());
  EXPECT_EQ(shadow->value().scalar<float>(), 0.1f);
  v.Assign(10.0f);
  ema.Apply();
  EXPECT_EQ(shadow->value().scalar<float>(), 0.10989987f);
  EXPECT_EQ(shadow->value().ValuesString(), "0.10989987");
  EXPECT_EQ(v.value().scalar<float>(), 10.0f);
}

TEST_F(ExponentialMovingAverageTest, CreateAveragesCreatesWithoutUpdating) {
  Variable v(0.5f, "v");
  ExponentialMovingAverage ema(0.9);
  ema.CreateAverages({&v});
  ASSERT_NE(ema.AverageVariable(v), nullptr);
  v.Assign(10.0f);
  ema.CreateAverages({&v});  // already there: nothing changes
  EXPECT_EQ(ema.AverageVariable(v)->value().scalar<float>(), 0.5f);
  ema.Apply({&v});  // now it moves
  EXPECT_GT(ema.AverageVariable(v)->value().scalar<float>(), 0.5f);
}

TEST_F(ExponentialMovingAverageTest, Float32OverSeveralStepsWithNumUpdates) {
  Variable v(Tensor::FromVector<float>({1.0f, -4.0f}, Shape{2}), "v");
  ExponentialMovingAverage ema(0.99, /*num_updates=*/0);
  std::vector<float> shadow = {1.0f, -4.0f};
  for (int64_t n = 0; n < 12; ++n) {
    std::vector<float> value = {F(1.0 + n * 0.37), F(-4.0 + n * n * 0.01)};
    v.Assign(Tensor::FromVector<float>(value, Shape{2}));
    ema.set_num_updates(n);
    ema.Apply({&v});
    const float nf = static_cast<float>(n);
    const float d = std::min(0.99f, F(double(F(1.0 + nf)) / F(10.0 + nf)));
    const float one_minus = F(1.0 - d);
    for (size_t i = 0; i < 2; ++i) {
      shadow[i] = F(shadow[i] - double(F(double(F(double(shadow[i]) - value[i])) * one_minus)));
    }
    ASSERT_EQ(ema.AverageVariable(v)->value().ToVector<float>(), shadow) << "n " << n;
  }
}

// A shadow value someone else holds (an asynchronous save) is not written:
// the update goes into a new buffer, with the same numbers as in place.
TEST_F(ExponentialMovingAverageTest, HeldShadowValueKeepsItsNumbers) {
  Variable v(Tensor::FromVector<float>({1.0f, -4.0f, 0.5f}, Shape{3}), "v");
  ExponentialMovingAverage ema(0.9);
  ema.Apply({&v});  // creates the shadow, equal to v
  std::vector<float> shadow = {1.0f, -4.0f, 0.5f};
  for (int n = 0; n < 6; ++n) {
    const std::vector<float> value = {F(2.0 + n), F(-1.0 * n), F(0.25 * n * n)};
    v.Assign(Tensor::FromVector<float>(value, Shape{3}));
    Tensor held;
    if (n % 2 == 1) held = ema.AverageVariable(v)->value();
    const std::vector<float> before = shadow;
    ema.Apply({&v});
    const float one_minus = F(1.0 - F(0.9));
    for (size_t i = 0; i < 3; ++i) {
      shadow[i] = F(shadow[i] - double(F(double(F(double(shadow[i]) - value[i])) * one_minus)));
    }
    ASSERT_EQ(ema.AverageVariable(v)->value().ToVector<float>(), shadow) << "n " << n;
    if (n % 2 == 1) {
      EXPECT_EQ(held.ToVector<float>(), before) << "n " << n;
    }
  }
}

// Shadows of 2^17 elements or more are updated over the intra-op pool in
// blocks, as TF's AssignSub kernel: on 1, 2 and 3 threads, in place and into
// a new buffer (the shadow's value held), every element follows the formula
// bit for bit (200,011 elements: six whole blocks of 2^15 and a ragged one).
TEST_F(ExponentialMovingAverageTest, LargeShadowsMatchTheFormulaOnAnyThreadCount) {
  const int saved_threads = GetNumThreads();
  constexpr int kSize = 200011;
  std::vector<float> init(kSize);
  for (int i = 0; i < kSize; ++i) init[static_cast<size_t>(i)] = F(std::cos(0.37 * i) * 3.0);
  const float one_minus = F(1.0 - F(0.9));
  for (int threads : {1, 2, 3}) {
    SetNumThreads(threads);
    ResetDefaultNames();
    Variable v(Tensor::FromVector<float>(init, Shape{kSize}), "v");
    ExponentialMovingAverage ema(0.9);
    ema.Apply({&v});  // creates the shadow, equal to v
    std::vector<float> shadow = init;
    for (int n = 0; n < 4; ++n) {
      std::vector<float> value(kSize);
      for (int i = 0; i < kSize; ++i) value[static_cast<size_t>(i)] = F(std::sin(n * 3.0 + i));
      v.Assign(Tensor::FromVector<float>(value, Shape{kSize}));
      Tensor held;
      if (n % 2 == 1) held = ema.AverageVariable(v)->value();
      ema.Apply({&v});
      for (size_t i = 0; i < shadow.size(); ++i) {
        shadow[i] = F(shadow[i] - double(F(double(F(double(shadow[i]) - value[i])) * one_minus)));
      }
      const std::vector<float> got = ema.AverageVariable(v)->value().ToVector<float>();
      ASSERT_EQ(got.size(), shadow.size());
      size_t differ = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        differ += std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(shadow[i]);
      }
      ASSERT_EQ(differ, 0u) << threads << " threads, n " << n;
    }
  }
  SetNumThreads(saved_threads);
}

TEST_F(ExponentialMovingAverageTest, Float64UsesTheFloat32OneMinusDecay) {
  Variable v(Tensor::FromVector<double>({0.1}, Shape{1}), "v");
  ExponentialMovingAverage ema(0.999);
  ema.Apply({&v});
  double shadow = 0.1;
  const double one_minus = double(F(1.0 - double(0.999f)));
  EXPECT_NE(one_minus, 1.0 - 0.999);  // the cast matters
  for (int step = 1; step <= 5; ++step) {
    v.Assign(Tensor::FromVector<double>({10.0 * step}, Shape{1}));
    ema.Apply();
    shadow = shadow - (shadow - 10.0 * step) * one_minus;
    ASSERT_EQ(ema.AverageVariable(v)->value().scalar<double>(), shadow);
  }
}

TEST_F(ExponentialMovingAverageTest, ApplyWithVariablesUpdatesOnlyThose) {
  Variable a(1.0f, "a"), b(2.0f, "b");
  ExponentialMovingAverage ema(0.5);
  ema.Apply({&a, &b});
  a.Assign(3.0f);
  b.Assign(5.0f);
  ema.Apply({&a});
  EXPECT_EQ(ema.AverageVariable(a)->value().scalar<float>(), 2.0f);
  EXPECT_EQ(ema.AverageVariable(b)->value().scalar<float>(), 2.0f);
  ema.Apply();
  EXPECT_EQ(ema.AverageVariable(a)->value().scalar<float>(), 2.5f);
  EXPECT_EQ(ema.AverageVariable(b)->value().scalar<float>(), 3.5f);
}

TEST_F(ExponentialMovingAverageTest, NamesAndVariablesToRestore) {
  NameScope scope("layer1");
  Variable w(1.0f, "weights");
  Variable step(int64_t{7}, "global_step", /*trainable=*/false);
  ExponentialMovingAverage ema(0.9);
  // Before Apply, TF's average_name prefixes the current name scope (TF
  // 2.21 gives "layer1/layer1/weights/ExponentialMovingAverage" here); once
  // the shadow exists it is the shadow's name.
  EXPECT_EQ(ema.AverageName(w), "layer1/layer1/weights/ExponentialMovingAverage");
  EXPECT_EQ(ema.AverageVariable(w), nullptr);
  ema.Apply({&w});
  EXPECT_EQ(ema.AverageName(w), "layer1/weights/ExponentialMovingAverage");
  EXPECT_EQ(ema.AverageVariable(w)->name(), "layer1/weights/ExponentialMovingAverage:0");
  std::map<std::string, Variable*> restore =
      ema.VariablesToRestore({&w, &step, ema.AverageVariable(w)});
  ASSERT_EQ(restore.size(), 2u);
  EXPECT_EQ(restore.at("layer1/weights/ExponentialMovingAverage"), &w);
  EXPECT_EQ(restore.at("layer1/global_step"), &step);
  std::vector<Trackable::Child> children = ema.Children();
  ASSERT_EQ(children.size(), 1u);
  EXPECT_EQ(children[0].name, "layer1/weights/ExponentialMovingAverage");
  EXPECT_EQ(children[0].object, ema.AverageVariable(w));
}

TEST_F(ExponentialMovingAverageTest, RejectsNonFloatVariablesNamingThem) {
  Variable f(1.0f, "f");
  Variable i(int32_t{3}, "counter");
  ExponentialMovingAverage ema(0.9);
  try {
    ema.Apply({&f, &i});
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("counter"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("int32"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ema.AverageVariable(f), nullptr);  // nothing created
  EXPECT_THROW(ExponentialMovingAverage(1.5), InvalidArgumentError);
}

}  // namespace
}  // namespace eager
