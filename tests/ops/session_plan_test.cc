// A Session reuses its plan for a kind of call (fetches, fed tensors)
// (ops/internal/run_plan.h): runs of one kind and of other kinds, in any
// order, compute what each would alone; what a node keeps across runs (its
// generator, its kernel attributes) is the Session's, whichever plan runs it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "ops/array_ops.h"
#include "ops/graph_ops.h"
#include "ops/operators.h"
#include "ops/random_ops.h"
#include "ops/session.h"
#include "ops/shape_ops.h"
#include "runtime/graph.h"

namespace eager {
namespace {

using ::testing::HasSubstr;

std::vector<uint32_t> Bits(const Tensor& t) {
  std::vector<uint32_t> bits;
  for (float v : t.data<float>()) bits.push_back(std::bit_cast<uint32_t>(v));
  return bits;
}

TEST(SessionPlanTest, AFeedChangesWhatRunsAndEachKindOfCallKeepsItsPlan) {
  // d = PlaceholderWithDefault(c), y = d * 2: fed, c's value is not used.
  Graph graph;
  Node c{.name = "c", .op = "Const"};
  c.attrs = {{"dtype", DType::kFloat32}, {"value", Tensor(3.0f)}};
  graph.AddNode(c);
  Node d{.name = "d", .op = "PlaceholderWithDefault", .inputs = {"c"}};
  d.attrs = {{"dtype", DType::kFloat32}, {"shape", Shape{}}};
  graph.AddNode(d);
  Tensor y;
  {
    const Graph::AsDefault in(graph);
    y = graph.TensorByName("d:0") * 2.0f;
  }
  Session sess(graph);
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(sess.Run(y).scalar<float>(), 6.0f);
    EXPECT_EQ(sess.Run(y, {{"d:0", Tensor(5.0f)}}).scalar<float>(), 10.0f);
    // A tensor fed twice takes the last value; a fed tensor fetched is its feed.
    const auto values = sess.Run({y, "d:0", "c:0"}, {{"d:0", Tensor(1.0f)}, {"d:0", Tensor(7.0f)}});
    EXPECT_EQ(values[0]->scalar<float>(), 14.0f);
    EXPECT_EQ(values[1]->scalar<float>(), 7.0f);
    EXPECT_EQ(values[2]->scalar<float>(), 3.0f);
  }
  // Feed checks come every run, before any plan.
  EXPECT_THROW(sess.Run(y, {{"d:0", Tensor(5)}}), InvalidArgumentError);
}

TEST(SessionPlanTest, ANodesGeneratorIsTheSessionsWhicheverCallRunsIt) {
  // u = RandomUniform(Shape(x)); v = u + 1. A Session running u, then
  // {v, u}, then v draws the same numbers as one running u three times.
  Graph graph;
  Tensor x, u, v;
  {
    const Graph::AsDefault in(graph);
    x = Placeholder(DType::kFloat32, Shape::Partial({-1}), "x");
    u = RandomUniformNode(ShapeOf(x), DType::kFloat32, 5, 6);
    v = u + 1.0f;
  }
  const Feeds feeds = {{x, Tensor::Zeros(Shape{64})}};
  Session once(graph);
  std::vector<Tensor> draws;
  draws.reserve(3);
  for (int i = 0; i < 3; ++i) draws.push_back(once.Run(u, feeds));
  EXPECT_NE(Bits(draws[0]), Bits(draws[1]));
  Session mixed(graph);
  EXPECT_EQ(Bits(mixed.Run(u, feeds)), Bits(draws[0]));
  const auto both = mixed.Run({v, u}, feeds);
  EXPECT_EQ(Bits(*both[1]), Bits(draws[1]));
  EXPECT_EQ(Bits(*both[0]), Bits(draws[1] + 1.0f));
  EXPECT_EQ(Bits(mixed.Run(v, feeds)), Bits(draws[2] + 1.0f));
}

TEST(SessionPlanTest, KernelAttributesWithDefaultsServeEveryPlan) {
  // MatMul and Sum without their defaulted attributes, as a TF file strips them.
  Graph graph;
  for (const char* name : {"a", "b"}) {
    Node c{.name = name, .op = "Const"};
    c.attrs = {{"dtype", DType::kFloat32}, {"value", Tensor::Matrix<float>({{1, 2}, {3, 4}})}};
    graph.AddNode(c);
  }
  Node mm{.name = "MatMul", .op = "MatMul", .inputs = {"a", "b"}};
  mm.attrs = {{"T", DType::kFloat32}};
  graph.AddNode(mm);
  Node axes{.name = "axes", .op = "Const"};
  axes.attrs = {{"dtype", DType::kInt32}, {"value", Tensor::Vector<int32_t>({1})}};
  graph.AddNode(axes);
  Node sum{.name = "Sum", .op = "Sum", .inputs = {"MatMul", "axes"}};
  sum.attrs = {{"T", DType::kFloat32}, {"Tidx", DType::kInt32}};
  graph.AddNode(sum);
  Session sess(graph);
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(sess.Run("Sum:0").ToVector<float>(), (std::vector<float>{17, 37}));
    const auto values = sess.Run({"MatMul:0", "Sum:0"});
    EXPECT_EQ(values[0]->ToVector<float>(), (std::vector<float>{7, 10, 15, 22}));
    EXPECT_EQ(values[1]->ToVector<float>(), (std::vector<float>{17, 37}));
  }
}

TEST(SessionPlanTest, AFailedPlanIsNotKept) {
  // An op type eager lacks fails every run that needs it, before anything
  // runs, and a run that does not need it is unaffected.
  Graph graph;
  Node c{.name = "c", .op = "Const"};
  c.attrs = {{"dtype", DType::kFloat32}, {"value", Tensor(2.0f)}};
  graph.AddNode(c);
  Node odd{.name = "odd", .op = "FancyTfOnlyOp", .inputs = {"c"}};
  odd.output_specs = {{Shape{}, DType::kFloat32}};
  graph.AddNode(odd);
  Session sess(graph);
  for (int round = 0; round < 2; ++round) {
    try {
      sess.Run("odd:0");
      ADD_FAILURE() << "ran a node of an op type eager lacks";
    } catch (const UnimplementedError& e) {
      EXPECT_THAT(e.what(), HasSubstr("'odd' (FancyTfOnlyOp)"));
    }
    EXPECT_EQ(sess.Run("c:0").scalar<float>(), 2.0f);
  }
}

}  // namespace
}  // namespace eager
