// Layers in graph mode: a layer built inside Graph::AsDefault creates graph
// variables and nodes through the same op functions, and a Session computes
// what the eager layer computes: Dense; BatchNormalization's training call
// with its moving-statistics updates in UPDATE_OPS; Dropout's training call
// as TF1's tf.nn.dropout.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "autodiff/dense.h"
#include "autodiff/gradient_tape.h"
#include "autodiff/graph_gradients.h"
#include "autodiff/layers/normalization.h"
#include "autodiff/layers/regularization.h"
#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/nn_ops.h"
#include "ops/random_ops.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "ops/shape_ops.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"

namespace eager {
namespace {

using ::testing::ElementsAre;

TEST(GraphLayersTest, DenseRunsInASessionAsEagerly) {
  const Tensor x = Tensor::Matrix<float>({{1, -2, 3, 0.5f}, {0, 1, -1, 2}});
  const Tensor labels = Tensor::Vector<int32_t>({2, 0});
  Dense eager_layer(3, Relu, /*use_bias=*/true, /*seed=*/5, "eager_dense");
  const Tensor eager_y = eager_layer.Call(x);
  const Tensor eager_loss = ReduceMean(SparseSoftmaxCrossEntropyWithLogits(labels, eager_y));

  Graph graph;
  Graph::AsDefault in(graph);
  Dense layer(3, Relu, /*use_bias=*/true, /*seed=*/5, "dense");
  const Tensor xp = Placeholder(DType::kFloat32, Shape::Partial({-1, 4}), "x");
  const Tensor lp = Placeholder(DType::kInt32, Shape::Partial({-1}), "labels");
  const Tensor y = layer.Call(xp);
  const Tensor loss = ReduceMean(SparseSoftmaxCrossEntropyWithLogits(lp, y));
  EXPECT_EQ(y.shape().ToString(), "[?,3]");
  EXPECT_EQ(loss.shape(), Shape{});
  EXPECT_EQ(layer.kernel().name(), "dense/kernel:0");
  EXPECT_THAT(graph.TrainableVariables(), ElementsAre(&layer.kernel(), layer.bias()));
  EXPECT_EQ(graph.FindNode("dense/MatMul")->op, "MatMul");

  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  auto out = sess.Run({y, loss}, {{xp, x}, {lp, labels}});
  EXPECT_EQ(out[0]->ToVector<float>(), eager_y.ToVector<float>());
  EXPECT_EQ(out[1]->scalar<float>(), eager_loss.scalar<float>());
}

void ExpectNear(const Tensor& got, const Tensor& want, float tolerance) {
  const std::vector<float> g = got.ToVector<float>();
  const std::vector<float> w = want.ToVector<float>();
  ASSERT_EQ(g.size(), w.size());
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], tolerance) << i;
}

