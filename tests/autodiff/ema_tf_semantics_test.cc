// Moving averages as TensorFlow's tensorflow/python/training/moving_averages.py
// (TF 2.21), each test named after the moving_averages_test.py test it
// mirrors; expected values follow TF's float32 operation order exactly.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/exponential_moving_average.h"
#include "ops/graph_ops.h"
#include "ops/operators.h"
#include "ops/session.h"
#include "ops/variable_scope.h"
#include "runtime/graph.h"

namespace eager {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

std::vector<std::string> ControlInputs(const Graph& graph, const std::string& node_name) {
  const Node* node = graph.FindNode(node_name);
  EXPECT_NE(node, nullptr) << node_name;
  std::vector<std::string> out;
  if (node == nullptr) return out;
  for (const std::string& input : node->inputs) {
    if (!input.empty() && input[0] == '^') out.push_back(input);
  }
  return out;
}

// testAverageVariablesWithControlDeps: apply() under control_dependencies
// creates a shadow whose nodes have no control inputs (so it initializes
// before v0 does, from v1's initial value), while the update op still runs
// add_to_v0.
TEST(EmaTfSemanticsTest, AverageVariablesWithControlDeps) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable v0(0.0f, "v0");
  const Tensor add_to_v0 = AssignAdd(v0, Tensor(1.0f));
  Variable v1(Tensor::Vector<float>({10}), "v1");
  const Tensor assign_to_v1 = Assign(v1, Tensor::Vector<float>({20}));
  ExponentialMovingAverage ema(0.25);
  Operation ema_op;
  {
    Graph::ControlDependencies deps(graph, {OperationOf(add_to_v0)});
    ema_op = ema.Apply({&v1});
  }
  Variable* v1_avg = ema.AverageVariable(v1);
  ASSERT_NE(v1_avg, nullptr);
  const GraphVariable* record = graph.FindVariable(v1_avg);
  ASSERT_NE(record, nullptr);
  EXPECT_THAT(ControlInputs(graph, record->initializer), IsEmpty());
  EXPECT_THAT(ControlInputs(graph, record->variable_node), IsEmpty());
  EXPECT_THAT(ControlInputs(graph, OperationOf(v1_avg->value()).name()), IsEmpty());
  EXPECT_THAT(ControlInputs(graph, ema_op.name()), Contains("^" + OperationOf(add_to_v0).name()));

  Session sess(graph);
  sess.Run(VariablesInitializer({v1_avg}));  // before v0's and v1's initializers
  sess.Run(VariablesInitializer({&v0, &v1}));
  EXPECT_EQ(sess.Run(v1_avg->value()).ToVector<float>(), std::vector<float>({10}));
  sess.Run(assign_to_v1);
  sess.Run(ema_op);
  EXPECT_EQ(sess.Run(v0.value()).scalar<float>(), 1.0f);
  EXPECT_EQ(sess.Run(v1_avg->value()).ToVector<float>(), std::vector<float>({17.5f}));
}

// Plain variables made under control dependencies do not wait for them
// either (TF's RefVariable._init_from_args runs in init_scope()).
TEST(EmaTfSemanticsTest, VariablesCreatedUnderControlDepsHaveNone) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable a(1.0f, "a");
  const Tensor bump = AssignAdd(a, Tensor(1.0f));
  Graph::ControlDependencies deps(graph, {OperationOf(bump)});
  Variable b(2.0f, "b");
  EXPECT_THAT(ControlInputs(graph, "b"), IsEmpty());
  EXPECT_THAT(ControlInputs(graph, "b/Assign"), IsEmpty());
  EXPECT_THAT(ControlInputs(graph, "b/read"), IsEmpty());
  EXPECT_THAT(ControlInputs(graph, "b/initial_value"), IsEmpty());
  // The scope is back afterwards: the next op waits for `bump`.
  const Tensor after = a.value() + b.value();
  EXPECT_THAT(ControlInputs(graph, OperationOf(after).name()),
              ElementsAre("^" + OperationOf(bump).name()));
}

