// Keras's activations by name (autodiff/activations.h): each against its
// formula evaluated here in double (Keras 3's definitions), in float32 and
// float64, and its gradient against central finite differences (float64).

#include "autodiff/activations.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "autodiff/gradient_tape.h"
#include "autodiff/layers/reshaping.h"
#include "ops/binary_ops.h"
#include "ops/reduction_ops.h"
#include "runtime/errors.h"

namespace eager {
namespace {

// Inputs on both sides of every kink and switch point (0, +-3 for
// hard_sigmoid, 6 for relu6, Softplus's +-13.9 in float32).
const std::vector<double> kInputs = {-20.0, -13.0, -3.5, -2.9, -1.3, -0.4, -0.05, 0.05,
                                     0.4,   1.3,   2.9,  3.5,  5.8,  6.3,  13.0,  20.0};

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double Softplus(double x) { return std::log1p(std::exp(x)); }
double HardSigmoid(double x) { return std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0; }

// Keras 3's formulas for the elementwise activations.
const std::map<std::string, std::function<double(double)>>& Formulas() {
  static const std::map<std::string, std::function<double(double)>> formulas = {
      {"linear", [](double x) { return x; }},
      {"relu", [](double x) { return std::max(x, 0.0); }},
      {"relu6", [](double x) { return std::min(std::max(x, 0.0), 6.0); }},
      {"leaky_relu", [](double x) { return x > 0 ? x : 0.2 * x; }},
      {"elu", [](double x) { return x > 0 ? x : std::expm1(x); }},
      {"selu",
       [](double x) {
         const double alpha = 1.6732632423543772848170429916717;
         const double scale = 1.0507009873554804934193349852946;
         return scale * (x > 0 ? x : alpha * std::expm1(x));
       }},
      {"gelu", [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }},
      {"gelu_approximate",
       [](double x) {
         return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
       }},
      {"silu", [](double x) { return x * Sigmoid(x); }},
      {"swish", [](double x) { return x * Sigmoid(x); }},
      {"softplus", Softplus},
      {"softsign", [](double x) { return x / (1.0 + std::abs(x)); }},
      {"sigmoid", Sigmoid},
      {"tanh", [](double x) { return std::tanh(x); }},
      {"exponential", [](double x) { return std::exp(x); }},
      {"hard_sigmoid", HardSigmoid},
      {"hard_silu", [](double x) { return x * HardSigmoid(x); }},
      {"hard_swish", [](double x) { return x * HardSigmoid(x); }},
      {"mish", [](double x) { return x * std::tanh(Softplus(x)); }},
  };
  return formulas;
}

TEST(KerasActivations, EveryNameHasAFormulaHere) {
  for (std::string_view name : KerasActivationNames()) {
    if (name == "softmax" || name == "log_softmax") continue;  // rows: below
    EXPECT_TRUE(Formulas().contains(std::string(name))) << name;
  }
  EXPECT_EQ(KerasActivationNames().size(), Formulas().size() + 2);
}

TEST(KerasActivations, MatchKerasFormulasInFloat32AndFloat64) {
  for (const auto& [name, formula] : Formulas()) {
    const Activation fn = ActivationByName(name);
    const Tensor y64 = fn(Tensor::FromVector<double>(kInputs));
    std::vector<float> in32(kInputs.begin(), kInputs.end());
    const Tensor y32 = fn(Tensor::FromVector<float>(in32));
    ASSERT_EQ(y64.dtype(), DType::kFloat64) << name;
    ASSERT_EQ(y32.dtype(), DType::kFloat32) << name;
    for (size_t i = 0; i < kInputs.size(); ++i) {
      const double want = formula(kInputs[i]);
      EXPECT_NEAR(y64.data<double>()[i], want, 1e-12 * (1 + std::abs(want)))
          << name << "(" << kInputs[i] << ")";
      EXPECT_NEAR(y32.data<float>()[i], want, 3e-6 * (1 + std::abs(want)))
          << name << "(" << kInputs[i] << ") float32";
    }
  }
}

TEST(KerasActivations, SoftmaxAndLogSoftmaxOverTheLastAxis) {
  const Tensor x = Tensor::FromVector<double>({1.0, 2.0, 3.0, -1.0, 0.0, 4.0}, Shape{2, 3});
  const Tensor s = ActivationByName("softmax")(x);
  const Tensor l = ActivationByName("log_softmax")(x);
  for (int r = 0; r < 2; ++r) {
    double total = 0;
    for (int c = 0; c < 3; ++c) total += std::exp(x.data<double>()[r * 3 + c]);
    for (int c = 0; c < 3; ++c) {
      const double want = std::exp(x.data<double>()[r * 3 + c]) / total;
      EXPECT_NEAR(s.data<double>()[r * 3 + c], want, 1e-14);
      EXPECT_NEAR(l.data<double>()[r * 3 + c], std::log(want), 1e-13);
    }
  }
}

TEST(KerasActivations, GradientsMatchFiniteDifferences) {
  // Away from the kinks, where finite differences are defined.
  const std::vector<double> points = {-2.9, -1.3, -0.4, 0.4, 1.3, 2.9, 5.8};
  for (std::string_view name : KerasActivationNames()) {
    const Activation fn = ActivationByName(name);
    const Tensor x = Tensor::FromVector<double>(points);
    GradientTape tape;
    tape.Watch(x);
    // A weighted sum, so that softmax's rows give a non-trivial gradient.
    const Tensor weights = Tensor::FromVector<double>({0.3, -1.1, 0.7, 1.9, -0.2, 0.5, 1.3});
    const Tensor loss = ReduceSum(Mul(fn(x), weights));
    const auto grads = tape.Gradient(loss, {x});
    ASSERT_TRUE(grads[0].has_value()) << name;
    auto value = [&](const std::vector<double>& v) {
      return ReduceSum(Mul(fn(Tensor::FromVector<double>(v)), weights)).data<double>()[0];
    };
    for (size_t i = 0; i < points.size(); ++i) {
      const double h = 1e-6;
      std::vector<double> up = points, down = points;
      up[i] += h;
      down[i] -= h;
      const double fd = (value(up) - value(down)) / (2 * h);
      EXPECT_NEAR(grads[0]->data<double>()[i], fd, 1e-6 * (1 + std::abs(fd)))
          << name << " at " << points[i];
    }
  }
}

TEST(KerasActivations, UnknownNameListsTheKnownOnes) {
  try {
    ActivationByName("relu7");
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown activation 'relu7'"), std::string::npos) << what;
    EXPECT_NE(what.find("gelu"), std::string::npos) << what;
    EXPECT_NE(what.find("hard_swish"), std::string::npos) << what;
  }
  try {
    layers::Activation act("relu7", "act");
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("Activation 'act': unknown activation 'relu7'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace eager
