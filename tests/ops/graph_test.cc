// Graph mode: TF1 names and node records, symbolic tensors, variables that
// start uninitialized, initializers, collections, Session runs and feeds.

#include "runtime/graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ops/array_ops.h"
#include "ops/graph_ops.h"
#include "ops/matmul.h"
#include "ops/operators.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "runtime/names.h"
#include "runtime/variable.h"

namespace eager {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// The error of `fn`'s exception of type E ("" if it did not throw E).
template <typename E, typename Fn>
std::string ErrorOf(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> NodeNames(const Graph& g) {
  std::vector<std::string> out;
  out.reserve(g.num_nodes());
  for (int i = 0; i < g.num_nodes(); ++i) out.push_back(g.node(i).name);
  return out;
}

TEST(GraphTest, IssueExampleAddsThenRunsAfterInitialization) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable v1(1.0f, "v1"), v2(2.0f, "v2");
  Tensor result = v1 + v2;
  EXPECT_TRUE(result.is_symbolic());
  EXPECT_EQ(result.name(), "add:0");
  EXPECT_EQ(result.dtype(), DType::kFloat32);
  EXPECT_EQ(result.shape(), Shape{});
  EXPECT_FALSE(v1.is_initialized());
  Session sess(graph);
  EXPECT_THAT(ErrorOf<FailedPreconditionError>([&] { sess.Run(result); }),
              HasSubstr("Attempting to use uninitialized value v1"));
  sess.Run(GlobalVariablesInitializer());
  Tensor value = sess.Run(result);
  EXPECT_FALSE(value.is_symbolic());
  EXPECT_EQ(value.ValuesString(), "3.0");
  EXPECT_EQ(v1.stored_value().scalar<float>(), 1.0f);
}

TEST(GraphTest, VariablesBuildTf1NodesAndCollections) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable v1(Tensor::Vector<float>({1, 2}), "v1");
  Variable step(Tensor(int64_t{0}), "global_step", /*trainable=*/false);
  EXPECT_THAT(NodeNames(graph), ElementsAre("v1/initial_value", "v1", "v1/Assign", "v1/read",
                                            "global_step/initial_value", "global_step",
                                            "global_step/Assign", "global_step/read"));
  const Node& var = *graph.FindNode("v1");
  EXPECT_EQ(var.op, "VariableV2");
  EXPECT_EQ(var.Attr<Shape>("shape"), Shape{2});
  EXPECT_EQ(var.Attr<DType>("dtype"), DType::kFloat32);
  EXPECT_EQ(var.Attr<std::string>("container"), "");
  EXPECT_EQ(var.Attr<std::string>("shared_name"), "");
  const Node& assign = *graph.FindNode("v1/Assign");
  EXPECT_EQ(assign.op, "Assign");
  EXPECT_THAT(assign.inputs, ElementsAre("v1", "v1/initial_value"));
  EXPECT_EQ(assign.Attr<DType>("T"), DType::kFloat32);
  EXPECT_TRUE(assign.Attr<bool>("validate_shape"));
  EXPECT_TRUE(assign.Attr<bool>("use_locking"));
  EXPECT_THAT(assign.Attr<std::vector<std::string>>("_class"), ElementsAre("loc:@v1"));
  const Node& read = *graph.FindNode("v1/read");
  EXPECT_EQ(read.op, "Identity");
  EXPECT_THAT(read.inputs, ElementsAre("v1"));
  const Node& init = *graph.FindNode("v1/initial_value");
  EXPECT_EQ(init.op, "Const");
  EXPECT_EQ(init.Attr<Tensor>("value").ToVector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(v1.value().name(), "v1/read:0");

  EXPECT_THAT(graph.GlobalVariables(), ElementsAre(&v1, &step));
  EXPECT_THAT(graph.TrainableVariables(), ElementsAre(&v1));
  EXPECT_THAT(GlobalVariables(), ElementsAre(&v1, &step));
  EXPECT_THAT(graph.CollectionKeys(), ElementsAre("trainable_variables", "variables"));
  const GraphVariable* record = graph.FindVariable(&v1);
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->variable_node, "v1");
  EXPECT_EQ(record->initializer, "v1/Assign");
  EXPECT_EQ(record->snapshot, "v1/read:0");
  EXPECT_EQ(record->initial_value, "v1/initial_value:0");
  EXPECT_EQ(graph.VariableForNode("global_step"), &step);
  EXPECT_EQ(graph.VariableForNode("v1/read"), nullptr);
}