// _CheckDecay: averages of v0 (10), v1 (30) and the plain tensor
// v0 + v1, updated twice; the tensor's shadow starts at 0 and, with
// zero_debias, is divided by 1 - decay^steps.
void CheckDecay(bool zero_debias, std::optional<int64_t> num_updates) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable var0(Tensor::Vector<float>({10, 10}), "v0");
  Variable var1(Tensor::Vector<float>({30, 30}), "v1");
  const Tensor tensor2 = var0.value() + var1.value();
  ExponentialMovingAverage ema(0.25, num_updates, zero_debias);
  const Operation update = ema.Apply({&var0, &var1}, {tensor2});
  Variable* avg0 = ema.AverageVariable(var0);
  Variable* avg1 = ema.AverageVariable(var1);
  Variable* avg2 = ema.AverageVariable(tensor2);
  ASSERT_NE(avg2, nullptr);
  EXPECT_EQ(avg0->name(), "v0/ExponentialMovingAverage:0");
  EXPECT_EQ(avg1->name(), "v1/ExponentialMovingAverage:0");
  EXPECT_EQ(avg2->name(), "add/ExponentialMovingAverage:0");
  EXPECT_EQ(ema.AverageName(tensor2), "add/ExponentialMovingAverage");
  EXPECT_THAT(graph.VariableCollection(Graph::kMovingAverageVariables), ElementsAre(&var0, &var1));
  for (Variable* avg : {avg0, avg1, avg2}) EXPECT_FALSE(avg->trainable());

  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  EXPECT_EQ(sess.Run(avg2->value()).ToVector<float>(), std::vector<float>({0, 0}));

  // TF's float32 steps: decay = min(0.25, (1 + n) / (10 + n)), 1 - decay,
  // shadow -= (shadow - x) * (1 - decay); debiased: biased / (1 - (1 -
  // (1 - decay))^step).
  float dk = 0.25f;
  if (num_updates) {
    const float n = static_cast<float>(*num_updates);
    dk = std::min(dk, (1.0f + n) / (10.0f + n));
  }
  const float one_minus = 1.0f - dk;
  float s0 = 10, s1 = 30, s2 = 0;
  for (int step = 1; step <= 2; ++step) {
    sess.Run(update);
    s0 = s0 - (s0 - 10.0f) * one_minus;
    s1 = s1 - (s1 - 30.0f) * one_minus;
    s2 = s2 - (s2 - 40.0f) * one_minus;
    const float expected2 =
        zero_debias ? s2 / (1.0f - std::pow(1.0f - one_minus, static_cast<float>(step))) : s2;
    EXPECT_EQ(sess.Run(avg0->value()).ToVector<float>(), std::vector<float>({s0, s0}));
    EXPECT_EQ(sess.Run(avg1->value()).ToVector<float>(), std::vector<float>({s1, s1}));
    EXPECT_EQ(sess.Run(avg2->value()).ToVector<float>(), std::vector<float>({expected2, expected2}))
        << "step " << step;
  }
  // TF's literal expectation ((0 * dk + 40 * (1 - dk)) * dk + 40 * (1 - dk)
  // at dk = 0.25, divided by 1 - dk^2 when debiased).
  if (!num_updates.has_value()) {
    EXPECT_EQ(s2, 37.5f);
  }
}

TEST(EmaTfSemanticsTest, AverageVariablesNoNumUpdates) { CheckDecay(false, std::nullopt); }
TEST(EmaTfSemanticsTest, AverageVariablesNoNumUpdatesDebias) { CheckDecay(true, std::nullopt); }
TEST(EmaTfSemanticsTest, AverageVariablesNumUpdates) { CheckDecay(false, int64_t{1}); }
TEST(EmaTfSemanticsTest, AverageVariablesNumUpdatesDebias) { CheckDecay(true, int64_t{1}); }

