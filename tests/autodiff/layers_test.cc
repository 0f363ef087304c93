// Dense, Sequential and Module: Keras naming, lazy build, initialisers,
// the forward pass against hand-written loops, and Minimize with a tape.

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "autodiff/adam.h"
#include "autodiff/dense.h"
#include "autodiff/sequential.h"
#include "autodiff/sgd.h"
#include "ops/binary_ops.h"
#include "ops/reduction_ops.h"
#include "ops/unary_ops.h"
#include "runtime/names.h"

namespace eager {
namespace {

struct MyModel : Module {
  Dense dense{10};
  MyModel() { Track("dense", dense); }
  Tensor operator()(const Tensor& x) { return dense(x); }
};

class LayersTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetDefaultNames(); }
};

Tensor Ramp(int64_t rows, int64_t cols, float scale) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * (static_cast<float>(i % 7) - 3.0f);
  return Tensor::FromVector<float>(v, Shape{rows, cols});
}

TEST_F(LayersTest, DenseNamesAreUniquePerClassAsKeras) {
  Dense a(3), b(3), named(3, nullptr, true, std::nullopt, "head");
  EXPECT_EQ(a.name(), "dense");
  EXPECT_EQ(b.name(), "dense_1");
  EXPECT_EQ(named.name(), "head");
  a(Ramp(2, 4, 1));
  b(Ramp(2, 4, 1));
  EXPECT_EQ(a.kernel().name(), "dense/kernel:0");
  EXPECT_EQ(a.bias()->name(), "dense/bias:0");
  EXPECT_EQ(b.kernel().name(), "dense_1/kernel:0");
}

TEST_F(LayersTest, SecondModelInOneProcessGetsDense1) {
  MyModel first, second;
  first(Ramp(1, 5, 1));
  second(Ramp(1, 5, 1));
  EXPECT_EQ(first.dense.kernel().name(), "dense/kernel:0");
  EXPECT_EQ(second.dense.kernel().name(), "dense_1/kernel:0");
  EXPECT_EQ(second.dense.bias()->shared_name(), "dense_1/bias");
  // The object graph does not depend on those names.
  ASSERT_EQ(second.Children().size(), 1u);
  EXPECT_EQ(second.Children()[0].name, "dense");
  std::vector<Trackable::Child> edges = second.dense.Children();
  ASSERT_EQ(edges.size(), 2u);
  EXPECT_EQ(edges[0].name, "kernel");
  EXPECT_EQ(edges[1].name, "bias");
}

TEST_F(LayersTest, DenseBuildsLazilyOnFirstCall) {
  Dense dense(4);
  EXPECT_FALSE(dense.built());
  EXPECT_TRUE(dense.Children().empty());
  EXPECT_TRUE(dense.Variables().empty());
  EXPECT_THROW(dense.kernel(), FailedPreconditionError);
  dense(Ramp(2, 3, 1));
  ASSERT_TRUE(dense.built());
  EXPECT_EQ(dense.kernel().shape(), (Shape{3, 4}));
  EXPECT_EQ(dense.bias()->shape(), (Shape{4}));
  EXPECT_EQ(dense.bias()->value().ToVector<float>(), std::vector<float>(4, 0.0f));
  EXPECT_EQ(dense.TrainableVariables(), (std::vector<Variable*>{&dense.kernel(), dense.bias()}));
  EXPECT_THROW(dense(Ramp(2, 5, 1)), InvalidArgumentError);  // built for 3 inputs
  EXPECT_THROW(dense(Tensor::FromVector<float>({1, 2, 3}, Shape{3})), InvalidArgumentError);
  EXPECT_THROW(dense.Build(3), FailedPreconditionError);
  EXPECT_THROW(Dense(0), InvalidArgumentError);
}

TEST_F(LayersTest, KernelIsGlorotUniformAndReproducible) {
  const int64_t in = 300, out = 200;
  Dense a(out, nullptr, true, /*seed=*/7), b(out, nullptr, true, /*seed=*/7), c(out);
  a.Build(in);
  b.Build(in);
  c.Build(in);
  const double limit = std::sqrt(6.0 / (in + out));
  std::vector<float> k = a.kernel().value().ToVector<float>();
  double sum = 0, sum_sq = 0;
  for (float x : k) {
    ASSERT_GE(x, -limit);
    ASSERT_LT(x, limit);
    sum += x;
    sum_sq += double(x) * x;
  }
  const double n = static_cast<double>(k.size());
  EXPECT_NEAR(sum / n, 0.0, 0.01 * limit);
  EXPECT_NEAR(sum_sq / n, limit * limit / 3.0, 0.02 * limit * limit);  // var of U(-l, l)
  EXPECT_EQ(k, b.kernel().value().ToVector<float>());
  EXPECT_NE(k, c.kernel().value().ToVector<float>());
  // The default seed comes from the name, so a rerun builds the same layer.
  const std::vector<float> first_run = c.kernel().value().ToVector<float>();
  ResetDefaultNames();
  Dense d0(out), d1(out), d2(out);  // "dense", "dense_1", "dense_2" again
  d2.Build(in);
  EXPECT_EQ(d2.name(), c.name());
  EXPECT_EQ(d2.kernel().value().ToVector<float>(), first_run);
}