TEST(GraphTest, Tf1NamingSequences) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable a(1.0f), b(2.0f), c(3.0f);
  EXPECT_EQ(a.name(), "Variable:0");
  EXPECT_EQ(b.name(), "Variable_1:0");
  EXPECT_EQ(c.name(), "Variable_2:0");
  EXPECT_EQ((a + b).name(), "add:0");
  EXPECT_EQ((a + c).name(), "add_1:0");
  EXPECT_EQ((a * b).name(), "mul:0");
  EXPECT_EQ((a - b).name(), "sub:0");
  EXPECT_EQ((a / b).name(), "truediv:0");
  EXPECT_EQ(Constant(Tensor(1.0f)).name(), "Const:0");
  EXPECT_EQ(Constant(Tensor(2.0f)).name(), "Const_1:0");
  {
    NameScope scope("layer");
    EXPECT_EQ((a + b).name(), "layer/add:0");
    Variable k(1.0f, "kernel");
    EXPECT_EQ(k.name(), "layer/kernel:0");
    EXPECT_EQ(ReduceSum(Tensor::Vector<float>({1, 2})).name(), "layer/Sum:0");
  }
  {
    NameScope scope("layer");
    EXPECT_EQ((a + b).name(), "layer_1/add:0");
  }
  EXPECT_EQ((a + b).name(), "add_2:0");
  // Names count case-insensitively, as TF's unique_name.
  EXPECT_EQ(Placeholder(DType::kFloat32, Shape{}, "ADD").name(), "ADD_3:0");
}

TEST(GraphTest, EachGraphHasItsOwnNamesAndEagerKeepsTheDefault) {
  ResetDefaultNames();
  Variable eager_v(1.0f, "v");
  Graph g1, g2;
  {
    Graph::AsDefault in(g1);
    Variable v(1.0f, "v");
    EXPECT_EQ(v.name(), "v:0");  // the process's "v" does not count in g1
    EXPECT_EQ((v + v).name(), "add:0");
  }
  {
    Graph::AsDefault in(g2);
    EXPECT_EQ((Constant(Tensor(1.0f)) + 1.0f).name(), "add:0");
  }
  // The process's names kept "v" (a graph's did not touch them); eagerly a
  // variable keeps its name as in TF2 (runtime/names.h, EagerVariableNames).
  EXPECT_TRUE(DefaultNames().IsUsed("v"));
  EXPECT_FALSE(DefaultNames().IsUsed("add"));
  Variable eager_v2(1.0f, "v");
  EXPECT_EQ(eager_v2.name(), "v:0");
  // Eager is untouched: values at once, variables initialized.
  EXPECT_EQ((eager_v + eager_v2).scalar<float>(), 2.0f);
  EXPECT_FALSE(eager_v.in_graph());
}

