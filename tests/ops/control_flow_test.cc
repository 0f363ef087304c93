// Switch and Merge in a Session, with TF's dead-tensor semantics: the
// untaken branch is dead, a node with a dead data or control input is dead
// and does not run, Merge forwards its first live input and its index.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ops/binary_ops.h"
#include "ops/control_flow_ops.h"
#include "ops/graph_ops.h"
#include "ops/session.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/variable.h"

namespace eager {
namespace {

using ::testing::HasSubstr;

// x -> Switch(pred) -> false: Neg, true: Exp -> Merge.
struct Cond {
  Graph graph;
  Tensor x, pred, output, value_index, if_false, if_true;
  Cond() {
    Graph::AsDefault in(graph);
    x = Placeholder(DType::kFloat64, Shape{2}, "x");
    pred = Placeholder(DType::kBool, Shape{}, "pred");
    const SwitchOutputs branches = Switch(x, pred);
    if_false = Neg(branches.output_false);
    if_true = Exp(branches.output_true);
    const MergeOutputs merged = Merge({if_false, if_true});
    output = merged.output;
    value_index = merged.value_index;
  }
};

TEST(ControlFlowTest, MergeForwardsTheTakenBranch) {
  Cond c;
  Session sess(c.graph);
  const Tensor x = Tensor::Vector<double>({0.5, -1.0});
  const auto run = [&](bool pred) {
    return sess.Run({c.output, c.value_index}, {{c.x, x}, {c.pred, Tensor(pred)}});
  };
  std::vector<std::optional<Tensor>> got = run(false);
  EXPECT_EQ(got[0]->ToVector<double>(), (std::vector<double>{-0.5, 1.0}));
  EXPECT_EQ(got[1]->ToVector<int32_t>(), std::vector<int32_t>{0});
  got = run(true);
  EXPECT_EQ(got[0]->ToVector<double>(), (std::vector<double>{std::exp(0.5), std::exp(-1.0)}));
  EXPECT_EQ(got[1]->ToVector<int32_t>(), std::vector<int32_t>{1});
  EXPECT_EQ(c.output.name(), "Merge:0");
  EXPECT_EQ(c.value_index.dtype(), DType::kInt32);
}

TEST(ControlFlowTest, FetchingADeadTensorNamesIt) {
  Cond c;
  Session sess(c.graph);
  try {
    sess.Run(c.if_true, {{c.x, Tensor::Vector<double>({1, 2})}, {c.pred, Tensor(false)}});
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'Exp:0' has no value: it is dead"));
  }
  // The live branch alone runs.
  EXPECT_EQ(sess.Run(c.if_false, {{c.x, Tensor::Vector<double>({1, 2})}, {c.pred, Tensor(false)}})
                .ToVector<double>(),
            (std::vector<double>{-1, -2}));
}

// What TF1's batch-norm update does: an assignment on the true branch (its
// value through a control edge from the branch's Identity) runs only when taken.
TEST(ControlFlowTest, DeadNodesDoNotRunEvenThroughControlEdges) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable v(Tensor::Vector<float>({1.0f}), "v");
  const Tensor pred = Placeholder(DType::kBool, Shape{}, "pred");
  const SwitchOutputs branches = Switch(pred, pred);
  const Tensor switch_t = Identity(branches.output_true);
  Tensor delta;
  {
    Graph::ControlDependencies deps(graph, {graph.OperationOf(switch_t)});
    delta = Constant(Tensor::Vector<float>({5.0f}), "delta");
  }
  const Tensor update = AssignAdd(v, delta);
  // An op eager lacks, on the true branch too: it fails only when run.
  Node unknown{.name = "frobnicate", .op = "Frobnicate", .inputs = {"Switch:1"}};
  unknown.output_specs = {{Shape{}, DType::kBool}};
  graph.AddNode(unknown);
  const MergeOutputs merged =
      Merge({branches.output_false, graph.Output(graph.FindNodeIndex("frobnicate"))});

  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  sess.Run(graph.OperationOf(update), {{pred, Tensor(false)}});
  EXPECT_EQ(v.stored_value().ToVector<float>(), std::vector<float>{1.0f});  // not run
  EXPECT_EQ(sess.Run(merged.output, {{pred, Tensor(false)}}).ToVector<bool>(),
            std::vector<bool>{false});
  sess.Run(graph.OperationOf(update), {{pred, Tensor(true)}});
  EXPECT_EQ(v.stored_value().ToVector<float>(), std::vector<float>{6.0f});
  try {
    sess.Run(merged.output, {{pred, Tensor(true)}});
    FAIL() << "expected UnimplementedError";
  } catch (const UnimplementedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("node 'frobnicate' has op type 'Frobnicate'"));
  }
}

TEST(ControlFlowTest, MergeOfDeadInputsIsDeadAndErrorsNameTheProblem) {
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor x = Placeholder(DType::kFloat32, Shape{}, "x");
  const Tensor pred = Placeholder(DType::kBool, Shape{}, "pred");
  const SwitchOutputs branches = Switch(x, pred);
  const MergeOutputs merged = Merge({Neg(branches.output_true)});
  Session sess(graph);
  EXPECT_EQ(sess.Run(merged.output, {{x, Tensor(2.0f)}, {pred, Tensor(true)}}).ToVector<float>(),
            std::vector<float>{-2.0f});
  EXPECT_THROW(sess.Run(merged.output, {{x, Tensor(2.0f)}, {pred, Tensor(false)}}),
               InvalidArgumentError);
  EXPECT_THROW(Switch(x, x), InvalidArgumentError);  // pred must be bool
  EXPECT_THROW(Merge({}), InvalidArgumentError);
  EXPECT_THROW(Merge({x, pred}), InvalidArgumentError);
}

TEST(ControlFlowTest, NeedsAGraph) {
  EXPECT_THROW(Switch(Tensor(1.0f), Tensor(true)), FailedPreconditionError);
  EXPECT_THROW(Merge({Tensor(1.0f)}), FailedPreconditionError);
}

}  // namespace
}  // namespace eager
