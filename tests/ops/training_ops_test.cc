// ApplyAdam eagerly (against FORMAT.md 7.1 computed by hand) and as a graph
// node run by a Session; Graph::ControlDependencies.

#include "ops/training_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/session.h"
#include "runtime/graph.h"

namespace eager {
namespace {

// One element: grad 0.5, lr 0.1, beta1 0.9, beta2 0.999, step 1.
TEST(ApplyAdamTest, EagerUpdateFollowsTheKernelFormulas) {
  Variable var(Tensor::Vector<double>({1.0}), "var");
  Variable m(Tensor::Vector<double>({0.0}), "m");
  Variable v(Tensor::Vector<double>({0.0}), "v");
  const Tensor out = ApplyAdam(var, m, v, Tensor(0.9), Tensor(0.999), Tensor(0.1), Tensor(0.9),
                               Tensor(0.999), Tensor(1e-8), Tensor::Vector<double>({0.5}));
  const double new_m = 0.5 * (1 - 0.9);
  const double new_v = 0.25 * (1 - 0.999);
  const double alpha = 0.1 * std::sqrt(1 - 0.999) / (1 - 0.9);
  EXPECT_DOUBLE_EQ(m.value().ToVector<double>()[0], new_m);
  EXPECT_DOUBLE_EQ(v.value().ToVector<double>()[0], new_v);
  EXPECT_DOUBLE_EQ(var.value().ToVector<double>()[0],
                   1.0 - new_m * alpha / (std::sqrt(new_v) + 1e-8));
  EXPECT_EQ(out.ToVector<double>(), var.value().ToVector<double>());
  // A float32 scalar for a float64 variable names the argument and the variable.
  try {
    ApplyAdam(var, m, v, Tensor(0.9f), Tensor(0.999), Tensor(0.1), Tensor(0.9), Tensor(0.999),
              Tensor(1e-8), Tensor::Vector<double>({0.5}));
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("ApplyAdam on variable 'var': beta1_power"));
  }
}

TEST(ApplyAdamTest, GraphNodeUpdatesTheVariablesWhenRun) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable var(Tensor::Vector<float>({1.0f, 2.0f}), "w");
  Variable m(Tensor::Vector<float>({0.0f, 0.0f}), "w/Adam");
  Variable v(Tensor::Vector<float>({0.0f, 0.0f}), "w/Adam_1");
  const Tensor step =
      ApplyAdam(var, m, v, Tensor(0.9f), Tensor(0.999f), Tensor(0.1f), Tensor(0.9f), Tensor(0.999f),
                Tensor(1e-8f), Tensor::Vector<float>({0.5f, -0.5f}));
  const Node& node = graph.node(graph.OperationOf(step).index());
  EXPECT_EQ(node.name, "ApplyAdam");
  EXPECT_EQ(node.op, "ApplyAdam");
  EXPECT_EQ(node.inputs.size(), 10u);
  EXPECT_EQ(node.inputs[0], "w");
  EXPECT_EQ(node.inputs[2], "w/Adam_1");
  EXPECT_EQ(node.Attr<bool>("use_nesterov"), false);
  Session sess(graph);
  EXPECT_THROW(sess.Run(step), FailedPreconditionError);  // uninitialized
  sess.Run(GlobalVariablesInitializer());
  const std::vector<float> updated = sess.Run(step).ToVector<float>();
  // Adam's first step moves each element by about lr against its gradient.
  EXPECT_NEAR(updated[0], 0.9f, 1e-6f);
  EXPECT_NEAR(updated[1], 2.1f, 1e-6f);
  EXPECT_EQ(var.stored_value().ToVector<float>(), updated);
}

TEST(GraphControlDependenciesTest, NodesAddedInsideWaitForTheOps) {
  Graph graph;
  Graph::AsDefault in(graph);
  const Operation first = NoOp("first");
  const Operation second = NoOp("second");
  Tensor inside;
  {
    Graph::ControlDependencies outer(graph, {first});
    Graph::ControlDependencies inner(graph, {second, Operation()});
    inside = Constant(Tensor(1.0f), "inside");
  }
  const Tensor outside = Constant(Tensor(2.0f), "outside");
  EXPECT_EQ(graph.FindNode("inside")->inputs, (std::vector<std::string>{"^first", "^second"}));
  EXPECT_TRUE(graph.FindNode("outside")->inputs.empty());
}

}  // namespace
}  // namespace eager