TEST(GraphTest, OpAttributesAndInputAttrsFollowTfNodeDefs) {
  Graph graph;
  Graph::AsDefault in(graph);
  Tensor x = Placeholder(DType::kFloat32, Shape{2, 3}, "x");
  Tensor y = MatMul(x, Tensor::Zeros(Shape{2, 3}), false, true);
  const Node& mm = *graph.FindNode("MatMul");
  EXPECT_EQ(mm.op, "MatMul");
  EXPECT_THAT(mm.inputs, ElementsAre("x", "MatMul/b"));  // TF's input name
  EXPECT_FALSE(mm.Attr<bool>("transpose_a"));
  EXPECT_TRUE(mm.Attr<bool>("transpose_b"));
  EXPECT_EQ(mm.Attr<DType>("T"), DType::kFloat32);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));

  Tensor s = ReduceSum(x, {1}, /*keepdims=*/true);
  const Node& sum = *graph.FindNode("Sum");
  EXPECT_THAT(sum.inputs, ElementsAre("x", "Sum/reduction_indices"));
  EXPECT_TRUE(sum.Attr<bool>("keep_dims"));
  EXPECT_EQ(sum.Attr<DType>("Tidx"), DType::kInt32);
  EXPECT_EQ(sum.FindAttr("axis"), nullptr);  // an input in TF, not an attribute
  const Node& axes = *graph.FindNode("Sum/reduction_indices");
  EXPECT_EQ(axes.op, "Const");
  EXPECT_EQ(axes.Attr<Tensor>("value").ToVector<int32_t>(), (std::vector<int32_t>{1}));
  EXPECT_EQ(s.shape(), (Shape{2, 1}));

  Tensor r = Reshape(x, {3, 2});
  EXPECT_THAT(graph.FindNode("Reshape")->inputs, ElementsAre("x", "Reshape/shape"));
  EXPECT_EQ(graph.FindNode("Reshape")->Attr<DType>("Tshape"), DType::kInt32);

  Session sess(graph);
  const Tensor xv = Tensor::Matrix<float>({{1, 2, 3}, {4, 5, 6}});
  auto out = sess.Run({s, r}, {{x, xv}});
  EXPECT_EQ(out[0]->ToVector<float>(), (std::vector<float>{6, 15}));
  EXPECT_EQ(out[1]->shape(), (Shape{3, 2}));
}

TEST(GraphTest, SymbolicTensorsHaveNoValues) {
  Graph graph;
  Graph::AsDefault in(graph);
  Tensor t = Constant(Tensor::Vector<float>({1, 2})) * 2.0;
  EXPECT_THAT(ErrorOf<FailedPreconditionError>([&] { t.data<float>(); }),
              HasSubstr("'mul:0' is a symbolic graph tensor"));
  EXPECT_THAT(ErrorOf<FailedPreconditionError>([&] { t.ValuesString(); }),
              HasSubstr("Session::Run"));
  EXPECT_EQ(t.DebugString(), "Tensor(\"mul:0\", shape=(2,), dtype=float32)");
  EXPECT_THAT(ErrorOf<FailedPreconditionError>([] { Tensor(1.0f).name(); }),
              HasSubstr("eager tensor"));
}

TEST(GraphTest, PlaceholderWithUnknownDimsChecksFeeds) {
  Graph graph;
  Graph::AsDefault in(graph);
  Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1, 3}), "x");
  EXPECT_EQ(x.shape().ToString(), "[?,3]");
  Tensor w = Constant(Tensor::Matrix<float>({{1, 0}, {0, 1}, {1, 1}}), "w");
  Tensor y = MatMul(x, w);
  EXPECT_EQ(y.shape().ToString(), "[?,2]");
  Tensor total = ReduceSum(y);
  EXPECT_EQ(total.shape(), Shape{});
  Tensor flat = Reshape(x, {-1});
  EXPECT_EQ(flat.shape().ToString(), "[?]");
  const Node& ph = *graph.FindNode("x");
  EXPECT_EQ(ph.op, "Placeholder");
  EXPECT_EQ(ph.Attr<Shape>("shape").ToString(), "[?,3]");
  EXPECT_EQ(ph.Attr<DType>("dtype"), DType::kFloat32);

  Session sess(graph);
  Tensor batch = Tensor::Matrix<float>({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}});
  Tensor yv = sess.Run(y, {{x, batch}});
  EXPECT_EQ(yv.shape(), (Shape{3, 2}));
  EXPECT_EQ(yv.ToVector<float>(), (std::vector<float>{4, 5, 10, 11, 16, 17}));
  EXPECT_EQ(sess.Run("Sum:0", {{"x:0", batch}}).scalar<float>(), 63.0f);

  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { sess.Run(y); }),
              HasSubstr("You must feed a value for placeholder tensor 'x:0' with dtype float32 "
                        "and shape [?,3]"));
  EXPECT_THAT(
      ErrorOf<InvalidArgumentError>([&] {
        sess.Run(y, {{x, Tensor::Zeros(Shape{2, 4})}});
      }),
      HasSubstr("Cannot feed value of dtype float32 and shape [2,4] for Tensor 'x:0', which has "
                "dtype float32 and shape [?,3]"));
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] {
                sess.Run(y, {{x, Tensor::Zeros(Shape{2, 3}, DType::kFloat64)}});
              }),
              HasSubstr("Cannot feed value of dtype float64"));
  // Whether [?,3] fits [4,-1] depends on the feed (TF: a static [4,?]).
  Tensor four_rows = Reshape(x, {4, -1});
  EXPECT_EQ(four_rows.shape().ToString(), "[4,?]");
  EXPECT_EQ(sess.Run(four_rows, {{x, Tensor::Zeros(Shape{4, 3})}}).shape(), (Shape{4, 3}));
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] {
                sess.Run(four_rows, {{x, batch}});
              }),
              HasSubstr("[[{{node Reshape_1}}]]"));
  // A shape that cannot work whatever the feed is refused when building, as eagerly.
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { MatMul(x, x); }), HasSubstr("MatMul: "));
  // A kernel error names the node, TF's way, and keeps its kind.
  Tensor ids = Placeholder(DType::kInt32, Shape::Partial({-1}), "ids");
  Tensor rows = Gather(w, ids);
  EXPECT_EQ(rows.shape().ToString(), "[?,2]");
  EXPECT_EQ(sess.Run(rows, {{ids, Tensor::Vector<int32_t>({2})}}).ToVector<float>(),
            (std::vector<float>{1, 1}));
  const std::string error = ErrorOf<InvalidArgumentError>([&] {
    sess.Run(rows, {{ids, Tensor::Vector<int32_t>({7})}});
  });
  EXPECT_THAT(error, HasSubstr("7"));
  EXPECT_THAT(error, HasSubstr("[[{{node GatherV2}}]]"));
}