// averageVariablesNamesHelper(zero_debias=True): the debias state of the
// tensor's average is "<average>/biased" and "<average>/local_step", and
// variables_to_restore lists it under its own names.
TEST(EmaTfSemanticsTest, AverageVariablesNames) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable v0(10.0f, "v0");
  Variable v1(30.0f, "v1");
  Variable v2(20.0f, "v2", /*trainable=*/false);
  const Tensor tensor2 = v0.value() + v1.value();
  ExponentialMovingAverage ema(0.25, std::nullopt, /*zero_debias=*/true, "foo");
  EXPECT_EQ(ema.AverageName(v0), "v0/foo");
  EXPECT_EQ(ema.AverageName(tensor2), "add/foo");
  ema.Apply({&v0, &v1}, {tensor2});
  std::vector<std::string> keys;
  for (const auto& [key, variable] : ema.VariablesToRestore(graph.GlobalVariables())) {
    keys.push_back(key);
  }
  EXPECT_THAT(keys, UnorderedElementsAre("v0/foo", "v1/foo", "add/foo", "add/foo/biased",
                                         "add/foo/local_step", "v2"));
}

// testAverageVariablesNamesRespectScope: shadows are made in the current
// variable scope (slot_creator's variable_scope(None, "<var>/<name>")), and
// average_name before Apply prefixes the name scope, as TF 2.21 printed
// for this program: "scope2/scope1/v0/foo" both before and after Apply; under
// a name scope alone "ns/scope1/v0/ExponentialMovingAverage" before and the
// shadow "scope1/v0/ExponentialMovingAverage" after.
TEST(EmaTfSemanticsTest, AverageVariablesNamesRespectScope) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable* v0 = nullptr;
  {
    VariableScope scope("scope1");
    v0 = new Variable(10.0f, "v0");
  }
  const std::unique_ptr<Variable> own(v0);
  EXPECT_EQ(v0->name(), "scope1/v0:0");
  {
    VariableScope scope("scope2");
    ExponentialMovingAverage ema(0.25, std::nullopt, true, "foo");
    EXPECT_EQ(ema.AverageName(*v0), "scope2/scope1/v0/foo");
    ema.Apply({v0});
    EXPECT_EQ(ema.AverageVariable(*v0)->shared_name(), "scope2/scope1/v0/foo");
    EXPECT_EQ(ema.AverageName(*v0), "scope2/scope1/v0/foo");
    EXPECT_EQ(ema.VariablesToRestore({v0}).count("scope2/scope1/v0/foo"), 1u);
  }
  NameScope ns("ns");
  ExponentialMovingAverage ema2(0.5);
  EXPECT_EQ(ema2.AverageName(*v0), "ns/scope1/v0/ExponentialMovingAverage");
  ema2.Apply({v0});
  EXPECT_EQ(ema2.AverageName(*v0), "scope1/v0/ExponentialMovingAverage");
}

TEST(EmaTfSemanticsTest, PlainTensorsNeedAGraph) {
  ExponentialMovingAverage ema(0.5);
  Variable v(1.0f, "v");
  EXPECT_THROW(ema.Apply({&v}, {v.value() + v.value()}), FailedPreconditionError);
}

// testAssignMovingAverageWithoutZeroDebias, eagerly: [10, 11] toward [1, 2]
// with decay 0.25 gives [10 * 0.25 + 1 * 0.75, 11 * 0.25 + 2 * 0.75].
TEST(EmaTfSemanticsTest, AssignMovingAverageWithoutZeroDebias) {
  Variable var(Tensor::Vector<float>({10, 11}), "var");
  const Tensor out = AssignMovingAverage(var, Tensor::Vector<float>({1, 2}), 0.25);
  EXPECT_EQ(out.ToVector<float>(), std::vector<float>({3.25f, 4.25f}));
  EXPECT_EQ(var.value().ToVector<float>(), std::vector<float>({3.25f, 4.25f}));
}

