// layers::Dropout (autodiff/layers/regularization.h) and layers::Embedding
// (autodiff/layers/embedding.h): the mask's statistics and scale, the
// identity in inference, gradients through the mask and through Gather.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/gradient_tape.h"
#include "autodiff/layers/embedding.h"
#include "autodiff/layers/normalization.h"
#include "autodiff/layers/regularization.h"
#include "autodiff/sequential.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "runtime/errors.h"
#include "runtime/graph.h"

namespace eager {
namespace {

TEST(DropoutTest, InferenceIsTheIdentity) {
  layers::Dropout dropout(0.5);
  EXPECT_EQ(dropout.name().rfind("dropout", 0), 0u);
  const Tensor x = RandomNormal(Shape{3, 4}, 1);
  EXPECT_EQ(dropout(x).ToVector<float>(), x.ToVector<float>());
  EXPECT_EQ(dropout(x, false).ToVector<float>(), x.ToVector<float>());
  EXPECT_TRUE(dropout.Variables().empty());
  EXPECT_TRUE(dropout.Children().empty());
}

TEST(DropoutTest, TrainingZerosAboutRateAndScalesTheRest) {
  layers::Dropout dropout(0.3, /*seed=*/7);
  const Tensor x = RandomNormal(Shape{100, 100}, 2, 1.0, 1.0);
  const Tensor y = dropout(x, true);
  const std::vector<float> xs = x.ToVector<float>(), ys = y.ToVector<float>();
  const float scale = static_cast<float>(1.0 / 0.7);
  int zeros = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (ys[i] == 0.0f) {
      ++zeros;
    } else {
      EXPECT_EQ(ys[i], xs[i] * scale) << i;  // TF's x * (1 / (1 - rate)), in float32
    }
  }
  // 10000 Bernoulli(0.3) drops: binomial mean n p, standard deviation
  // sqrt(n p (1 - p)) = 46; 5 sigma (a false failure about once in 2e6 seeds).
  const double n = static_cast<double>(xs.size()), p = 0.3;
  EXPECT_NEAR(zeros, n * p, 5 * std::sqrt(n * p * (1 - p)));
  // A new mask per call, the same sequence for the same seed.
  const Tensor y2 = dropout(x, true);
  EXPECT_NE(y2.ToVector<float>(), ys);
  layers::Dropout again(0.3, /*seed=*/7);
  EXPECT_EQ(again(x, true).ToVector<float>(), ys);
}

// Keras 3's Dropout(0.5, seed=7) on TF, called twice in training on
// ones([1, 8]), gave these (its masks are stateless_dropout's with the seeds
// [7, 0] and [7, 1]).
TEST(DropoutTest, MasksAreKeras3sCounterBasedOnes) {
  layers::Dropout dropout(0.5, /*seed=*/7);
  const Tensor x = Ones(Shape{1, 8});
  EXPECT_EQ(dropout.step(), 0);
  EXPECT_EQ(dropout(x, true).ToVector<float>(), (std::vector<float>{2, 2, 0, 2, 0, 2, 0, 2}));
  EXPECT_EQ(dropout(x, true).ToVector<float>(), (std::vector<float>{0, 2, 0, 2, 2, 2, 2, 0}));
  EXPECT_EQ(dropout.step(), 2);
  dropout(x);  // inference draws nothing
  EXPECT_EQ(dropout.step(), 2);
  // The mask is a function of (seed, step): going back gives the same one.
  dropout.set_step(1);
  EXPECT_EQ(dropout(x, true).ToVector<float>(), (std::vector<float>{0, 2, 0, 2, 2, 2, 2, 0}));
  EXPECT_THROW(dropout.set_step(-1), InvalidArgumentError);
}

TEST(DropoutTest, GradientFlowsThroughTheKeptElementsOnly) {
  layers::Dropout dropout(0.5, /*seed=*/3);
  const Tensor x = RandomNormal(Shape{8, 8}, 4, 0.0, 1.0, DType::kFloat64);
  GradientTape tape;
  tape.Watch(x);
  const Tensor y = dropout(x, true);
  const auto grads = tape.Gradient(ReduceSum(y), {x});
  ASSERT_TRUE(grads[0]);
  const std::vector<double> g = grads[0]->ToVector<double>(), ys = y.ToVector<double>();
  for (size_t i = 0; i < g.size(); ++i) EXPECT_EQ(g[i], ys[i] == 0.0 ? 0.0 : 2.0) << i;
}

TEST(DropoutTest, EdgeRatesAndErrors) {
  const Tensor x = RandomNormal(Shape{2, 3}, 5);
  EXPECT_EQ(layers::Dropout(0.0)(x, true).ToVector<float>(), x.ToVector<float>());
  EXPECT_EQ(layers::Dropout(1.0)(x, true).ToVector<float>(), std::vector<float>(6, 0.0f));
  EXPECT_THROW(layers::Dropout(1.5), InvalidArgumentError);
  EXPECT_THROW(layers::Dropout(-0.1), InvalidArgumentError);
  EXPECT_THROW(layers::Dropout(0.5)(Tensor::Zeros(Shape{2}, DType::kInt32), true),
               InvalidArgumentError);
}

TEST(DropoutTest, SequentialDropsOnlyInTraining) {
  Sequential model;
  model.Add(std::make_unique<layers::Dropout>(0.5, 1));
  const Tensor x = RandomNormal(Shape{10, 10}, 6, 5.0, 0.1);
  EXPECT_EQ(model(x).ToVector<float>(), x.ToVector<float>());
  int zeros = 0;
  for (float v : model(x, true).ToVector<float>()) zeros += v == 0.0f;
  EXPECT_GT(zeros, 20);
  EXPECT_LT(zeros, 80);
}

// In a graph the inference calls trace as the identity and the moving
// statistics; training calls add nodes (tests/autodiff/graph_layers_test.cc
// runs them).
TEST(DropoutTest, GraphTracesInferenceAsTheIdentity) {
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1, 3}));
  layers::Dropout dropout(0.5);
  EXPECT_EQ(dropout(x).name(), x.name());
  EXPECT_NE(dropout(x, true).name(), x.name());
  layers::BatchNormalization bn;
  bn.Build(3);
  EXPECT_TRUE(bn(x).is_symbolic());
  EXPECT_TRUE(graph.NameCollection(Graph::kUpdateOps).empty());
}

