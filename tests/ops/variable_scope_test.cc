// TF1's variable_scope and get_variable (ops/variable_scope.h). Expected
// names and messages are those TF 2.21 gives for the same program under
// tf.compat.v1 (tests/tf_graphs/variable_scope_test.py has TF build it
// live and restore eager's checkpoint by these names).

#include "ops/variable_scope.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "ops/graph_ops.h"
#include "ops/operators.h"
#include "ops/session.h"
#include "runtime/errors.h"
#include "runtime/graph.h"

namespace eager {
namespace {

using ::testing::HasSubstr;

template <typename F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(VariableScopeTest, VariablesAreNamedByScopeOpsByUniqueNameScope) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable* v = nullptr;
  Tensor a, b;
  {
    VariableScope scope("foo");
    EXPECT_EQ(VariableScope::CurrentName(), "foo");
    v = &GetVariable("v", Shape{2});
    a = v->value() + Tensor(1.0f);
  }
  {
    VariableScope scope("foo");  // the same variable scope, a new name scope
    EXPECT_EQ(NameScope::Current(), "foo_1/");
    b = v->value() + Tensor(1.0f);
    VariableScope inner("inner");
    EXPECT_EQ(VariableScope::CurrentName(), "foo/inner");
    EXPECT_EQ(GetVariable("w", Shape{}).name(), "foo/inner/w:0");
  }
  EXPECT_EQ(VariableScope::CurrentName(), "");
  EXPECT_EQ(v->name(), "foo/v:0");
  EXPECT_EQ(a.name(), "foo/add:0");
  EXPECT_EQ(b.name(), "foo_1/add:0");
  // A name scope alone does not reach get_variable's names, as in TF.
  NameScope ns("ns");
  EXPECT_EQ(GetVariable("top", Shape{1}).name(), "top:0");
  EXPECT_EQ(graph.GlobalVariables().size(), 3u);
  EXPECT_EQ(graph.TrainableVariables().size(), 3u);
}

TEST(VariableScopeTest, ReuseAsTfs) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable* v = nullptr;
  {
    VariableScope scope("foo");
    v = &GetVariable("v", Shape{2});
    EXPECT_EQ(ErrorOf([] { GetVariable("v", Shape{2}); }),
              "Variable foo/v already exists, disallowed. Did you mean to set reuse=True or "
              "reuse=tf.AUTO_REUSE in VarScope?");
  }
  {
    VariableScope scope("foo", VariableReuse::kReuse);
    EXPECT_EQ(&GetVariable("v", Shape{2}), v);
    EXPECT_EQ(&GetVariable("v"), v);  // the shape may be left out
    EXPECT_EQ(ErrorOf([] { GetVariable("w", Shape{2}); }),
              "Variable foo/w does not exist, or was not created with tf.get_variable(). Did you "
              "mean to set reuse=tf.AUTO_REUSE in VarScope?");
    EXPECT_EQ(ErrorOf([] { GetVariable("v", Shape{3}); }),
              "Trying to share variable foo/v, but specified shape (3,) and found shape (2,).");
    EXPECT_EQ(ErrorOf([] { GetVariable("v", Shape{2}, {.dtype = DType::kFloat64}); }),
              "Trying to share variable foo/v, but specified dtype float64 and found dtype "
              "float32.");
    VariableScope inner("inner");  // inherits the reuse
    EXPECT_EQ(VariableScope::CurrentReuse(), VariableReuse::kReuse);
  }
  {
    VariableScope scope("bar", VariableReuse::kAutoReuse);
    Variable& x1 = GetVariable("x", Shape{1});
    EXPECT_EQ(&GetVariable("x", Shape{1}), &x1);
    EXPECT_EQ(x1.name(), "bar/x:0");
  }
  // A plain Variable of that name is not get_variable's: reusing it fails,
  // as TF's store does not know it.
  NameScope exact("baz/");
  Variable plain(1.0f, "plain");
  EXPECT_EQ(plain.name(), "baz/plain:0");
  VariableScope scope("baz", VariableReuse::kReuse);
  EXPECT_THAT(ErrorOf([] { GetVariable("plain", Shape{}); }), HasSubstr("does not exist"));
}

TEST(VariableScopeTest, ShapesInitializersAndErrors) {
  Graph graph;
  Graph::AsDefault in(graph);
  EXPECT_EQ(ErrorOf([] { GetVariable("u"); }),
            "Variable u did not get an initializer, so its `shape` argument must be specified.");
  EXPECT_THAT(ErrorOf([] {
                GetVariable("p", Shape::Partial({-1, 2}));
              }),
              HasSubstr("Shape of a new variable (p) must be fully defined, but instead was "
                        "(None, 2)."));
  Variable& w = GetVariable("w", Shape{30, 20});
  Variable& i = GetVariable("i", Shape{3}, {.dtype = DType::kInt32});
  Variable& c = GetVariable("c", std::nullopt,
                            {.initial_value = Tensor::Vector<float>({1, 2}), .trainable = false});
  EXPECT_EQ(c.shape(), Shape{2});
  EXPECT_EQ(graph.TrainableVariables().size(), 2u);
  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  // glorot_uniform: within sqrt(6 / (30 + 20)) and spread over it.
  const float limit = std::sqrt(6.0f / 50.0f);
  float lo = 1, hi = -1;
  for (float x : sess.Run(w.value()).ToVector<float>()) {
    EXPECT_LE(std::abs(x), limit);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  EXPECT_LT(lo, -0.8f * limit);
  EXPECT_GT(hi, 0.8f * limit);
  EXPECT_EQ(sess.Run(i.value()).ToVector<int32_t>(), (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(sess.Run(c.value()).ToVector<float>(), (std::vector<float>{1, 2}));
  EXPECT_THROW(GetVariable("c", Shape{3}, {.initial_value = Tensor::Vector<float>({1, 2})}),
               InvalidArgumentError);
  EXPECT_THROW(VariableScope("a/"), InvalidArgumentError);
}

TEST(VariableScopeTest, GetVariableNeedsAGraph) {
  EXPECT_THAT(ErrorOf([] { GetVariable("v", Shape{1}); }), HasSubstr("Graph::AsDefault"));
}

}  // namespace
}  // namespace eager