TEST(GraphTest, RunTakesMixedTensorsOpsAndNamesAndRunsEachNodeOnce) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable counter(0.0f, "counter");
  Tensor bump = AssignAdd(counter, Tensor(1.0f));
  EXPECT_EQ(bump.name(), "AssignAdd:0");
  Tensor twice = bump + bump;  // one AssignAdd feeds both inputs
  Operation train = Group({OperationOf(bump)}, "train");
  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  auto out = sess.Run({twice, train, bump, "AssignAdd:0", "train"});
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0]->scalar<float>(), 2.0f);  // (0 + 1) * 2
  EXPECT_FALSE(out[1].has_value());
  EXPECT_EQ(out[2]->scalar<float>(), 1.0f);
  EXPECT_EQ(out[3]->scalar<float>(), 1.0f);
  EXPECT_FALSE(out[4].has_value());
  EXPECT_EQ(counter.stored_value().scalar<float>(), 1.0f);
  sess.Run(train);
  EXPECT_EQ(counter.stored_value().scalar<float>(), 2.0f);
  EXPECT_THAT(graph.FindNode("train")->inputs, ElementsAre("^AssignAdd"));
}

TEST(GraphTest, InitializersAndAssignOps) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable a(Tensor::Vector<float>({1, 2}), "a"), b(5.0f, "b");
  Operation init_a = VariablesInitializer({&a}, "init_a");
  EXPECT_THAT(graph.FindNode("init_a")->inputs, ElementsAre("^a/Assign"));
  Operation init = GlobalVariablesInitializer();
  EXPECT_EQ(init.name(), "init");
  EXPECT_EQ(init.node().op, "NoOp");
  EXPECT_THAT(init.node().inputs, ElementsAre("^a/Assign", "^b/Assign"));
  Tensor set = Assign(a, Tensor::Vector<float>({7, 8}));
  Tensor sub = AssignSub(b, Tensor(2.0f));
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] {
                Assign(a, Tensor::Vector<float>({1, 2, 3}));
              }),
              HasSubstr("variable 'a' has dtype float32 and shape [2]"));
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { a.Assign(a.value() * 2.0); }),
              HasSubstr("eager::Assign(variable, value)"));

  Session sess(graph);
  sess.Run(init_a);
  EXPECT_TRUE(a.is_initialized());
  EXPECT_FALSE(b.is_initialized());
  EXPECT_THAT(ErrorOf<FailedPreconditionError>([&] { sess.Run(sub); }),
              HasSubstr("Attempting to use uninitialized value b"));
  sess.Run(init);
  EXPECT_EQ(sess.Run(sub).scalar<float>(), 3.0f);
  EXPECT_EQ(sess.Run(set).ToVector<float>(), (std::vector<float>{7, 8}));
  EXPECT_EQ(sess.Run(a.value()).ToVector<float>(), (std::vector<float>{7, 8}));
  // A second Session sees the same state (it lives in the Variables).
  Session other(graph);
  EXPECT_EQ(other.Run(b.value()).scalar<float>(), 3.0f);
}

