// eager::Gradients through function calls (StatefulPartitionedCall,
// PartitionedCall; autodiff/internal/inline_call.h): the gradients of a
// loss computed by a nested call that reads a captured resource variable
// equal central differences of the loss run in a Session, for the captured
// variable and for a variable whose read is passed as a value argument;
// so do those through a StatelessIf taking either branch (one branch not
// reading the variable it is passed: zero gradient). A
// recursive library, a function that assigns variables, and a call of
// several outputs are clear errors naming the node.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/graph_gradients.h"
#include "ops/session.h"
#include "runtime/function_library.h"
#include "runtime/graph.h"

namespace eager {
namespace {

using ::testing::HasSubstr;

constexpr int kFloat = 1;  // DT_FLOAT

Node MakeNode(std::string name, std::string op, std::vector<std::string> inputs,
              Attrs attrs = Attrs{{"T", DType::kFloat32}}) {
  return Node{.name = std::move(name),
              .op = std::move(op),
              .inputs = std::move(inputs),
              .attrs = std::move(attrs)};
}

Node CallNode(std::string name, std::string f, std::vector<std::string> inputs,
              const char* op = "StatefulPartitionedCall") {
  Node node = MakeNode(std::move(name), op, std::move(inputs), Attrs{{"f", std::move(f)}});
  node.attrs.Set("Tout", std::vector<DType>{DType::kFloat32});
  node.output_specs = {{Shape{3}, DType::kFloat32}};
  return node;
}

Attrs ReadAttrs() { return Attrs{{"dtype", DType::kFloat32}}; }

// inner(x: float, v: resource) -> tanh(x * v)
FunctionDefinition Inner() {
  FunctionDefinition f{.name = "inner"};
  f.inputs = {{.name = "x", .tf_type = kFloat}, {.name = "v", .tf_type = kTfResourceType}};
  f.outputs = {{.name = "y", .tf_type = kFloat}};
  f.nodes.push_back(MakeNode("read", "ReadVariableOp", {"v"}, ReadAttrs()));
  f.nodes.push_back(MakeNode("mul", "Mul", {"x", "read:value:0"}));
  f.nodes.push_back(MakeNode("tanh", "Tanh", {"mul:z:0"}));
  f.ret = {{"y", "tanh:y:0"}};
  return f;
}

// outer(a: float, h: resource) -> inner(a, h) * a, through a PartitionedCall
FunctionDefinition Outer() {
  FunctionDefinition f{.name = "outer"};
  f.inputs = {{.name = "a", .tf_type = kFloat}, {.name = "h", .tf_type = kTfResourceType}};
  f.outputs = {{.name = "out", .tf_type = kFloat}};
  f.nodes.push_back(CallNode("call", "inner", {"a", "h"}, "PartitionedCall"));
  f.nodes.push_back(MakeNode("mul", "Mul", {"call:output:0", "a"}));
  f.ret = {{"out", "mul:z:0"}};
  return f;
}

// A graph with resource variables "v" and "u" (values given), the
// functions, and "x" = ReadVariableOp(u).
class CallGraph {
 public:
  explicit CallGraph(std::vector<FunctionDefinition> functions) {
    auto library = std::make_shared<FunctionLibrary>();
    for (FunctionDefinition& f : functions) library->Add(std::move(f));
    graph.SetFunctionLibrary(library);
    v = AddVariable("v", {0.7f, -0.4f, 1.3f});
    u = AddVariable("u", {0.5f, 2.0f, -1.1f});
    Node x = MakeNode("x", "ReadVariableOp", {"u"}, ReadAttrs());
    x.output_specs = {{Shape{3}, DType::kFloat32}};
    graph.AddNode(std::move(x));
  }
  Variable* AddVariable(const std::string& name, const std::vector<float>& value) {
    graph.AddNode(MakeNode(name, "VarHandleOp", {},
                           Attrs{{"dtype", DType::kFloat32},
                                 {"shape", Shape{3}},
                                 {"container", std::string()},
                                 {"shared_name", name}}));
    GraphVariable record;
    record.variable_node = name;
    Variable& variable = graph.ImportVariable(record);
    variable.Assign(Tensor::FromVector<float>(value, Shape{3}));
    return &variable;
  }
  // loss = sum(call^2)
  void AddLoss(const std::string& call) {
    Node square = MakeNode("square", "Square", {call});
    square.output_specs = {{Shape{3}, DType::kFloat32}};
    graph.AddNode(std::move(square));
    graph.AddNode(
        MakeNode("axes", "Const", {},
                 Attrs{{"value", Tensor::Vector<int32_t>({0})}, {"dtype", DType::kInt32}}));
    Node sum = MakeNode("loss", "Sum", {"square", "axes"});
    sum.attrs.Set("Tidx", DType::kInt32);
    sum.attrs.Set("keep_dims", false);
    graph.AddNode(std::move(sum));
  }
  Graph graph;
  Variable* v = nullptr;
  Variable* u = nullptr;
};

// d loss / d variable by central differences, each element in turn.
std::vector<double> NumericGradient(Session& sess, Variable& variable) {
  const std::vector<float> x0 = variable.stored_value().ToVector<float>();
  std::vector<double> grad;
  constexpr float kEps = 1e-3f;
  for (size_t i = 0; i < x0.size(); ++i) {
    double f[2];
    for (int side = 0; side < 2; ++side) {
      std::vector<float> x = x0;
      x[i] += side == 0 ? kEps : -kEps;
      variable.Assign(Tensor::FromVector<float>(x, Shape{3}));
      f[side] = sess.Run("loss:0").scalar<float>();
    }
    grad.push_back((f[0] - f[1]) / (2.0 * kEps));
  }
  variable.Assign(Tensor::FromVector<float>(x0, Shape{3}));
  return grad;
}

void ExpectMatches(const std::vector<float>& got, const std::vector<double>& want,
                   const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 2e-3 * (1 + std::abs(want[i]))) << what << "[" << i << "]";
  }
}

