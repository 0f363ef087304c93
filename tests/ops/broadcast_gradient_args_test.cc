// BroadcastGradientArgs: TF's reduction axes for the gradients of a
// broadcasting op (equal shapes reduce nothing; else the output's axes where
// an input has 1 or nothing), eagerly and as a graph node with TF's
// signature, and its refusals.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "ops/graph_ops.h"
#include "ops/session.h"
#include "ops/shape_ops.h"
#include "runtime/graph.h"

namespace eager {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Tensor Dims(std::vector<int32_t> d) { return Tensor::FromVector<int32_t>(std::move(d)); }
std::vector<int32_t> Values(const Tensor& t) {
  const auto d = t.data<int32_t>();
  return {d.begin(), d.end()};
}

TEST(BroadcastGradientArgsTest, AxesWhereAnInputHasOneOrNothing) {
  auto [r0, r1] = BroadcastGradientArgs(Dims({5, 3}), Dims({1, 3}));
  EXPECT_THAT(Values(r0), IsEmpty());
  EXPECT_THAT(Values(r1), ElementsAre(0));
  std::tie(r0, r1) = BroadcastGradientArgs(Dims({2, 1, 4}), Dims({3, 1}));
  EXPECT_THAT(Values(r0), ElementsAre(1));     // output [2, 3, 4]
  EXPECT_THAT(Values(r1), ElementsAre(0, 2));  // y is [1, 3, 1] aligned
  std::tie(r0, r1) = BroadcastGradientArgs(Dims({}), Dims({2, 3}));
  EXPECT_THAT(Values(r0), ElementsAre(0, 1));
  EXPECT_THAT(Values(r1), IsEmpty());
  // Unequal shapes: every 1 is listed, also where the output is 1.
  std::tie(r0, r1) = BroadcastGradientArgs(Dims({1, 1}), Dims({1}));
  EXPECT_THAT(Values(r0), ElementsAre(0, 1));
  EXPECT_THAT(Values(r1), ElementsAre(0, 1));
  // Equal shapes: nothing, not even their 1s.
  std::tie(r0, r1) = BroadcastGradientArgs(Dims({1, 3}), Dims({1, 3}));
  EXPECT_THAT(Values(r0), IsEmpty());
  EXPECT_THAT(Values(r1), IsEmpty());
  std::tie(r0, r1) = BroadcastGradientArgs(Dims({0, 3}), Dims({1, 3}));
  EXPECT_THAT(Values(r0), IsEmpty());
  EXPECT_THAT(Values(r1), ElementsAre(0));
}

// TF 2.21's kernel takes a negative entry as a number like the others: equal
// to itself, broadcast against 1, incompatible with anything else
// (tests/tf_graphs/gradients_test.py compares many such pairs with TF).
TEST(BroadcastGradientArgsTest, NegativeEntriesAreNumbersAsInTF) {
  auto [r0, r1] = BroadcastGradientArgs(Dims({-1, 3}), Dims({1, 3}));
  EXPECT_THAT(Values(r0), IsEmpty());
  EXPECT_THAT(Values(r1), ElementsAre(0));
  std::tie(r0, r1) = BroadcastGradientArgs(Dims({-1}), Dims({-1}));
  EXPECT_THAT(Values(r0), IsEmpty());
  EXPECT_THAT(Values(r1), IsEmpty());
  std::tie(r0, r1) = BroadcastGradientArgs(Dims({-1, 1}), Dims({1, -1}));
  EXPECT_THAT(Values(r0), ElementsAre(1));
  EXPECT_THAT(Values(r1), ElementsAre(0));
  std::tie(r0, r1) = BroadcastGradientArgs(Dims({3, -2}), Dims({-2}));
  EXPECT_THAT(Values(r0), IsEmpty());
  EXPECT_THAT(Values(r1), ElementsAre(0));
  const auto [q0, q1] =
      BroadcastGradientArgs(Tensor::Vector<int64_t>({-5, 2}), Tensor::Vector<int64_t>({1, 2}));
  EXPECT_THAT(q0.ToVector<int64_t>(), IsEmpty());
  EXPECT_THAT(q1.ToVector<int64_t>(), ElementsAre(0));
  EXPECT_THAT([] { BroadcastGradientArgs(Dims({-1}), Dims({-2})); },
              ::testing::ThrowsMessage<InvalidArgumentError>(
                  HasSubstr("Incompatible shapes: [-1] vs. [-2]")));
  EXPECT_THAT([] { BroadcastGradientArgs(Dims({0}), Dims({-1})); },
              ::testing::Throws<InvalidArgumentError>());
}

TEST(BroadcastGradientArgsTest, Int64InInt64Out) {
  const auto [r0, r1] =
      BroadcastGradientArgs(Tensor::Vector<int64_t>({5, 1}), Tensor::Vector<int64_t>({1, 1}));
  EXPECT_EQ(r0.dtype(), DType::kInt64);
  EXPECT_EQ(r0.ToVector<int64_t>(), (std::vector<int64_t>{1}));
  EXPECT_EQ(r1.ToVector<int64_t>(), (std::vector<int64_t>{0, 1}));
}

TEST(BroadcastGradientArgsTest, RefusesWhatIsNotAShapePair) {
  EXPECT_THAT(
      [] {
        BroadcastGradientArgs(Dims({2, 3}), Dims({4}));
      },
      ::testing::ThrowsMessage<InvalidArgumentError>(
          HasSubstr("Incompatible shapes: [2,3] vs. [4]")));
  EXPECT_THAT(
      [] {
        BroadcastGradientArgs(Tensor::FromVector<int32_t>({2, 3}, Shape{1, 2}), Dims({3}));
      },
      ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("s0 must be a vector")));
  EXPECT_THAT([] { BroadcastGradientArgs(Dims({-1}), Dims({5})); },
              ::testing::ThrowsMessage<InvalidArgumentError>(
                  HasSubstr("Incompatible shapes: [-1] vs. [5]")));
  EXPECT_THAT([] { BroadcastGradientArgs(Dims({3}), Tensor::Vector<int64_t>({3})); },
              ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("one dtype")));
  EXPECT_THAT([] { BroadcastGradientArgs(Tensor::Vector<float>({3}), Tensor::Vector<float>({3})); },
              ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("int32 or int64")));
}