TEST(GraphTest, EagerGraphOpsWorkWithoutAGraph) {
  Variable v(1.0f, "graph_test_eager_v");
  EXPECT_EQ(Assign(v, Tensor(4.0f)).scalar<float>(), 4.0f);
  EXPECT_EQ(AssignAdd(v, Tensor(1.0f)).scalar<float>(), 5.0f);
  EXPECT_EQ(AssignSub(v, Tensor(2.0f)).scalar<float>(), 3.0f);
  EXPECT_TRUE(GlobalVariablesInitializer().is_none());
  EXPECT_TRUE(GlobalVariables().empty());
  EXPECT_EQ(Constant(Tensor(2.0f)).scalar<float>(), 2.0f);
  EXPECT_EQ(Identity(Tensor(2.0f)).scalar<float>(), 2.0f);
  EXPECT_THAT(ErrorOf<FailedPreconditionError>([] { Placeholder(DType::kFloat32, Shape{}, "p"); }),
              HasSubstr("graph-only"));
}

TEST(GraphTest, OnlyTheFetchedSubgraphRuns) {
  Graph graph;
  Graph::AsDefault in(graph);
  Tensor x = Placeholder(DType::kFloat32, Shape{}, "x");
  Tensor needs_feed = x * 2.0;
  Variable never(1.0f, "never");  // never initialized
  Tensor uses_never = never + 1.0;
  Tensor ok = Constant(Tensor(3.0f)) + 4.0f;
  Node unknown{.name = "mystery", .op = "FancyTfOnlyOp", .inputs = {"x"}};
  unknown.output_specs = {{Shape{}, DType::kFloat32}};
  const int mystery = graph.AddNode(unknown);
  Session sess(graph);
  // None of the failing nodes is needed for `ok`, so none runs.
  EXPECT_EQ(sess.Run(ok).scalar<float>(), 7.0f);
  // Fetching them fails, naming the node.
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { sess.Run(needs_feed); }),
              HasSubstr("placeholder tensor 'x:0'"));
  EXPECT_THAT(ErrorOf<FailedPreconditionError>([&] { sess.Run(uses_never); }),
              HasSubstr("Attempting to use uninitialized value never"));
  EXPECT_THAT(ErrorOf<UnimplementedError>([&] {
                sess.Run(graph.Output(mystery), {{x, Tensor(1.0f)}});
              }),
              HasSubstr("node 'mystery' has op type 'FancyTfOnlyOp'"));
  // A feed replaces its producer, which then does not run.
  EXPECT_EQ(sess.Run(uses_never, {{never.value(), Tensor(5.0f)}}).scalar<float>(), 6.0f);
}

