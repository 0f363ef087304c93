// Flatten, InputLayer and Dense on inputs of rank > 2, as Keras: Flatten
// keeps the batch axis (keras/layers/reshaping/flatten.py), Dense contracts
// the last axis with tensordot (keras/layers/core/dense.py).

#include <gtest/gtest.h>

#include "autodiff/dense.h"
#include "autodiff/flatten.h"
#include "autodiff/gradient_tape.h"
#include "autodiff/input_layer.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "runtime/errors.h"

namespace eager {
namespace {

TEST(WeightlessLayersTest, FlattenKeepsTheBatchAxisRowMajor) {
  Flatten flatten;
  const Tensor x = RandomNormal(Shape{2, 3, 2}, 5);
  const Tensor y = flatten(x);
  EXPECT_EQ(y.shape(), Shape({2, 6}));
  EXPECT_EQ(y.ToVector<float>(), x.ToVector<float>());
  EXPECT_EQ(flatten(Tensor::Zeros(Shape{3})).shape(), Shape({3, 1}));
  EXPECT_THROW(flatten(Tensor(1.0f)), InvalidArgumentError);
  EXPECT_EQ(Flatten().name().rfind("flatten_", 0), 0u);  // the second: "flatten_N"
}

TEST(WeightlessLayersTest, InputLayerPassesThroughAndChecksTheShape) {
  InputLayer input(Shape{3});
  const Tensor x = RandomNormal(Shape{4, 3}, 1);
  EXPECT_EQ(input(x).ToVector<float>(), x.ToVector<float>());
  EXPECT_THROW(input(Tensor::Zeros(Shape{4, 2})), InvalidArgumentError);
  EXPECT_THROW(input(Tensor::Zeros(Shape{3})), InvalidArgumentError);
  EXPECT_EQ(InputLayer().name().rfind("input_", 0), 0u);
  EXPECT_TRUE(input.Variables().empty());
}

// y[i, j, :] = x[i, j, :] @ kernel + bias, checked element by element.
TEST(WeightlessLayersTest, DenseOnRank3ContractsTheLastAxis) {
  Dense dense(2, nullptr, true, /*seed=*/4);
  const Tensor x = RandomNormal(Shape{2, 3, 4}, 6);
  const Tensor y = dense(x);
  ASSERT_EQ(y.shape(), Shape({2, 3, 2}));
  dense.bias()->Assign(Tensor::FromVector<float>({0.5f, -1.0f}, Shape{2}));
  const Tensor z = dense(x);
  const std::vector<float> xs = x.ToVector<float>();
  const std::vector<float> k = dense.kernel().value().ToVector<float>();
  const std::vector<float> zs = z.ToVector<float>();
  for (int row = 0; row < 6; ++row) {
    for (int j = 0; j < 2; ++j) {
      double expected = j == 0 ? 0.5 : -1.0;
      for (int i = 0; i < 4; ++i) expected += double{xs[row * 4 + i]} * double{k[i * 2 + j]};
      EXPECT_NEAR(zs[row * 2 + j], expected, 1e-5) << row << "," << j;
    }
  }
  // Gradients flow through the reshapes: d sum(y) / d bias = number of rows.
  GradientTape tape;
  tape.Watch(*dense.bias());
  const Tensor loss = ReduceSum(dense(x));
  const std::vector<const Variable*> sources = {dense.bias()};
  const auto grads = tape.Gradient(loss, sources);
  ASSERT_TRUE(grads[0]);
  EXPECT_EQ(grads[0]->ToVector<float>(), (std::vector<float>{6.0f, 6.0f}));
  EXPECT_THROW(dense(Tensor::Zeros(Shape{2, 3, 5})), InvalidArgumentError);
}

}  // namespace
}  // namespace eager