// In a graph: one node of TF's signature with two outputs, from the shapes
// the placeholders are fed with.
TEST(BroadcastGradientArgsTest, GraphNodeRunsOnShapesKnownAtRunTime) {
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1, 3}), "x");
  const Tensor y = Placeholder(DType::kFloat32, Shape::Partial({-1, 3}), "y");
  const auto [r0, r1] = BroadcastGradientArgs(ShapeOf(x), ShapeOf(y));
  const Node& node = graph.node(graph.OperationOf(r0).index());
  EXPECT_EQ(node.op, "BroadcastGradientArgs");
  EXPECT_EQ(graph.OperationOf(r1).index(), graph.OperationOf(r0).index());
  EXPECT_EQ(node.Attr<DType>("T"), DType::kInt32);
  Session sess(graph);
  const Tensor one = Tensor::FromVector<float>({1, 2, 3}, Shape{1, 3});
  const Tensor five = Tensor::FromVector<float>(std::vector<float>(15, 1.0f), Shape{5, 3});
  auto out = sess.Run({r0, r1}, {{x, one}, {y, five}});
  EXPECT_THAT(Values(*out[0]), ElementsAre(0));
  EXPECT_THAT(Values(*out[1]), IsEmpty());
  out = sess.Run({r0, r1}, {{x, five}, {y, five}});
  EXPECT_THAT(Values(*out[0]), IsEmpty());
  EXPECT_THAT(Values(*out[1]), IsEmpty());
  const Tensor fetch = r0;  // a structured binding cannot be captured before C++20
  EXPECT_THAT(
      [&] {
        sess.Run(
            {fetch},
            {{x, five}, {y, Tensor::FromVector<float>(std::vector<float>(6, 1.0f), Shape{2, 3})}});
      },
      ::testing::ThrowsMessage<InvalidArgumentError>(
          HasSubstr("Incompatible shapes: [5,3] vs. [2,3]")));
}

}  // namespace
}  // namespace eager