TEST(GraphTest, ImportedNodesRunWithTheSameKernels) {
  // As ImportMetaGraph would add them: TF 1.x's "Add", nodes out of order.
  Graph graph;
  // Without output specs, as a NodeDef without "_output_shapes" comes.
  Node add{.name = "add", .op = "Add", .inputs = {"a", "b"}};
  add.attrs = {{"T", DType::kFloat32}};
  graph.AddNode(add);
  EXPECT_EQ(graph.TensorByName("add:0").dtype(), DType::kFloat32);
  EXPECT_TRUE(graph.TensorByName("add:0").shape().unknown_rank());
  EXPECT_EQ(graph.TensorByName("add:0").DebugString(),
            "Tensor(\"add:0\", shape=<unknown>, dtype=float32)");
  for (const char* name : {"a", "b"}) {
    Node c{.name = name, .op = "Const"};
    c.attrs = {{"dtype", DType::kFloat32},
               {"value", Tensor::Vector<float>({1, name[0] == 'a' ? 2.0f : 5.0f})}};
    c.output_specs = {{Shape{2}, DType::kFloat32}};
    graph.AddNode(c);
  }
  Node v{.name = "v", .op = "VariableV2"};
  v.attrs = {{"dtype", DType::kFloat32}, {"shape", Shape{2}}};
  v.output_specs = {{Shape{2}, DType::kFloat32}};
  graph.AddNode(v);
  Node assign{.name = "v/Assign", .op = "Assign", .inputs = {"v", "add"}};
  assign.attrs = {{"T", DType::kFloat32}};
  assign.output_specs = {{Shape{2}, DType::kFloat32}};
  graph.AddNode(assign);
  Session sess(graph);
  EXPECT_EQ(sess.Run(graph.TensorByName("add:0")).ToVector<float>(), (std::vector<float>{2, 7}));
  EXPECT_THAT(
      ErrorOf<FailedPreconditionError>([&] { sess.Run(graph.OperationByName("v/Assign")); }),
      HasSubstr("Graph::ImportVariable"));
  Variable& var = graph.ImportVariable({.variable_node = "v", .initializer = "v/Assign"});
  EXPECT_EQ(var.name(), "v:0");
  EXPECT_THAT(graph.GlobalVariables(), ElementsAre(&var));
  sess.Run(graph.OperationByName("v/Assign"));
  EXPECT_EQ(var.stored_value().ToVector<float>(), (std::vector<float>{2, 7}));
  EXPECT_EQ(sess.Run("v:0").ToVector<float>(), (std::vector<float>{2, 7}));
  // New ops on imported tensors of unknown rank.
  Graph::AsDefault in(graph);
  Tensor twice = graph.TensorByName("add:0") * 2.0;
  EXPECT_TRUE(twice.shape().unknown_rank());
  EXPECT_EQ(twice.dtype(), DType::kFloat32);
  EXPECT_EQ(sess.Run(twice).ToVector<float>(), (std::vector<float>{4, 14}));
  EXPECT_EQ(graph.FindNode("b")->output_specs[0].shape, Shape{2});  // from the Const's value
}

TEST(GraphTest, ASessionRunsNodesAddedAfterItsFirstRun) {
  // A Session keeps the node indices it resolves inputs to; an input that
  // names no node yet is an error for that Run only, not remembered.
  Graph graph;
  const auto add_const = [&](const char* name, float value) {
    Node c{.name = name, .op = "Const"};
    c.attrs = {{"dtype", DType::kFloat32}, {"value", Tensor(value)}};
    graph.AddNode(c);
  };
  add_const("a", 2.0f);
  Node add{.name = "add", .op = "AddV2", .inputs = {"a", "b"}};
  add.attrs = {{"T", DType::kFloat32}};
  graph.AddNode(add);
  Session sess(graph);
  EXPECT_EQ(sess.Run("a:0").scalar<float>(), 2.0f);
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { sess.Run("add:0"); }),
              HasSubstr("node 'add' (AddV2) has input 'b', but there is no node 'b'"));
  add_const("b", 5.0f);
  EXPECT_EQ(sess.Run("add:0").scalar<float>(), 7.0f);
  Node neg{.name = "neg", .op = "Neg", .inputs = {"add"}};
  neg.attrs = {{"T", DType::kFloat32}};
  graph.AddNode(neg);
  EXPECT_EQ(sess.Run("neg:0").scalar<float>(), -7.0f);
  EXPECT_EQ(sess.Run("add:0").scalar<float>(), 7.0f);
}

TEST(GraphTest, ImportedNodesMayOmitAttributesWithTfDefaults) {
  Graph graph;
  for (const char* name : {"a", "b"}) {
    Node c{.name = name, .op = "Const"};
    c.attrs = {{"dtype", DType::kFloat32}, {"value", Tensor::Matrix<float>({{1, 2}, {3, 4}})}};
    graph.AddNode(c);
  }
  Node mm{.name = "MatMul", .op = "MatMul", .inputs = {"a", "b"}};
  mm.attrs = {{"T", DType::kFloat32}};  // no transpose_a / transpose_b: TF's default false
  graph.AddNode(mm);
  Node axes{.name = "axes", .op = "Const"};
  axes.attrs = {{"dtype", DType::kInt32}, {"value", Tensor::Vector<int32_t>({1})}};
  graph.AddNode(axes);
  Node sum{.name = "Sum", .op = "Sum", .inputs = {"MatMul", "axes"}};
  sum.attrs = {{"T", DType::kFloat32}, {"Tidx", DType::kInt32}};  // no keep_dims
  graph.AddNode(sum);
  Session sess(graph);
  EXPECT_EQ(sess.Run("Sum:0").ToVector<float>(), (std::vector<float>{17, 37}));
}

