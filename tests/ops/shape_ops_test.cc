// The Shape op as TF's (tf.shape, array_ops.cc "Shape"): a tensor's
// dimensions as int32 (default out_type) or int64; in a graph the value of a
// placeholder's unknown batch dimension is the fed tensor's.

#include "ops/shape_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ops/graph_ops.h"
#include "ops/session.h"
#include "runtime/errors.h"
#include "runtime/graph.h"

namespace eager {
namespace {

TEST(ShapeOpTest, GivesTheDimensionsAsInt32OrInt64) {
  const Tensor x = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 1, 3});
  const Tensor s = ShapeOf(x);
  EXPECT_EQ(s.dtype(), DType::kInt32);
  EXPECT_EQ(s.ToVector<int32_t>(), (std::vector<int32_t>{2, 1, 3}));
  const Tensor s64 = ShapeOf(x, DType::kInt64);
  EXPECT_EQ(s64.dtype(), DType::kInt64);
  EXPECT_EQ(s64.ToVector<int64_t>(), (std::vector<int64_t>{2, 1, 3}));
  // A scalar's shape is the empty vector.
  EXPECT_EQ(ShapeOf(Tensor(1.0f)).shape(), Shape{0});
  // TF: out_type is {int32, int64}.
  EXPECT_THROW(ShapeOf(x, DType::kFloat32), InvalidArgumentError);
}

// tf.broadcast_to(x, tf.shape(y)): the shape as a value.
TEST(ShapeOpTest, BroadcastToTakesTheShapeAsATensor) {
  const Tensor y = Tensor::FromVector<float>({0, 0, 0, 0, 0, 0}, Shape{2, 3});
  const Tensor b = BroadcastTo(Tensor::Vector<float>({1, 2, 3}), ShapeOf(y));
  EXPECT_EQ(b.shape(), (Shape{2, 3}));
  EXPECT_EQ(b.ToVector<float>(), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  EXPECT_THROW(BroadcastTo(y, Tensor::Vector<float>({2, 3})), InvalidArgumentError);
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1, 3}), "x");
  const Tensor ones = BroadcastTo(Tensor(1.0f), ShapeOf(x));
  EXPECT_EQ(ones.shape(), Shape::Partial({-1, -1}));
  Session sess(graph);
  EXPECT_EQ(sess.Run(ones, {{x, y}}).ToVector<float>(), std::vector<float>(6, 1.0f));
}

TEST(ShapeOpTest, InAGraphReadsTheFedBatchDimension) {
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1, 3}), "x");
  const Tensor s = ShapeOf(x);
  EXPECT_EQ(s.shape(), Shape{2});  // static: [rank]
  const Node& node = graph.node(graph.OperationOf(s).index());
  EXPECT_EQ(node.op, "Shape");
  EXPECT_EQ(node.name, "Shape");
  Session sess(graph);
  for (const int64_t batch : {2, 5}) {
    const Tensor feed =
        Tensor::FromVector<float>(std::vector<float>(batch * 3, 1.0f), Shape{batch, 3});
    EXPECT_EQ(sess.Run(s, {{x, feed}}).ToVector<int32_t>(),
              (std::vector<int32_t>{static_cast<int32_t>(batch), 3}));
  }
}

}  // namespace
}  // namespace eager
