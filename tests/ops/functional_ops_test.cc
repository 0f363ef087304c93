// Function calls in a Session (ops/functional_ops.h, runtime/function_library.h):
// a FunctionDef's body in TF's notation runs with its arguments, nested calls
// and captured variable handles; control outputs run; a crafted library is a
// clear error naming the function and node. TF 2.21 judges real SavedModels
// in tests/tf_graphs/saved_model_tf2_test.py.

#include "ops/functional_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ops/session.h"
#include "runtime/function_library.h"
#include "runtime/graph.h"
#include "runtime/variable.h"

namespace eager {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr int kFloat = 1;  // DT_FLOAT

Node MakeNode(std::string name, std::string op, std::vector<std::string> inputs, Attrs attrs) {
  return Node{.name = std::move(name),
              .op = std::move(op),
              .inputs = std::move(inputs),
              .attrs = std::move(attrs)};
}

Node ConstNode(std::string name, const Tensor& value) {
  return MakeNode(std::move(name), "Const", {}, Attrs{{"value", value}, {"dtype", value.dtype()}});
}

Node CallNode(std::string name, std::string f, std::vector<std::string> inputs, int outputs,
              const char* op = "StatefulPartitionedCall") {
  Node node = MakeNode(std::move(name), op, std::move(inputs), Attrs{{"f", std::move(f)}});
  if (outputs > 0) node.attrs.Set("Tout", std::vector<DType>(outputs, DType::kFloat32));
  return node;
}

// scale(x: float, v: resource) -> y = x * v
FunctionDefinition Scale() {
  FunctionDefinition f{.name = "scale"};
  f.inputs = {{.name = "x", .tf_type = kFloat}, {.name = "v", .tf_type = kTfResourceType}};
  f.outputs = {{.name = "y", .tf_type = kFloat}};
  f.nodes.push_back(MakeNode("read", "ReadVariableOp", {"v"}, Attrs{{"dtype", DType::kFloat32}}));
  f.nodes.push_back(MakeNode("mul", "Mul", {"x", "read:value:0"}, Attrs{{"T", DType::kFloat32}}));
  f.ret = {{"y", "mul:z:0"}};
  return f;
}

// outer(a: float, h: resource) -> out = scale(a, h) + a
FunctionDefinition Outer() {
  FunctionDefinition f{.name = "outer"};
  f.inputs = {{.name = "a", .tf_type = kFloat}, {.name = "h", .tf_type = kTfResourceType}};
  f.outputs = {{.name = "out", .tf_type = kFloat}};
  f.nodes.push_back(CallNode("call", "scale", {"a", "h"}, 1));
  f.nodes.push_back(
      MakeNode("add", "AddV2", {"call:output:0", "a"}, Attrs{{"T", DType::kFloat32}}));
  f.ret = {{"out", "add:z:0"}};
  return f;
}

// bump(h: resource): h += 1, a control output only.
FunctionDefinition Bump() {
  FunctionDefinition f{.name = "bump"};
  f.inputs = {{.name = "h", .tf_type = kTfResourceType}};
  f.nodes.push_back(ConstNode("one", Tensor::Vector<float>({1, 1})));
  f.nodes.push_back(MakeNode("assign", "AssignAddVariableOp", {"h", "one:output:0"},
                             Attrs{{"dtype", DType::kFloat32}}));
  f.control_outputs = {"assign"};
  f.control_ret = {{"assign", "assign"}};
  return f;
}

// A graph with variable "v" = [2, 3], a Const "x" = [1, 10] and `library`.
class CallGraph {
 public:
  explicit CallGraph(std::vector<FunctionDefinition> functions) {
    auto library = std::make_shared<FunctionLibrary>();
    for (FunctionDefinition& f : functions) library->Add(std::move(f));
    graph.SetFunctionLibrary(library);
    Node handle = MakeNode("v", "VarHandleOp", {},
                           Attrs{{"dtype", DType::kFloat32},
                                 {"shape", Shape{2}},
                                 {"container", std::string()},
                                 {"shared_name", std::string("v")}});
    graph.AddNode(std::move(handle));
    GraphVariable record;
    record.variable_node = "v";
    variable = &graph.ImportVariable(record);
    variable->Assign(Tensor::Vector<float>({2, 3}));
    graph.AddNode(ConstNode("x", Tensor::Vector<float>({1, 10})));
  }
  Graph graph;
  Variable* variable = nullptr;
};

std::string RunError(Session& sess, const std::string& fetch) {
  try {
    sess.Run(std::vector<Fetch>{fetch});
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(FunctionalOpsTest, CallRunsTheBodyWithArgumentsAndCapturedHandle) {
  CallGraph g({Scale()});
  g.graph.AddNode(CallNode("call", "scale", {"x", "v"}, 1));
  Session sess(g.graph);
  EXPECT_EQ(sess.Run("call:0").ToVector<float>(), (std::vector<float>{2, 30}));
  // The body reads the variable when it runs, not when it was planned.
  g.variable->Assign(Tensor::Vector<float>({-1, 0.5f}));
  EXPECT_EQ(sess.Run("call:0").ToVector<float>(), (std::vector<float>{-1, 5}));
}

TEST(FunctionalOpsTest, NestedCallsPassHandlesThrough) {
  CallGraph g({Scale(), Outer()});
  g.graph.AddNode(CallNode("call", "outer", {"x", "v"}, 1));
  Session sess(g.graph);
  EXPECT_EQ(sess.Run("call:0").ToVector<float>(), (std::vector<float>{3, 40}));
}

TEST(FunctionalOpsTest, ControlOutputsRun) {
  CallGraph g({Bump()});
  g.graph.AddNode(CallNode("bump_call", "bump", {"v"}, 0));
  Session sess(g.graph);
  sess.Run(g.graph.OperationByName("bump_call"));
  sess.Run(g.graph.OperationByName("bump_call"));
  EXPECT_EQ(g.variable->stored_value().ToVector<float>(), (std::vector<float>{4, 5}));
}

TEST(FunctionalOpsTest, UnknownFunctionNamesItAndTheNode) {
  CallGraph g({Scale()});
  g.graph.AddNode(CallNode("call", "nope", {"x", "v"}, 1));
  Session sess(g.graph);
  EXPECT_THAT(RunError(sess, "call:0"),
              AllOf(HasSubstr("node 'call' calls function 'nope'"), HasSubstr("'scale'")));
}

TEST(FunctionalOpsTest, ArityMismatchNamesFunctionAndNode) {
  CallGraph g({Scale()});
  g.graph.AddNode(CallNode("call", "scale", {"x"}, 1));
  Session sess(g.graph);
  EXPECT_THAT(RunError(sess, "call:0"),
              AllOf(HasSubstr("node 'call'"), HasSubstr("function 'scale'"),
                    HasSubstr("takes 1 handles and 1 values")));
}

TEST(FunctionalOpsTest, RecursionIsRefusedAtTheDepthLimit) {
  FunctionDefinition loop{.name = "loop"};
  loop.inputs = {{.name = "x", .tf_type = kFloat}};
  loop.outputs = {{.name = "y", .tf_type = kFloat}};
  loop.nodes.push_back(CallNode("again", "loop", {"x"}, 1, "PartitionedCall"));
  loop.ret = {{"y", "again:output:0"}};
  CallGraph g({loop});
  g.graph.AddNode(CallNode("call", "loop", {"x"}, 1, "PartitionedCall"));
  Session sess(g.graph);
  EXPECT_THAT(RunError(sess, "call:0"), AllOf(HasSubstr("function 'loop'"),
                                              HasSubstr("deeper than 64"), HasSubstr("recurses")));
}

TEST(FunctionalOpsTest, BodyInputNamingNoOutputNamesFunctionAndNode) {
  FunctionDefinition f = Scale();
  f.nodes[1].inputs[1] = "read:nope:0";
  CallGraph g({f});
  g.graph.AddNode(CallNode("call", "scale", {"x", "v"}, 1));
  Session sess(g.graph);
  EXPECT_THAT(RunError(sess, "call:0"),
              AllOf(HasSubstr("function 'scale', node 'mul'"), HasSubstr("'read:nope:0'")));
}

// A crafted body whose nodes feed each other is refused when planned, naming
// a node of the cycle and the function (a file must not hang or overflow).
TEST(FunctionalOpsTest, ACycleInTheBodyIsAnErrorNamingItsNodeAndFunction) {
  FunctionDefinition f{.name = "cyclic"};
  f.inputs = {{.name = "x", .tf_type = kFloat}};
  f.outputs = {{.name = "y", .tf_type = kFloat}};
  f.nodes.push_back(MakeNode("a", "AddV2", {"x", "b:y:0"}, Attrs{{"T", DType::kFloat32}}));
  f.nodes.push_back(MakeNode("b", "Neg", {"a:z:0"}, Attrs{{"T", DType::kFloat32}}));
  f.ret = {{"y", "b:y:0"}};
  CallGraph g({f});
  g.graph.AddNode(CallNode("call", "cyclic", {"x"}, 1));
  Session sess(g.graph);
  EXPECT_THAT(RunError(sess, "call:0"),
              AllOf(HasSubstr("cycle"), HasSubstr("in function 'cyclic' called by node 'call'")));
}

TEST(FunctionalOpsTest, ErrorInsideTheBodyKeepsItsKindAndNamesTheCall) {
  CallGraph g({Scale()});
  g.graph.AddNode(CallNode("call", "scale", {"x", "v"}, 1));
  Session sess(g.graph);
  // DestroyResourceOp'd: reading it fails inside the body.
  g.variable->Assign(Tensor::Vector<float>({1, 1}));
  g.graph.AddNode(MakeNode("destroy", "DestroyResourceOp", {"v"}, Attrs{}));
  sess.Run(g.graph.OperationByName("destroy"));
  try {
    sess.Run("call:0");
    FAIL() << "no error";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(std::string(e.what()),
                AllOf(HasSubstr("{{node read}}"), HasSubstr("in function 'scale' called by "
                                                            "node 'call'")));
  }
}

TEST(FunctionalOpsTest, ArgOutsideACallIsAnError) {
  Graph graph;
  graph.AddNode(MakeNode("a", "_Arg", {}, Attrs{{"T", DType::kFloat32}, {"index", int64_t{0}}}));
  Session sess(graph);
  EXPECT_THAT(RunError(sess, "a:0"), HasSubstr("runs only inside a call"));
}

constexpr int kInt32 = 3;  // DT_INT32

// One-input float function: y = op(x, x) or op(x).
FunctionDefinition Unary(std::string name, std::string op, bool twice) {
  FunctionDefinition f{.name = std::move(name)};
  f.inputs = {{.name = "x", .tf_type = kFloat}};
  f.outputs = {{.name = "y", .tf_type = kFloat}};
  std::vector<std::string> inputs = {"x"};
  if (twice) inputs.push_back("x");
  f.nodes.push_back(MakeNode("n", std::move(op), inputs, Attrs{{"T", DType::kFloat32}}));
  f.ret = {{"y", twice ? "n:z:0" : "n:y:0"}};
  return f;
}

Node IfNode(const std::string& name, const std::string& pred, const char* op = "StatelessIf",
            DType pred_dtype = DType::kBool) {
  return MakeNode(name, op, {pred, "x"},
                  Attrs{{"then_branch", std::string("double")},
                        {"else_branch", std::string("negate")},
                        {"Tcond", pred_dtype},
                        {"Tin", std::vector<DType>{DType::kFloat32}},
                        {"Tout", std::vector<DType>{DType::kFloat32}}});
}

TEST(FunctionalOpsTest, IfRunsTheBranchItsPredicateTakes) {
  CallGraph g({Unary("double", "AddV2", true), Unary("negate", "Neg", false)});
  g.graph.AddNode(ConstNode("yes", Tensor(true)));
  g.graph.AddNode(ConstNode("no", Tensor(false)));
  g.graph.AddNode(ConstNode("empty", Tensor::Vector<float>({})));
  g.graph.AddNode(IfNode("then", "yes"));
  g.graph.AddNode(IfNode("else", "no", "If"));
  // TF's truth of a non-scalar: whether it has elements.
  g.graph.AddNode(IfNode("by_size", "empty", "StatelessIf", DType::kFloat32));
  Session sess(g.graph);
  EXPECT_EQ(sess.Run("then:0").ToVector<float>(), (std::vector<float>{2, 20}));
  EXPECT_EQ(sess.Run("else:0").ToVector<float>(), (std::vector<float>{-1, -10}));
  EXPECT_EQ(sess.Run("by_size:0").ToVector<float>(), (std::vector<float>{-1, -10}));
}

// cond(i, acc, h) = i < limit; body(i, acc, h) = (i + 1, acc * 2, h) with
// h += [1, 1] as a control output.
std::vector<FunctionDefinition> CountingLoop(int limit) {
  const std::vector<FunctionArg> vars = {{.name = "i", .tf_type = kInt32},
                                         {.name = "acc", .tf_type = kFloat},
                                         {.name = "h", .tf_type = kTfResourceType}};
  FunctionDefinition cond{.name = "cond", .inputs = vars};
  cond.outputs = {{.name = "p", .tf_type = 10}};  // DT_BOOL
  cond.nodes.push_back(ConstNode("limit", Tensor(static_cast<int32_t>(limit))));
  cond.nodes.push_back(
      MakeNode("less", "Less", {"i", "limit:output:0"}, Attrs{{"T", DType::kInt32}}));
  cond.ret = {{"p", "less:z:0"}};
  FunctionDefinition body{.name = "body", .inputs = vars, .outputs = vars};
  body.nodes.push_back(ConstNode("one", Tensor(int32_t{1})));
  body.nodes.push_back(ConstNode("two", Tensor(2.0f)));
  body.nodes.push_back(ConstNode("ones", Tensor::Vector<float>({1, 1})));
  body.nodes.push_back(
      MakeNode("next", "AddV2", {"i", "one:output:0"}, Attrs{{"T", DType::kInt32}}));
  body.nodes.push_back(
      MakeNode("double", "Mul", {"acc", "two:output:0"}, Attrs{{"T", DType::kFloat32}}));
  body.nodes.push_back(MakeNode("bump", "AssignAddVariableOp", {"h", "ones:output:0"},
                                Attrs{{"dtype", DType::kFloat32}}));
  body.ret = {{"i", "next:z:0"}, {"acc", "double:z:0"}, {"h", "h"}};
  body.control_outputs = {"bump"};
  body.control_ret = {{"bump", "bump"}};
  return {cond, body};
}

// The loop as TF 2 saves it: a While node inside a function (its T, which
// holds the handle's DT_RESOURCE, is not representable, so the importer
// drops it), called with the variable's handle.
void AddLoop(CallGraph& g) {
  auto library = std::make_shared<FunctionLibrary>(*g.graph.functions());
  FunctionDefinition run{.name = "run_loop"};
  run.inputs = {{.name = "h", .tf_type = kTfResourceType}};
  run.outputs = {{.name = "i", .tf_type = kInt32}, {.name = "acc", .tf_type = kFloat}};
  run.nodes.push_back(ConstNode("i0", Tensor(int32_t{0})));
  run.nodes.push_back(ConstNode("acc0", Tensor(1.0f)));
  run.nodes.push_back(
      MakeNode("loop", "While", {"i0:output:0", "acc0:output:0", "h"},
               Attrs{{"cond", std::string("cond")}, {"body", std::string("body")}}));
  run.ret = {{"i", "loop:output:0"}, {"acc", "loop:output:1"}};
  library->Add(run);
  g.graph.SetFunctionLibrary(library);
  Node call = CallNode("call", "run_loop", {"v"}, 0);
  call.attrs.Set("Tout", std::vector<DType>{DType::kInt32, DType::kFloat32});
  g.graph.AddNode(std::move(call));
}

TEST(FunctionalOpsTest, WhileCarriesValuesAndHandlesUntilCondIsFalse) {
  CallGraph g(CountingLoop(5));
  AddLoop(g);
  Session sess(g.graph);
  const auto out = sess.Run(std::vector<Fetch>{"call:0", "call:1"});
  EXPECT_EQ(out[0]->ToVector<int32_t>(), (std::vector<int32_t>{5}));
  EXPECT_EQ(out[1]->ToVector<float>(), (std::vector<float>{32}));
  // The body's assignment reached the caller's variable once per iteration.
  EXPECT_EQ(g.variable->stored_value().ToVector<float>(), (std::vector<float>{7, 8}));
}

TEST(FunctionalOpsTest, WhileStopsAtTheSessionsIterationBound) {
  CallGraph g(CountingLoop(1000000));
  AddLoop(g);
  Session sess(g.graph, SessionOptions{.max_loop_iterations = 10});
  try {
    sess.Run("call:0");
    FAIL() << "no error";
  } catch (const ResourceExhaustedError& e) {
    EXPECT_THAT(std::string(e.what()),
                AllOf(HasSubstr("node 'loop' (While)"), HasSubstr("within 10 iterations"),
                      HasSubstr("cond 'cond', body 'body'")));
  }
  // Without a bound the loop runs as TF's would (here to its end).
  CallGraph h(CountingLoop(100));
  AddLoop(h);
  Session unbounded(h.graph);
  EXPECT_EQ(unbounded.Run("call:0").ToVector<int32_t>(), (std::vector<int32_t>{100}));
}

// A loop that would run for hours (2^31 - 1 iterations) stops at the Run's
// deadline, well before it, naming the node; a loop that ends in time runs.
TEST(FunctionalOpsTest, WhileStopsAtTheSessionsDeadline) {
  CallGraph g(CountingLoop(std::numeric_limits<int32_t>::max()));
  AddLoop(g);
  Session sess(g.graph, SessionOptions{.operation_timeout_in_ms = 200});
  const auto start = std::chrono::steady_clock::now();
  try {
    sess.Run("call:0");
    FAIL() << "no error";
  } catch (const DeadlineExceededError& e) {
    EXPECT_THAT(std::string(e.what()),
                AllOf(HasSubstr("node 'loop' (While)"), HasSubstr("cond 'cond', body 'body'"),
                      HasSubstr("deadline of 200 ms")));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  CallGraph h(CountingLoop(100));
  AddLoop(h);
  Session timed(h.graph, SessionOptions{.operation_timeout_in_ms = 60'000});
  EXPECT_EQ(timed.Run("call:0").ToVector<int32_t>(), (std::vector<int32_t>{100}));
}

// A Case node over `branches` on index node `index` and input "x".
Node CaseNode(const std::string& name, const std::string& index, std::vector<std::string> branches,
              const char* op = "StatelessCase") {
  return MakeNode(name, op, {index, "x"},
                  Attrs{{"branches", std::move(branches)},
                        {"Tin", std::vector<DType>{DType::kFloat32}},
                        {"Tout", std::vector<DType>{DType::kFloat32}}});
}

TEST(FunctionalOpsTest, CaseRunsTheIndexedBranchAndTheLastOneOutOfRange) {
  CallGraph g({Unary("double", "AddV2", true), Unary("negate", "Neg", false),
               Unary("square", "Square", false)});
  const std::vector<std::string> branches = {"double", "negate", "square"};
  for (int32_t i : {0, 1, 2, -1, 3, 1000}) {
    const std::string n = "i" + std::to_string(i < 0 ? 9 : i);
    g.graph.AddNode(ConstNode(n, Tensor(i)));
    g.graph.AddNode(CaseNode("case_" + n, n, branches, i == 1 ? "Case" : "StatelessCase"));
  }
  Session sess(g.graph);
  EXPECT_EQ(sess.Run("case_i0:0").ToVector<float>(), (std::vector<float>{2, 20}));
  EXPECT_EQ(sess.Run("case_i1:0").ToVector<float>(), (std::vector<float>{-1, -10}));
  EXPECT_EQ(sess.Run("case_i2:0").ToVector<float>(), (std::vector<float>{1, 100}));
  // Out of range, either side: the last branch (TF's default).
  EXPECT_EQ(sess.Run("case_i9:0").ToVector<float>(), (std::vector<float>{1, 100}));
  EXPECT_EQ(sess.Run("case_i3:0").ToVector<float>(), (std::vector<float>{1, 100}));
  EXPECT_EQ(sess.Run("case_i1000:0").ToVector<float>(), (std::vector<float>{1, 100}));
}

TEST(FunctionalOpsTest, CasePassesVariableHandlesToItsBranch) {
  CallGraph g({Scale()});
  g.graph.AddNode(ConstNode("zero", Tensor(int32_t{0})));
  g.graph.AddNode(MakeNode("case", "Case", {"zero", "x", "v"},
                           Attrs{{"branches", std::vector<std::string>{"scale"}},
                                 {"Tout", std::vector<DType>{DType::kFloat32}}}));
  Session sess(g.graph);
  EXPECT_EQ(sess.Run("case:0").ToVector<float>(), (std::vector<float>{2, 30}));
}

TEST(FunctionalOpsTest, CaseErrorsNameTheNodeAndWhatWasExpected) {
  // two(x) -> (x, x): two outputs where the node's Tout has one.
  FunctionDefinition two{.name = "two"};
  two.inputs = {{.name = "x", .tf_type = kFloat}};
  two.outputs = {{.name = "a", .tf_type = kFloat}, {.name = "b", .tf_type = kFloat}};
  two.ret = {{"a", "x"}, {"b", "x"}};
  CallGraph g({Unary("negate", "Neg", false), two});
  g.graph.AddNode(ConstNode("one", Tensor(int32_t{1})));
  g.graph.AddNode(ConstNode("f", Tensor(1.0f)));
  g.graph.AddNode(ConstNode("v2", Tensor::Vector<int32_t>({0, 1})));
  g.graph.AddNode(CaseNode("wrong_count", "one", {"negate", "two"}));
  g.graph.AddNode(CaseNode("float_index", "f", {"negate"}));
  g.graph.AddNode(CaseNode("vector_index", "v2", {"negate"}));
  g.graph.AddNode(CaseNode("no_branches", "one", {}));
  g.graph.AddNode(CaseNode("missing", "one", {"nowhere"}));
  Session sess(g.graph);
  EXPECT_THAT(RunError(sess, "wrong_count:0"),
              AllOf(HasSubstr("node 'wrong_count' (StatelessCase)"), HasSubstr("branch 1 ('two')"),
                    HasSubstr("returns 2 outputs"), HasSubstr("Tout has 1")));
  EXPECT_THAT(RunError(sess, "float_index:0"),
              AllOf(HasSubstr("node 'float_index'"), HasSubstr("branch_index"), HasSubstr("int32"),
                    HasSubstr("float32")));
  EXPECT_THAT(RunError(sess, "vector_index:0"), AllOf(HasSubstr("int32 scalar"), HasSubstr("[2]")));
  EXPECT_THAT(RunError(sess, "no_branches:0"),
              AllOf(HasSubstr("node 'no_branches'"), HasSubstr("no branch functions")));
  EXPECT_THAT(RunError(sess, "missing:0"), AllOf(HasSubstr("nowhere"), HasSubstr("missing")));
}

}  // namespace
}  // namespace eager