TEST(GraphCallGradientTest, NestedCallWithCapturedVariableMatchesCentralDifferences) {
  CallGraph g({Inner(), Outer()});
  g.graph.AddNode(CallNode("call", "outer", {"x", "v"}));
  g.AddLoss("call");
  Graph::AsDefault in(g.graph);
  const std::vector<std::optional<Tensor>> grads =
      Gradients(g.graph.TensorByName("loss:0"), {g.v, g.u});
  ASSERT_TRUE(grads[0].has_value());
  ASSERT_TRUE(grads[1].has_value());
  Session sess(g.graph);
  const std::vector<float> dv = sess.Run(*grads[0]).ToVector<float>();
  const std::vector<float> du = sess.Run(*grads[1]).ToVector<float>();
  ExpectMatches(dv, NumericGradient(sess, *g.v), "d/dv (captured handle)");
  ExpectMatches(du, NumericGradient(sess, *g.u), "d/du (value argument)");
  // By hand for element 0: loss_i = (tanh(u v) u)^2.
  const double u0 = 0.5, v0 = 0.7, t = std::tanh(u0 * v0);
  EXPECT_NEAR(dv[0], 2 * t * u0 * (1 - t * t) * u0 * u0, 1e-5);
}

// triple(x: float, v: resource) -> x * 3, v unread (as cond_v2's branches
// get every capture of either).
FunctionDefinition Triple() {
  FunctionDefinition f{.name = "triple"};
  f.inputs = {{.name = "x", .tf_type = kFloat}, {.name = "v", .tf_type = kTfResourceType}};
  f.outputs = {{.name = "y", .tf_type = kFloat}};
  f.nodes.push_back(
      MakeNode("three", "Const", {}, Attrs{{"value", Tensor(3.0f)}, {"dtype", DType::kFloat32}}));
  f.nodes.push_back(MakeNode("mul", "Mul", {"x", "three:output:0"}));
  f.ret = {{"y", "mul:z:0"}};
  return f;
}

class IfGradientTest : public ::testing::TestWithParam<bool> {};

TEST_P(IfGradientTest, EachBranchMatchesCentralDifferences) {
  CallGraph g({Inner(), Triple()});
  g.graph.AddNode(
      MakeNode("p", "Const", {}, Attrs{{"value", Tensor(GetParam())}, {"dtype", DType::kBool}}));
  Node cond = MakeNode("if", "StatelessIf", {"p", "x", "v"},
                       Attrs{{"then_branch", std::string("inner")},
                             {"else_branch", std::string("triple")},
                             {"Tout", std::vector<DType>{DType::kFloat32}}});
  cond.output_specs = {{Shape{3}, DType::kFloat32}};
  g.graph.AddNode(std::move(cond));
  g.AddLoss("if");
  Graph::AsDefault in(g.graph);
  const std::vector<std::optional<Tensor>> grads =
      Gradients(g.graph.TensorByName("loss:0"), {g.v, g.u});
  ASSERT_TRUE(grads[0].has_value());
  ASSERT_TRUE(grads[1].has_value());
  Session sess(g.graph);
  const std::vector<float> dv = sess.Run(*grads[0]).ToVector<float>();
  const std::vector<float> du = sess.Run(*grads[1]).ToVector<float>();
  ExpectMatches(dv, NumericGradient(sess, *g.v), "d/dv");
  ExpectMatches(du, NumericGradient(sess, *g.u), "d/du");
  if (!GetParam()) {  // triple: d/du (3u)^2 = 18u; v unread
    EXPECT_EQ(dv, (std::vector<float>{0, 0, 0}));
    EXPECT_NEAR(du[1], 18 * 2.0, 1e-5);
  }
}