TEST_F(LayersTest, ForwardMatchesHandComputedAffineAndActivation) {
  Dense dense(3, Relu, true, 1);
  const Tensor x = Ramp(4, 5, 0.5f);
  dense.Build(5);
  dense.bias()->Assign(Tensor::FromVector<float>({0.1f, -0.2f, 0.3f}, Shape{3}));
  const Tensor y = dense(x);
  ASSERT_EQ(y.shape(), (Shape{4, 3}));
  const std::vector<float> k = dense.kernel().value().ToVector<float>();
  const std::vector<float> b = dense.bias()->value().ToVector<float>();
  const std::vector<float> xs = x.ToVector<float>();
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 3; ++j) {
      double acc = b[j];
      for (int p = 0; p < 5; ++p) acc += double(xs[i * 5 + p]) * k[p * 3 + j];
      EXPECT_NEAR(y.at<float>({i, j}), std::max(acc, 0.0), 1e-5) << i << "," << j;
    }
  }
  Dense no_bias(2, nullptr, /*use_bias=*/false, 3);
  no_bias(Ramp(1, 2, 1));
  EXPECT_EQ(no_bias.bias(), nullptr);
  EXPECT_EQ(no_bias.Children().size(), 1u);
}

TEST_F(LayersTest, Float64InputsBuildFloat64Variables) {
  Dense dense(2);
  const Tensor y = dense(Tensor::FromVector<double>({1, 2, 3}, Shape{1, 3}));
  EXPECT_EQ(y.dtype(), DType::kFloat64);
  EXPECT_EQ(dense.kernel().dtype(), DType::kFloat64);
}

TEST_F(LayersTest, SequentialChainsLayersWithKerasEdges) {
  Sequential model;
  EXPECT_EQ(model.name(), "sequential");
  model.Add(std::make_unique<Dense>(8, Relu));
  model.Add(std::make_unique<Dense>(2));
  std::vector<Trackable::Child> before = model.Children();
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[0].name, "layer-0");
  EXPECT_EQ(before[1].name, "layer-1");
  const Tensor y = model(Ramp(3, 4, 1));
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  std::vector<Trackable::Child> after = model.Children();
  ASSERT_EQ(after.size(), 4u);
  EXPECT_EQ(after[0].name, "layer_with_weights-0");
  EXPECT_EQ(after[1].name, "layer-0");
  EXPECT_EQ(after[0].object, after[1].object);
  EXPECT_EQ(after[2].name, "layer_with_weights-1");
  EXPECT_EQ(after[3].name, "layer-1");
  std::vector<Variable*> vars = model.TrainableVariables();
  ASSERT_EQ(vars.size(), 4u);
  EXPECT_EQ(vars[0]->name(), "dense/kernel:0");
  EXPECT_EQ(vars[1]->name(), "dense/bias:0");
  EXPECT_EQ(vars[2]->name(), "dense_1/kernel:0");
  EXPECT_EQ(vars[3]->name(), "dense_1/bias:0");
  Sequential empty;
  EXPECT_THROW(empty(Ramp(1, 1, 1)), FailedPreconditionError);
}

TEST_F(LayersTest, MinimizeAppliesTheTapeGradient) {
  // loss = sum(w^2): gradient 2w, so SGD(0.1) gives w - (2w) * 0.1.
  Variable w(Tensor::FromVector<float>({1.5f, -3.0f}, Shape{2}), "w");
  SGD sgd(0.1);
  const Tensor loss = sgd.Minimize([&] { return ReduceSum(Square(w.value())); }, {&w});
  EXPECT_EQ(loss.scalar<float>(), 1.5f * 1.5f + 9.0f);
  const std::vector<float> got = w.value().ToVector<float>();
  EXPECT_EQ(got[0], 1.5f - 3.0f * 0.1f);
  EXPECT_EQ(got[1], -3.0f - (-6.0f * 0.1f));
  EXPECT_EQ(sgd.iterations(), 1);
}

TEST_F(LayersTest, AdamTrainsADenseRegressionDown) {
  // y = 2x - 1, learnt by a 1-unit Dense.
  Dense dense(1, nullptr, true, 5);
  const Tensor x = Tensor::FromVector<float>({-1, 0, 1, 2}, Shape{4, 1});
  const Tensor y = Tensor::FromVector<float>({-3, -1, 1, 3}, Shape{4, 1});
  dense.Build(1);
  Adam adam(0.1);
  float first = 0, last = 0;
  for (int step = 0; step < 300; ++step) {
    const Tensor loss = adam.Minimize([&] { return ReduceMean(Square(Sub(dense(x), y))); },
                                      dense.TrainableVariables());
    if (step == 0) first = loss.scalar<float>();
    last = loss.scalar<float>();
  }
  EXPECT_LT(last, 1e-3f * first);
  EXPECT_NEAR(dense.kernel().value().scalar<float>(), 2.0f, 0.05f);
  EXPECT_NEAR(dense.bias()->value().scalar<float>(), -1.0f, 0.05f);
}

}  // namespace
}  // namespace eager
