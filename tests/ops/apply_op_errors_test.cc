// The refusals of the TF1 apply ops (ApplyAdam, ApplyGradientDescent,
// ApplyMomentum), whose checks ops/internal/apply_op.h writes once: each
// names the op, the variable and what was expected.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ops/training_ops.h"
#include "runtime/graph.h"

namespace eager {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

TEST(ApplyOpErrorsTest, ArgumentsAreCheckedAgainstTheVariable) {
  Variable var(Tensor::Vector<float>({1.0f, 2.0f}), "w");
  Variable accum(Tensor::Vector<float>({0.0f}), "w/Momentum");
  Variable m(Tensor::Vector<double>({0.0, 0.0}), "w/Adam");
  const Tensor grad = Tensor::Vector<float>({0.5f, 0.5f});
  EXPECT_THAT([&] { ApplyMomentum(var, accum, Tensor(0.1f), grad, Tensor(0.9f)); },
              ThrowsMessage<InvalidArgumentError>(
                  HasSubstr("ApplyMomentum on variable 'w': accum 'w/Momentum' is float32 [1], "
                            "expected float32 [2]")));
  EXPECT_THAT([&] { ApplyGradientDescent(var, Tensor(0.1f), Tensor::Vector<float>({1.0f})); },
              ThrowsMessage<InvalidArgumentError>(
                  HasSubstr("ApplyGradientDescent on variable 'w': delta is a float32 tensor of "
                            "shape [1]; expected float32 of the variable's shape [2]")));
  EXPECT_THAT([&] { ApplyGradientDescent(var, Tensor(0.1), grad); },
              ThrowsMessage<InvalidArgumentError>(HasSubstr(
                  "ApplyGradientDescent on variable 'w': alpha is a float64 tensor of shape []; "
                  "expected float32 scalar")));
  EXPECT_THAT(
      [&] {
        ApplyAdam(var, m, m, Tensor(0.9f), Tensor(0.999f), Tensor(0.1f), Tensor(0.9f),
                  Tensor(0.999f), Tensor(1e-8f), grad);
      },
      ThrowsMessage<InvalidArgumentError>(HasSubstr(
          "ApplyAdam on variable 'w': slot 'w/Adam' is float64 [2], expected float32 [2]")));
  Variable ints(Tensor::Vector<int32_t>({1}), "i");
  EXPECT_THAT([&] { ApplyGradientDescent(ints, Tensor(1), Tensor::Vector<int32_t>({1})); },
              ThrowsMessage<InvalidArgumentError>(HasSubstr(
                  "on variable 'i': dtype int32 is not supported; expected float32 or float64")));
}

TEST(ApplyOpErrorsTest, UninitializedAndForeignVariablesAreNamed) {
  Graph graph;
  Variable outside(Tensor::Vector<float>({1.0f}), "outside");
  Graph::AsDefault in(graph);
  EXPECT_THAT(
      [&] { ApplyGradientDescent(outside, Tensor(0.1f), Tensor::Vector<float>({1.0f})); },
      ThrowsMessage<InvalidArgumentError>(HasSubstr(
          "ApplyGradientDescent: variable 'outside' does not belong to the default graph")));
}

}  // namespace
}  // namespace eager