TEST(GraphTest, DefaultOutputSpecsFollowNodeDefAttributes) {
  Node restore{.name = "save/RestoreV2", .op = "RestoreV2"};
  restore.attrs = {{"dtypes", std::vector<DType>{DType::kFloat32, DType::kInt64}}};
  SetDefaultOutputSpecs(restore);
  EXPECT_THAT(restore.output_specs, ElementsAre(OutputSpec{Shape::UnknownRank(), DType::kFloat32},
                                                OutputSpec{Shape::UnknownRank(), DType::kInt64}));
  Node eq{.name = "eq", .op = "Equal"};
  eq.attrs = {{"T", DType::kInt32}, {"_output_shapes", std::vector<Shape>{Shape{3}}}};
  SetDefaultOutputSpecs(eq);
  EXPECT_THAT(eq.output_specs, ElementsAre(OutputSpec{Shape{3}, DType::kBool}));
  Node ph{.name = "x", .op = "Placeholder"};
  ph.attrs = {{"dtype", DType::kFloat32}, {"shape", Shape::Partial({-1, 2})}};
  SetDefaultOutputSpecs(ph);
  EXPECT_EQ(ph.output_specs.at(0).shape.ToString(), "[?,2]");
  Node noop{.name = "init", .op = "NoOp", .inputs = {"^a"}};
  SetDefaultOutputSpecs(noop);
  EXPECT_TRUE(noop.output_specs.empty());
}

TEST(GraphTest, TensorsFromAnotherGraphAreRefused) {
  Graph g1, g2;
  Tensor t;
  {
    Graph::AsDefault in(g1);
    t = Constant(Tensor(1.0f));
  }
  Graph::AsDefault in(g2);
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { t + 1.0f; }),
              HasSubstr("'Const:0' belongs to another graph"));
  EXPECT_EQ(g2.num_nodes(), 0);
  Session sess(g2);
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { sess.Run(t); }), HasSubstr("another graph"));
}

TEST(GraphTest, VariablesAndGraphsMayDieInEitherOrder) {
  auto graph = std::make_unique<Graph>();
  auto early = std::make_unique<Graph::AsDefault>(*graph);
  auto v = std::make_unique<Variable>(1.0f, "v");
  auto w = std::make_unique<Variable>(2.0f, "w");
  early.reset();
  v.reset();  // unregisters
  EXPECT_THAT(graph->GlobalVariables(), ElementsAre(w.get()));
  EXPECT_EQ(graph->VariableForNode("v"), nullptr);
  graph.reset();  // w outlives its graph
  EXPECT_EQ(w->value().name(), "w/read:0");
  w->Assign(Tensor(3.0f));
  EXPECT_EQ(w->stored_value().scalar<float>(), 3.0f);
}

}  // namespace
}  // namespace eager

namespace eager {
namespace {

TEST(GraphLookupTest, ByNameWithDidYouMean) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable v1(1.0f, "v1"), v2(2.0f, "v2");
  Tensor sum = v1 + v2;
  Tensor sum2 = sum + v2;
  EXPECT_EQ(graph.TensorByName("add:0").name(), "add:0");
  EXPECT_EQ(graph.TensorByName("add_1:0").id(), sum2.id());  // the same symbolic tensor
  EXPECT_EQ(graph.OperationByName("v1/Assign").node().op, "Assign");
  EXPECT_EQ(graph.OperationOf(sum).name(), "add");