TEST(GraphCallGradientTest, IfOfANonBoolPredicateIsUnimplemented) {
  CallGraph g({Inner(), Triple()});
  Node cond = MakeNode("if", "If", {"x", "x", "v"},
                       Attrs{{"then_branch", std::string("inner")},
                             {"else_branch", std::string("triple")},
                             {"Tout", std::vector<DType>{DType::kFloat32}}});
  cond.output_specs = {{Shape{3}, DType::kFloat32}};
  g.graph.AddNode(std::move(cond));
  g.AddLoss("if");
  Graph::AsDefault in(g.graph);
  try {
    Gradients(g.graph.TensorByName("loss:0"), {g.v});
    ADD_FAILURE() << "no error";
  } catch (const UnimplementedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("node 'if' (If): the gradient needs a bool scalar predicate"));
  }
}

INSTANTIATE_TEST_SUITE_P(Branches, IfGradientTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Then" : "Else"; });

TEST(GraphCallGradientTest, RecursiveLibraryIsAnErrorNotAStackOverflow) {
  FunctionDefinition rec{.name = "rec"};
  rec.inputs = {{.name = "x", .tf_type = kFloat}};
  rec.outputs = {{.name = "y", .tf_type = kFloat}};
  rec.nodes.push_back(CallNode("again", "rec", {"x"}));
  rec.nodes.push_back(MakeNode("twice", "AddV2", {"again:output:0", "x"}));
  rec.ret = {{"y", "twice:z:0"}};
  CallGraph g({rec});
  g.graph.AddNode(CallNode("call", "rec", {"x"}));
  g.AddLoss("call");
  Graph::AsDefault in(g.graph);
  try {
    Gradients(g.graph.TensorByName("loss:0"), {g.u});
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the function library recurses"));
  }
}

TEST(GraphCallGradientTest, AssigningFunctionAndSeveralOutputsAreUnimplemented) {
  FunctionDefinition bump{.name = "bump"};
  bump.inputs = {{.name = "x", .tf_type = kFloat}, {.name = "h", .tf_type = kTfResourceType}};
  bump.outputs = {{.name = "y", .tf_type = kFloat}};
  bump.nodes.push_back(MakeNode("assign", "AssignAddVariableOp", {"h", "x"}, ReadAttrs()));
  bump.nodes.push_back(MakeNode("read", "ReadVariableOp", {"h", "^assign"}, ReadAttrs()));
  bump.ret = {{"y", "read:value:0"}};
  FunctionDefinition two{.name = "two"};
  two.inputs = {{.name = "x", .tf_type = kFloat}};
  two.outputs = {{.name = "a", .tf_type = kFloat}, {.name = "b", .tf_type = kFloat}};
  two.nodes.push_back(MakeNode("neg", "Neg", {"x"}));
  two.ret = {{"a", "neg:y:0"}, {"b", "neg:y:0"}};
  for (const char* f : {"bump", "two"}) {
    CallGraph g({bump, two});
    g.graph.AddNode(std::string(f) == "bump" ? CallNode("call", f, {"x", "v"})
                                             : CallNode("call", f, {"x"}));
    g.AddLoss("call");
    Graph::AsDefault in(g.graph);
    try {
      Gradients(g.graph.TensorByName("loss:0"), {g.u});
      ADD_FAILURE() << f << ": no error";
    } catch (const UnimplementedError& e) {
      EXPECT_THAT(e.what(), HasSubstr("node 'call'"));
      EXPECT_THAT(e.what(), HasSubstr(std::string(f) == "bump" ? "assigns variables (node 'assign'"
                                                               : "which has 2 outputs"));
    }
  }
}

}  // namespace
}  // namespace eager
