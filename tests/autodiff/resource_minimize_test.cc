// Graph-mode training on resource variables (the variables of a TF 2.x
// graph): Graph::UseResourceVariables makes TF's VarHandleOp /
// AssignVariableOp / ReadVariableOp nodes, Assign() on one is an
// AssignVariableOp, and TF1's AdamOptimizer.minimize on them is TF's
// resource form (resource slots and powers, ResourceApplyAdam, powers
// advanced by AssignVariableOp) whose steps equal an independent
// double-precision evaluation of TF's published Adam update
// (lr_t = lr sqrt(1 - b2^t) / (1 - b1^t); m = b1 m + (1 - b1) g;
// v = b2 v + (1 - b2) g^2; var -= lr_t m / (sqrt(v) + eps)). The builders
// refuse a VariableV2 and bad arguments naming the variable.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "autodiff/adam.h"
#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/reduction_ops.h"
#include "ops/resource_training_ops.h"
#include "ops/session.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/names.h"

namespace eager {
namespace {

using ::testing::HasSubstr;

TEST(ResourceVariableGraphTest, UseResourceVariablesMakesTfNodes) {
  ResetDefaultNames();
  Graph graph;
  Graph::AsDefault in(graph);
  Variable ref(Tensor::Vector<float>({1.0f}), "ref");
  std::optional<Graph::UseResourceVariables> resource(graph);
  Variable v(Tensor::Vector<float>({1.0f, 2.0f}), "v");
  resource.reset();
  EXPECT_FALSE(graph.IsResourceVariable(ref));
  ASSERT_TRUE(graph.IsResourceVariable(v));
  EXPECT_EQ(graph.FindNode("v")->op, "VarHandleOp");
  EXPECT_EQ(graph.FindNode("v/Assign")->op, "AssignVariableOp");
  EXPECT_EQ(v.value().name(), "v/Read/ReadVariableOp:0");
  const Tensor assigned = Assign(v, Mul(v.value(), Tensor(3.0f)));
  EXPECT_EQ(assigned.name(), "ReadVariableOp:0");
  EXPECT_EQ(graph.FindNode("AssignVariableOp")->op, "AssignVariableOp");

  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  EXPECT_EQ(sess.Run(assigned).ToVector<float>(), (std::vector<float>{3.0f, 6.0f}));
  EXPECT_EQ(v.stored_value().ToVector<float>(), (std::vector<float>{3.0f, 6.0f}));
}

constexpr double kLr = 0.05, kBeta1 = 0.9, kBeta2 = 0.999, kEpsilon = 1e-8;

TEST(ResourceMinimizeTest, AdamWritesResourceNodesAndFollowsTfFormula) {
  ResetDefaultNames();
  Graph graph;
  Graph::AsDefault in(graph);
  std::optional<Graph::UseResourceVariables> resource(graph);
  Variable w(Tensor::Vector<float>({0.5f, -1.5f, 2.0f}), "w");
  resource.reset();
  // loss = sum(w^3) / 3: the gradient is w^2.
  const Tensor loss = Div(ReduceSum(Mul(Square(w.value()), w.value())), Tensor(3.0f));
  AdamOptions options;
  options.learning_rate = kLr;
  options.tf1_compatible = true;
  Adam adam(options);
  const Operation train = adam.Minimize(loss);

  for (const char* name : {"beta1_power", "beta2_power", "w/Adam", "w/Adam_1"}) {
    ASSERT_NE(graph.FindNode(name), nullptr) << name;
    EXPECT_EQ(graph.FindNode(name)->op, "VarHandleOp") << name;
  }
  const Node* update = graph.FindNode("Adam/update_w/ResourceApplyAdam");
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(update->op, "ResourceApplyAdam");
  EXPECT_THAT(update->inputs,
              ::testing::ElementsAre("w", "w/Adam", "w/Adam_1", ::testing::_, ::testing::_,
                                     "Adam/learning_rate", "Adam/beta1", "Adam/beta2",
                                     "Adam/epsilon", ::testing::_, ::testing::_));
  EXPECT_FALSE(update->attrs.GetBool("use_nesterov"));
  ASSERT_NE(graph.FindNode("Adam/AssignVariableOp"), nullptr);  // beta1_power *= beta1
  EXPECT_EQ(graph.FindNode("Adam/AssignVariableOp")->inputs[0], "beta1_power");

  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  std::vector<double> x = {0.5, -1.5, 2.0}, m(3, 0.0), v(3, 0.0);
  double p1 = kBeta1, p2 = kBeta2;
  for (int step = 0; step < 3; ++step) {
    sess.Run(train);
    const double lr_t = kLr * std::sqrt(1 - p2) / (1 - p1);
    for (size_t i = 0; i < x.size(); ++i) {
      const double g = x[i] * x[i];
      m[i] = kBeta1 * m[i] + (1 - kBeta1) * g;
      v[i] = kBeta2 * v[i] + (1 - kBeta2) * g * g;
      x[i] -= lr_t * m[i] / (std::sqrt(v[i]) + kEpsilon);
    }
    p1 *= kBeta1;
    p2 *= kBeta2;
    const std::vector<float> got = w.stored_value().ToVector<float>();
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_NEAR(got[i], x[i], 1e-6 * (1 + std::abs(x[i]))) << "step " << step << " w[" << i;
    }
  }
  EXPECT_NEAR(graph.VariableForNode("beta1_power")->stored_value().scalar<float>(), p1, 1e-7);
  EXPECT_NEAR(graph.VariableForNode("beta2_power")->stored_value().scalar<float>(), p2, 1e-7);
}

TEST(ResourceMinimizeTest, BuildersRefuseRefVariablesAndBadArguments) {
  ResetDefaultNames();
  Graph graph;
  Graph::AsDefault in(graph);
  Variable ref(Tensor::Vector<float>({1.0f, 2.0f}), "ref");
  std::optional<Graph::UseResourceVariables> resource(graph);
  Variable w(Tensor::Vector<float>({1.0f, 2.0f}), "w");
  Variable accum(Tensor::Vector<float>({0.0f, 0.0f}), "accum");
  Variable small(Tensor::Vector<float>({0.0f}), "small");
  resource.reset();
  const Tensor lr(0.1f);
  const Tensor grad = Tensor::Vector<float>({1.0f, 1.0f});
  try {
    ResourceApplyGradientDescent(ref, lr, grad);
    ADD_FAILURE() << "a VariableV2 was accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("variable 'ref' is not a resource variable"));
  }
  try {
    ResourceApplyMomentum(w, small, lr, grad, Tensor(0.9f));
    ADD_FAILURE() << "a slot of another shape was accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("ResourceApplyMomentum on variable 'w'"));
    EXPECT_THAT(e.what(), HasSubstr("'small'"));
  }
  EXPECT_THROW(ResourceApplyGradientDescent(w, Tensor(0.1), grad), InvalidArgumentError);
  EXPECT_THROW(ResourceApplyGradientDescent(w, lr, Tensor::Vector<float>({1.0f})),
               InvalidArgumentError);
  EXPECT_THROW(ResourceApplyAdam(w, accum, ref, lr, lr, lr, lr, lr, lr, grad),
               InvalidArgumentError);  // a VariableV2 slot
  // Nothing was added by the refused calls.
  EXPECT_EQ(graph.FindNode("ResourceApplyGradientDescent"), nullptr);
  EXPECT_EQ(graph.FindNode("ResourceApplyMomentum"), nullptr);
}

}  // namespace
}  // namespace eager