  EXPECT_THAT(ErrorOf<NotFoundError>([&] { graph.TensorByName("add_2:0"); }),
              HasSubstr("The name 'add_2:0' refers to a Tensor which does not exist. The "
                        "operation, 'add_2', does not exist in the graph. Did you mean "
                        "'add_1:0', 'add:0'"));
  EXPECT_THAT(ErrorOf<NotFoundError>([&] { graph.TensorByName("add:1"); }),
              HasSubstr("exists but only has 1 outputs"));
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { graph.TensorByName("add"); }),
              HasSubstr("looks like an (invalid) Operation name, not a Tensor"));
  EXPECT_THAT(ErrorOf<NotFoundError>([&] { graph.OperationByName("v1/asign"); }),
              HasSubstr("Did you mean 'v1/Assign'"));
  EXPECT_THAT(ErrorOf<NotFoundError>([] { Graph().OperationByName("x"); }),
              HasSubstr("The graph is empty"));
  Session sess(graph);
  EXPECT_THAT(ErrorOf<NotFoundError>([&] { sess.Run("ad:0"); }), HasSubstr("Did you mean 'add:0'"));
}

// Suggestions cost bounded work per node: a graph file of long names (the
// fuzzer's: thousands of nodes named by kilobytes) must not make a failed
// lookup quadratic in the name length; a name far from every node gets none.
TEST(GraphLookupTest, DidYouMeanOnLongNamesIsBoundedAndStillFindsTheTypo) {
  Graph graph;
  const std::string stem(4000, 'n');
  for (int i = 0; i < 500; ++i) graph.AddNode(Node{.name = StrCat(stem, "_", i), .op = "NoOp"});
  const std::string message =
      ErrorOf<NotFoundError>([&] { graph.OperationByName(StrCat(stem, "_x17")); });
  EXPECT_THAT(message, HasSubstr(StrCat("Did you mean '", stem, "_117', '", stem, "_17' or '")));
  EXPECT_THAT(ErrorOf<NotFoundError>([&] { graph.OperationByName(std::string(4000, 'q')); }),
              Not(HasSubstr("Did you mean")));
}

// A plain number in an operator becomes a Const named as TF's
// convert_to_tensor names it in the op's scope: "add/y", "sub/x".
TEST(GraphTest, PlainNumbersAreNamedByTheirInput) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable v(1.0f, "v");
  const Tensor sum = v.value() + 1.0;
  EXPECT_THAT(graph.FindNode("add")->inputs, ElementsAre("v/read", "add/y"));
  EXPECT_EQ(graph.FindNode("add/y")->op, "Const");
  const Tensor diff = 1.0 - v.value();
  EXPECT_THAT(graph.FindNode("sub")->inputs, ElementsAre("sub/x", "v/read"));
  {
    NameScope scope("outer");
    const Tensor twice = v.value() * 2.0;
    EXPECT_EQ(twice.name(), "outer/mul:0");
    EXPECT_THAT(graph.FindNode("outer/mul")->inputs, ElementsAre("v/read", "outer/mul/y"));
  }
  const Tensor again = v.value() + 1.0;
  EXPECT_THAT(graph.FindNode("add_1")->inputs, ElementsAre("v/read", "add_1/y"));
  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  EXPECT_EQ(sess.Run(sum).scalar<float>(), 2.0f);
  EXPECT_EQ(sess.Run(diff).scalar<float>(), 0.0f);
}

// Keras counts layer names per graph: each graph starts again at "dense".
TEST(GraphTest, KerasObjectNamesCountPerGraph) {
  ResetDefaultNames();
  EXPECT_EQ(UniqueObjectName("graph_test_layer"), "graph_test_layer");
  {
    Graph a;
    Graph::AsDefault in(a);
    EXPECT_EQ(UniqueObjectName("graph_test_layer"), "graph_test_layer");
    EXPECT_EQ(UniqueObjectName("graph_test_layer"), "graph_test_layer_1");
  }
  {
    Graph b;
    Graph::AsDefault in(b);
    EXPECT_EQ(UniqueObjectName("graph_test_layer"), "graph_test_layer");
  }
  // The process's (eager) counter went on by itself.
  EXPECT_EQ(UniqueObjectName("graph_test_layer"), "graph_test_layer_1");
}

}  // namespace
}  // namespace eager