// One training step of Dense -> BatchNormalization in a Session: the output,
// the kernel's gradient and the moving statistics are the eager layers'
// (which Keras judges, tests/tf_keras); the updates run only when fetched.
TEST(GraphLayersTest, BatchNormalizationTrainsInASessionAsEagerly) {
  const Tensor x = Tensor::Matrix<float>({{1, -2, 3, 0.5f}, {0, 1, -1, 2}, {2, 2, 0, -1}});
  const Tensor w = Tensor::Matrix<float>({{1, 2, 3}, {-1, 0.5f, 2}, {0.25f, -3, 1}});
  Dense eager_dense(3, nullptr, true, 5, "eager_dense");
  layers::BatchNormalization eager_bn(0.9, 1e-3, true, true, "eager_bn");
  GradientTape tape;
  const Tensor eager_y = eager_bn(eager_dense(x), true);
  const auto eager_grad = tape.Gradient(ReduceSum(Mul(eager_y, w)), {&eager_dense.kernel()});
  const Tensor eager_inference = eager_bn(eager_dense(x));

  Graph graph;
  Graph::AsDefault in(graph);
  Dense dense(3, nullptr, true, 5, "dense");
  layers::BatchNormalization bn(0.9, 1e-3, true, true, "bn");
  const Tensor xp = Placeholder(DType::kFloat32, Shape::Partial({-1, 4}), "x");
  const Tensor y = bn(dense(xp), true);
  const auto grad = Gradients(ReduceSum(Mul(y, w)), {&dense.kernel()});
  const std::vector<std::string> updates = graph.NameCollection(Graph::kUpdateOps);
  ASSERT_EQ(updates.size(), 2u);
  std::vector<Operation> update_ops;
  update_ops.reserve(updates.size());
  for (const std::string& name : updates) update_ops.push_back(graph.OperationByName(name));

  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  const Tensor moving_mean = bn.moving_mean().value();
  auto out = sess.Run({y, *grad[0]}, {{xp, x}});
  ExpectNear(*out[0], eager_y, 1e-5f);
  ExpectNear(*out[1], *eager_grad[0], 1e-4f);
  // Not fetched: nothing updated.
  EXPECT_EQ(sess.Run(moving_mean).ToVector<float>(), std::vector<float>(3, 0.0f));
  sess.Run(Group(update_ops), {{xp, x}});
  ExpectNear(sess.Run(moving_mean), eager_bn.moving_mean().value(), 1e-6f);
  ExpectNear(sess.Run(bn.moving_variance().value()), eager_bn.moving_variance().value(), 1e-6f);
  // Inference now normalizes by the moving statistics, as eagerly.
  ExpectNear(sess.Run(bn(dense(xp)), {{xp, x}}), eager_inference, 1e-5f);
}

// A training Dropout in a graph is TF1's tf.nn.dropout(x, rate, seed=s):
// the same nodes with the same seeds draw the same mask in every run, a new
// one each run; the gradient flows through the run's kept elements.
TEST(GraphLayersTest, DropoutTrainsInASessionAsTf1sDropout) {
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor xp = Placeholder(DType::kFloat32, Shape::Partial({-1, 50}), "x");
  Variable v(Tensor::FromVector<float>(std::vector<float>(50, 2.0f), Shape{1, 50}), "v");
  layers::Dropout dropout(0.4, /*seed=*/9);
  const Tensor y = dropout(Mul(xp, v.value()), true);
  const auto grad = Gradients(ReduceSum(y), {&v});
  const Tensor u = RandomUniformNode(ShapeOf(xp), DType::kFloat32, 87654321, 9);

  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  const Tensor x = Tensor::FromVector<float>(std::vector<float>(200, 1.5f), Shape{4, 50});
  std::vector<float> first;
  for (int run = 0; run < 2; ++run) {
    auto out = sess.Run({y, u, *grad[0]}, {{xp, x}});
    const std::vector<float> got = out[0]->ToVector<float>();
    const std::vector<float> noise = out[1]->ToVector<float>();
    int zeros = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const bool keep = noise[i] >= 0.4f;
      EXPECT_FLOAT_EQ(got[i], keep ? 3.0f / 0.6f : 0.0f) << i;
      zeros += !keep;
    }
    EXPECT_GT(zeros, 40);
    EXPECT_LT(zeros, 120);
    // d sum(y) / d v[j] = sum over the batch of x * scale where kept.
    const std::vector<float> g = out[2]->ToVector<float>();
    for (int j = 0; j < 50; ++j) {
      float want = 0;
      for (int b = 0; b < 4; ++b) want += noise[b * 50 + j] >= 0.4f ? 1.5f / 0.6f : 0.0f;
      EXPECT_NEAR(g[j], want, 1e-5f) << j;
    }
    if (run == 0) first = got;
  }
  EXPECT_NE(sess.Run(y, {{xp, x}}).ToVector<float>(), first);
  EXPECT_EQ(dropout.step(), 0);
}

}  // namespace
}  // namespace eager
