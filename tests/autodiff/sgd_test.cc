// SGD against the Keras OptimizerV2 formulas (ApplyGradientDescent,
// ApplyKerasMomentum), recomputed here with every float32 op rounded.
#pragma GCC optimize("fp-contract=off")

#include "autodiff/sgd.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "runtime/names.h"

namespace eager {
namespace {

float F(double x) { return static_cast<float>(x); }

class SGDTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetDefaultNames(); }
};

TEST_F(SGDTest, LayoutFollowsKeras) {
  SGD sgd(0.1, 0.9);
  std::vector<Trackable::Child> children = sgd.Children();
  ASSERT_EQ(children.size(), 4u);
  EXPECT_EQ(children[0].name, "iter");
  EXPECT_EQ(children[1].name, "decay");
  EXPECT_EQ(children[2].name, "learning_rate");
  EXPECT_EQ(children[3].name, "momentum");
  EXPECT_EQ(sgd.momentum().name(), "SGD/momentum:0");
  Variable w(Tensor::FromVector<float>({1}, Shape{1}), "w");
  sgd.ApplyGradients({{Tensor::FromVector<float>({1}, Shape{1}), &w}});
  ASSERT_EQ(sgd.Slots().size(), 1u);
  EXPECT_EQ(sgd.Slots()[0].name, "momentum");
  EXPECT_EQ(sgd.Slots()[0].slot->name(), "SGD/w/momentum:0");
}

TEST_F(SGDTest, PlainDescentHasNoSlots) {
  SGD sgd(0.1);
  Variable w(Tensor::FromVector<float>({1.0f, -2.0f}, Shape{2}), "w");
  std::vector<float> ref = {1.0f, -2.0f};
  for (int step = 0; step < 5; ++step) {
    std::vector<float> g = {F(0.3 * step), F(-1.7 + step)};
    sgd.ApplyGradients({{Tensor::FromVector<float>(g, Shape{2}), &w}});
    for (size_t i = 0; i < 2; ++i) ref[i] = F(ref[i] - double(F(double(g[i]) * 0.1f)));
    ASSERT_EQ(w.value().ToVector<float>(), ref) << "step " << step + 1;
  }
  EXPECT_TRUE(sgd.Slots().empty());
  EXPECT_EQ(sgd.iterations(), 5);
}

TEST_F(SGDTest, MomentumAndNesterovMatchKerasMomentumKernel) {
  for (bool nesterov : {false, true}) {
    SGD sgd(0.05, 0.9, nesterov);
    Variable w(Tensor::FromVector<float>({0.5f, 3.0f}, Shape{2}), "w");
    std::vector<float> var = {0.5f, 3.0f}, accum = {0.0f, 0.0f};
    for (int step = 0; step < 8; ++step) {
      std::vector<float> g = {F(1.0 / (step + 1)), F(-0.25 * step)};
      sgd.ApplyGradients({{Tensor::FromVector<float>(g, Shape{2}), &w}});
      for (size_t i = 0; i < 2; ++i) {
        const float glr = F(double(g[i]) * 0.05f);
        accum[i] = F(double(F(double(accum[i]) * 0.9f)) - glr);
        var[i] = nesterov ? F(var[i] + double(F(double(F(double(accum[i]) * 0.9f)) - glr)))
                          : F(double(var[i]) + accum[i]);
      }
      ASSERT_EQ(w.value().ToVector<float>(), var) << "nesterov " << nesterov << " step " << step;
    }
  }
}

TEST_F(SGDTest, Float64) {
  SGD sgd(0.1, 0.5);
  Variable w(Tensor::FromVector<double>({1.0}, Shape{1}), "w");
  double var = 1.0, accum = 0.0;
  const double lr = double(0.1f), momentum = double(0.5f);
  for (int step = 0; step < 6; ++step) {
    const double g = 0.1 * step - 0.2;
    sgd.ApplyGradients({{Tensor::FromVector<double>({g}, Shape{1}), &w}});
    accum = accum * momentum - g * lr;
    var = var + accum;
    ASSERT_EQ(w.value().scalar<double>(), var);
  }
}

TEST_F(SGDTest, ParallelGradientAndVariableListsPairByIndex) {
  SGD sgd(0.5);
  Variable a(Tensor::FromVector<float>({1, 2}, Shape{2}), "a");
  Variable b(Tensor::FromVector<float>({10}, Shape{1}), "b");
  Variable c(Tensor::FromVector<float>({7}, Shape{1}), "c");
  const std::vector<Variable*> vars = {&a, &b, &c};
  const std::vector<std::optional<Tensor>> grads = {Tensor::FromVector<float>({2, 4}, Shape{2}),
                                                    Tensor::FromVector<float>({-2}, Shape{1}),
                                                    std::nullopt};

  sgd.ApplyGradients(grads, vars);

  EXPECT_EQ(a.value().ToVector<float>(), (std::vector<float>{0, 0}));
  EXPECT_EQ(b.value().ToVector<float>(), (std::vector<float>{11}));
  EXPECT_EQ(c.value().ToVector<float>(), (std::vector<float>{7}));  // no gradient: skipped
  EXPECT_EQ(sgd.iterations(), 1);
}

TEST_F(SGDTest, ParallelListsOfDifferentLengthsAreRejectedBeforeAnyUpdate) {
  SGD sgd(0.5);
  Variable a(Tensor::FromVector<float>({1}, Shape{1}), "a");
  Variable b(Tensor::FromVector<float>({2}, Shape{1}), "b");
  const std::vector<Variable*> vars = {&a, &b};
  const std::vector<std::optional<Tensor>> grads = {Tensor::FromVector<float>({1}, Shape{1})};
  try {
    sgd.ApplyGradients(grads, vars);
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("1 gradients for 2 variables"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(a.value().ToVector<float>(), (std::vector<float>{1}));
  EXPECT_EQ(sgd.iterations(), 0);
}

TEST_F(SGDTest, ValidatesOptions) {
  EXPECT_THROW(SGD(0.1, 1.5), InvalidArgumentError);
  EXPECT_THROW(SGD(-0.1), InvalidArgumentError);
}

}  // namespace
}  // namespace eager