// testAssignMovingAverage (zero_debias): a 0-started average of [1, 2] is
// debiased to exactly [1, 2], and further steps follow _zero_debias's
// float32 formula. 1 - decay is computed in double, then rounded (TF
// converts the Python float 1.0 - decay): 1 - 0.1 differs from 1 - 0.1f.
TEST(EmaTfSemanticsTest, AssignMovingAverageZeroDebias) {
  Variable var(Tensor::Vector<float>({0, 0}), "var");
  ZeroDebiasState state = MakeZeroDebiasState(var);
  // "var" may be "var_1" in this process: names are unique across tests.
  EXPECT_EQ(state.biased->name(), std::string(var.shared_name()) + "/biased:0");
  EXPECT_EQ(state.local_step->name(), std::string(var.shared_name()) + "/local_step:0");
  EXPECT_FALSE(state.biased->trainable());
  const Tensor first = AssignMovingAverage(var, Tensor::Vector<float>({1, 2}), 0.25, &state);
  EXPECT_EQ(first.ToVector<float>(), std::vector<float>({1, 2}));

  const double decay = 0.1;
  const float one_minus = static_cast<float>(1.0 - decay);
  float biased[2] = {0, 0};
  Variable w(Tensor::Vector<float>({0, 0}), "w");
  ZeroDebiasState w_state = MakeZeroDebiasState(w);
  const std::vector<std::vector<float>> values = {{3, -1}, {5, 0.5f}, {-2, 4}};
  for (size_t step = 1; step <= values.size(); ++step) {
    const std::vector<float>& x = values[step - 1];
    const Tensor got = AssignMovingAverage(w, Tensor::FromVector<float>(x), decay, &w_state);
    const float factor = 1.0f - std::pow(1.0f - one_minus, static_cast<float>(step));
    std::vector<float> expected(2);
    for (int i = 0; i < 2; ++i) {
      biased[i] = biased[i] - (biased[i] - x[i]) * one_minus;
      expected[i] = biased[i] / factor;
    }
    EXPECT_EQ(got.ToVector<float>(), expected) << "step " << step;
    EXPECT_EQ(w_state.local_step->value().scalar<float>(), static_cast<float>(step));
  }
}

// The same in a graph: the state variables are graph variables named as
// TF names them, and running the update three times with a constant value
// keeps returning it (TF 2.21 prints [1. 2.] three times).
TEST(EmaTfSemanticsTest, AssignMovingAverageZeroDebiasInAGraph) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable v(Tensor::Vector<float>({0, 0}), "v");
  ZeroDebiasState state = MakeZeroDebiasState(v);
  const Tensor update =
      AssignMovingAverage(v, Constant(Tensor::Vector<float>({1, 2})), 0.25, &state);
  EXPECT_THAT(graph.GlobalVariables(), ElementsAre(&v, state.biased.get(), state.local_step.get()));
  EXPECT_EQ(state.biased->name(), "v/biased:0");
  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(sess.Run(update).ToVector<float>(), std::vector<float>({1, 2}));
  }
  EXPECT_EQ(sess.Run(state.local_step->value()).scalar<float>(), 3.0f);
}

TEST(EmaTfSemanticsTest, AssignMovingAverageRejectsMismatchedValues) {
  Variable var(Tensor::Vector<float>({0, 0}), "var");
  EXPECT_THROW(AssignMovingAverage(var, Tensor::Vector<float>({1, 2, 3}), 0.5),
               InvalidArgumentError);
  EXPECT_THROW(AssignMovingAverage(var, Tensor::Vector<double>({1, 2}), 0.5), InvalidArgumentError);
  EXPECT_THROW(AssignMovingAverage(var, Tensor::Vector<float>({1, 2}), 1.5), InvalidArgumentError);
}

}  // namespace
}  // namespace eager