TEST(EmbeddingTest, PicksRowsOfAUniformTable) {
  layers::Embedding embed(10, 4);
  EXPECT_EQ(embed.name().rfind("embedding", 0), 0u);
  EXPECT_THROW(embed.embeddings(), FailedPreconditionError);
  const Tensor ids = Tensor::FromVector<int32_t>({1, 0, 9, 1, 3, 3}, Shape{2, 3});
  const Tensor y = embed(ids);
  ASSERT_EQ(y.shape(), Shape({2, 3, 4}));
  const Variable& table = embed.embeddings();
  EXPECT_EQ(table.name(), embed.name() + "/embeddings:0");
  EXPECT_EQ(table.shape(), Shape({10, 4}));
  EXPECT_EQ(table.dtype(), DType::kFloat32);
  const std::vector<float> t = table.value().ToVector<float>();
  for (float v : t) {
    EXPECT_GE(v, -0.05f);
    EXPECT_LT(v, 0.05f);
  }
  const std::vector<int32_t> id = {1, 0, 9, 1, 3, 3};
  const std::vector<float> ys = y.ToVector<float>();
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 4; ++j) EXPECT_EQ(ys[i * 4 + j], t[id[i] * 4 + j]);
  }
  // int64 and float ids (cast to int32, as Keras 3) pick the same rows.
  EXPECT_EQ(embed(Tensor::FromVector<int64_t>({1, 0, 9, 1, 3, 3}, Shape{2, 3})).ToVector<float>(),
            ys);
  EXPECT_EQ(embed(Tensor::FromVector<float>({1, 0, 9, 1, 3, 3}, Shape{2, 3})).ToVector<float>(),
            ys);
  EXPECT_THROW(embed(Tensor::FromVector<int32_t>({10})), InvalidArgumentError);
  EXPECT_THROW(layers::Embedding(0, 3), InvalidArgumentError);
  // Seeded: the same seed builds the same table.
  layers::Embedding a(5, 2, false, 42), b(5, 2, false, 42);
  a(Tensor::FromVector<int32_t>({0}));
  b(Tensor::FromVector<int32_t>({0}));
  EXPECT_EQ(a.embeddings().value().ToVector<float>(), b.embeddings().value().ToVector<float>());
}

TEST(EmbeddingTest, GradientSumsTheOutputGradientPerId) {
  layers::Embedding embed(5, 2, false, 1, DType::kFloat64);
  const Tensor ids = Tensor::FromVector<int32_t>({1, 3, 1, 1});
  GradientTape tape;
  const Tensor y = embed(ids);
  const Tensor w = Tensor::FromVector<double>({1, 2, 3, 4, 5, 6, 7, 8}, Shape{4, 2});
  const std::vector<const Variable*> vars = {&embed.embeddings()};
  const auto grads = tape.Gradient(ReduceSum(Mul(y, w)), vars);
  ASSERT_TRUE(grads[0]);
  // Row 1 gets rows 0, 2 and 3 of w; row 3 gets row 1; the rest zero.
  EXPECT_EQ(grads[0]->ToVector<double>(),
            (std::vector<double>{0, 0, 1 + 5 + 7, 2 + 6 + 8, 0, 0, 3, 4, 0, 0}));
}

TEST(EmbeddingTest, MaskZeroAndEdgesByLayout) {
  layers::Embedding embed(6, 3, /*mask_zero=*/true);
  EXPECT_TRUE(embed.mask_zero());
  const Tensor ids = Tensor::FromVector<int32_t>({0, 2, 0, 5}, Shape{2, 2});
  const std::optional<Tensor> mask = embed.ComputeMask(ids);
  ASSERT_TRUE(mask);
  EXPECT_EQ(mask->dtype(), DType::kBool);
  EXPECT_EQ(mask->shape(), Shape({2, 2}));
  EXPECT_EQ(mask->ToVector<bool>(), (std::vector<bool>{false, true, false, true}));
  EXPECT_FALSE(layers::Embedding(6, 3).ComputeMask(ids));
  embed(ids);
  ASSERT_EQ(embed.Children().size(), 1u);
  EXPECT_EQ(embed.Children()[0].name, "embeddings");
  embed.UseKerasLayout(KerasLayout::kKeras3);
  EXPECT_EQ(embed.Children()[0].name, "_embeddings");
}

}  // namespace
}  // namespace eager
