// Layers in graph mode: a Dense layer built inside Graph::AsDefault creates
// graph variables and nodes through the same op functions, and a Session
// computes what the eager layer computes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autodiff/dense.h"
#include "ops/graph_ops.h"
#include "ops/nn_ops.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
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

}  // namespace
}  // namespace eager
