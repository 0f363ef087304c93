// ExponentialMovingAverage in graph mode: shadows as graph variables, the
// update op, TF1's collections, and DESIGN.md's golden [10.0, 0.10989987].

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autodiff/exponential_moving_average.h"
#include "ops/graph_ops.h"
#include "ops/session.h"
#include "runtime/graph.h"

namespace eager {
namespace {

using ::testing::ElementsAre;

TEST(EmaGraphTest, GoldenInAGraph) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable v(0.1f, "v");
  ExponentialMovingAverage ema(0.999);
  Operation maintain = ema.Apply({&v});
  EXPECT_EQ(maintain.name(), "ExponentialMovingAverage");
  EXPECT_EQ(maintain.node().op, "NoOp");
  Variable* shadow = ema.AverageVariable(v);
  ASSERT_NE(shadow, nullptr);
  EXPECT_EQ(shadow->name(), "v/ExponentialMovingAverage:0");
  EXPECT_FALSE(shadow->trainable());
  EXPECT_EQ(ema.Average(v).name(), "v/ExponentialMovingAverage/read:0");
  EXPECT_THAT(graph.GlobalVariables(), ElementsAre(&v, shadow));
  EXPECT_THAT(graph.TrainableVariables(), ElementsAre(&v));
  EXPECT_THAT(graph.VariableCollection(Graph::kMovingAverageVariables), ElementsAre(&v));
  // The shadow starts from v's initial value, as TF's initialized_value().
  EXPECT_THAT(graph.FindNode("v/ExponentialMovingAverage/Assign")->inputs,
              ElementsAre("v/ExponentialMovingAverage", "v/initial_value"));
  Tensor set10 = Assign(v, Tensor(10.0f));

  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  EXPECT_EQ(sess.Run(ema.Average(v)).scalar<float>(), 0.1f);
  sess.Run(set10);
  sess.Run(maintain);
  auto out = sess.Run({v.value(), ema.Average(v)});
  const Tensor pair = Tensor::Vector<float>({out[0]->scalar<float>(), out[1]->scalar<float>()});
  EXPECT_EQ(pair.ValuesString(), "[10.0, 0.10989987]");
}

TEST(EmaGraphTest, EqualsEagerForFloat64AndSeveralSteps) {
  Variable eager_v(Tensor::Vector<double>({0.5, -1.0}), "w");
  ExponentialMovingAverage eager_ema(0.9, /*num_updates=*/int64_t{3});
  eager_ema.Apply({&eager_v});
  for (int i = 0; i < 3; ++i) {
    eager_v.AssignAdd(Tensor::Vector<double>({1.25, 0.5}));
    eager_ema.Apply();
  }

  Graph graph;
  Graph::AsDefault in(graph);
  Variable v(Tensor::Vector<double>({0.5, -1.0}), "w");
  ExponentialMovingAverage ema(0.9, /*num_updates=*/int64_t{3});
  Operation maintain = ema.Apply({&v});
  Tensor step = AssignAdd(v, Tensor::Vector<double>({1.25, 0.5}));
  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  for (int i = 0; i < 3; ++i) {
    sess.Run(step);
    sess.Run(maintain);
  }
  const std::vector<double> graph_shadow = sess.Run(ema.Average(v)).ToVector<double>();
  EXPECT_EQ(graph_shadow, eager_ema.AverageVariable(eager_v)->stored_value().ToVector<double>());
  EXPECT_NE(graph_shadow[0], 0.5);  // it did move
  // Apply() with no list updates every shadow, as a new op.
  Operation again = ema.Apply();
  EXPECT_EQ(again.name(), "ExponentialMovingAverage_1");
  EXPECT_THROW(eager_ema.Apply(), InvalidArgumentError);  // eager_v is not in this graph
}

TEST(EmaGraphTest, AverageOfAVariableWithoutShadowThrows) {
  Variable v(1.0f, "lonely");
  ExponentialMovingAverage ema(0.5);
  EXPECT_THROW(ema.Average(v), NotFoundError);
  EXPECT_EQ(ema.AverageVariable(v), nullptr);
  ema.Apply({&v});
  EXPECT_EQ(ema.Average(v).scalar<float>(), 1.0f);  // eager: a value
}

}  // namespace
}  // namespace eager
