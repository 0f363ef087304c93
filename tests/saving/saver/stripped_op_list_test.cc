// The stripped op list of the .meta files we write: every op type our graphs
// can contain has TF's OpDef in it (not a bare name), and every node we write
// is valid against that OpDef, as TF's importer checks it: no attribute the
// OpDef lacks, every attribute without a default present, allowed values
// respected, and as many data inputs as the OpDef's arguments take.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "autodiff/adam.h"
#include "ops/activation_ops.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/conv_ops.h"
#include "ops/cumulative_ops.h"
#include "ops/depthwise_conv.h"
#include "ops/execute.h"
#include "ops/gradient_helper_ops.h"
#include "ops/graph_ops.h"
#include "ops/index_ops.h"
#include "ops/matmul.h"
#include "ops/nn_ops.h"
#include "ops/op_def.h"
#include "ops/pooling_ops.h"
#include "ops/random_generator.h"
#include "ops/random_ops.h"
#include "ops/reduction_ops.h"
#include "ops/reverse_ops.h"
#include "ops/session.h"
#include "ops/shape_ops.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "saving/saver/internal/tf_op_defs.h"
#include "saving/saver/meta_graph_def.h"
#include "saving/saver/saver.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::TempDir;
using internal::FindTfOpDef;

const MetaAttrDef* FindAttrDef(const MetaOpDef& op, std::string_view name) {
  auto it = std::find_if(op.attrs.begin(), op.attrs.end(),
                         [&](const MetaAttrDef& a) { return a.name == name; });
  return it == op.attrs.end() ? nullptr : &*it;
}

// Every op eager runs has TF's OpDef, whose arguments are the op's tensor
// inputs followed by the attributes TF passes as inputs, by TF's names, and
// whose attributes include the type attributes eager writes.
TEST(StrippedOpListTest, EveryOpInAllOpsHasTfsOpDef) {
  for (const OpDef* op : AllOps()) {
    if (op->eager_only) continue;  // never in a graph (ops/op_def.h)
    SCOPED_TRACE(std::string(op->type));
    const MetaOpDef* tf = FindTfOpDef(op->type);
    ASSERT_NE(tf, nullptr) << op->type << " has no OpDef in runtime/op_signature.cc";
    if (op->compute == nullptr) {  // graph-only: TF's arguments, no Attrs of ours to match
      // A variadic one (a function call's outputs) has one list argument.
      EXPECT_EQ(tf->outputs.size(), op->num_outputs == OpDef::kVariadic
                                        ? size_t{1}
                                        : static_cast<size_t>(op->num_outputs));
      continue;
    }
    if (op->num_inputs == OpDef::kVariadic) {
      // Lists before the input attrs: one ("values: N * T"), or several of
      // one length (DynamicStitch's "indices: N * int32", "data: N * T").
      ASSERT_GT(tf->inputs.size(), op->input_attrs.size());
      for (size_t i = 0; i < tf->inputs.size() - op->input_attrs.size(); ++i) {
        EXPECT_FALSE(tf->inputs[i].number_attr.empty()) << tf->inputs[i].name;
      }
    } else {
      EXPECT_EQ(tf->inputs.size(), static_cast<size_t>(op->num_inputs) + op->input_attrs.size());
    }
    const size_t first_attr_input = tf->inputs.size() - op->input_attrs.size();
    for (size_t i = 0; i < op->input_attrs.size(); ++i) {
      EXPECT_EQ(tf->inputs[first_attr_input + i].name, op->input_attrs[i].input);
    }
    for (const TypeAttr& t : op->type_attrs) {
      if (t.name.empty()) continue;  // no type attrs (LogicalAnd)
      EXPECT_NE(FindAttrDef(*tf, t.name), nullptr) << t.name;
    }
    if (op->type_attrs.empty()) {
      EXPECT_NE(FindAttrDef(*tf, "T"), nullptr);
    }
  }
  // Graph-only nodes a Session runs or a graph of ours holds.
  for (const char* type :
       {"Const", "Placeholder", "PlaceholderWithDefault", "VariableV2", "Assign", "AssignAdd",
        "AssignSub", "ApplyAdam", "NoOp", "SaveV2", "RestoreV2", "Switch", "Merge"}) {
    EXPECT_NE(FindTfOpDef(type), nullptr) << type;
  }
}

// How many data inputs `node` must have by `op`'s arguments.
size_t ExpectedInputs(const MetaGraphNode& node, const MetaOpDef& op) {
  size_t n = 0;
  for (const MetaArgDef& arg : op.inputs) {
    if (!arg.number_attr.empty()) {
      n += static_cast<size_t>(std::get<int64_t>(node.attrs.at(arg.number_attr)));
    } else if (!arg.type_list_attr.empty()) {
      n += std::get<MetaListBox>(node.attrs.at(arg.type_list_attr))->type.size();
    } else {
      ++n;
    }
  }
  return n;
}

// TF's checks on importing `node` (ValidateNodeDef, ValidateAttrValue).
void ExpectValidAgainst(const MetaGraphNode& node, const MetaOpDef& op) {
  SCOPED_TRACE("node '" + node.name + "' (" + node.op + ")");
  for (const auto& [name, value] : node.attrs) {
    if (name.starts_with("_")) continue;  // TF's internal attrs (_class, _output_shapes)
    const MetaAttrDef* def = FindAttrDef(op, name);
    if (def == nullptr) {
      ADD_FAILURE() << "attribute '" << name << "' is not in the OpDef";
      continue;
    }
    if (!def->allowed_values) continue;
    const MetaAttrList& allowed = *std::get<MetaListBox>(*def->allowed_values);
    if (const auto* type = std::get_if<MetaType>(&value)) {
      EXPECT_THAT(allowed.type, ::testing::Contains(type->tf_dtype)) << name;
    } else if (const auto* s = std::get_if<std::string>(&value)) {
      EXPECT_THAT(allowed.s, ::testing::Contains(*s)) << name;
    }
  }
  for (const MetaAttrDef& def : op.attrs) {
    if (!def.default_value) {
      EXPECT_TRUE(node.attrs.contains(def.name)) << "attribute '" << def.name << "' is missing";
    }
  }
  size_t data_inputs = 0;
  for (const std::string& in : node.inputs) data_inputs += !in.starts_with("^");
  EXPECT_EQ(data_inputs, ExpectedInputs(node, op));
  // TF's importer rejects a node whose "_output_shapes" does not list one
  // shape per output ("Node ... has 2 outputs but the _output_shapes
  // attribute specifies shapes for 1 outputs"), e.g. the backprop output of
  // SparseSoftmaxCrossEntropyWithLogits, which eager does not compute.
  const bool fixed_outputs = std::none_of(op.outputs.begin(), op.outputs.end(), [](const auto& a) {
    return !a.number_attr.empty() || !a.type_list_attr.empty();
  });
  const auto shapes = node.attrs.find("_output_shapes");
  if (fixed_outputs && shapes != node.attrs.end()) {
    EXPECT_EQ(std::get<MetaListBox>(shapes->second)->shape.size(), op.outputs.size())
        << "_output_shapes";
  }
}

// A model touching every op eager has, trained by TF1 Adam and saved.
std::string SaveGraphUsingEveryOp(const std::string& dir) {
  Graph graph;
  Graph::AsDefault in(graph);
  const auto uniform = [](const Shape& shape, uint64_t seed) {
    return RandomUniform(shape, seed, -0.5, 0.5, DType::kFloat32);
  };
  Variable k1(uniform(Shape{3, 3, 1, 2}, 1), "conv1/kernel");
  Variable bias1(uniform(Shape{2}, 2), "conv1/bias");
  Variable k2(uniform(Shape{3, 3, 2, 2}, 3), "conv2/kernel");
  Variable w(uniform(Shape{18, 3}, 4), "dense/kernel");
  Variable b(uniform(Shape{3}, 5), "dense/bias");
  Variable kd(uniform(Shape{3, 3, 2, 1}, 6), "depthwise/kernel");
  const Tensor x = Placeholder(DType::kFloat32, Shape{4, 6, 6, 1}, "x");
  const Tensor labels = Placeholder(DType::kInt32, Shape{4}, "labels");

  // conv1 -> conv2 (so Conv2DBackpropInput is on the way back) -> pool -> dense.
  const Tensor h1 = Relu(BiasAdd(Conv2D(x, k1.value(), {.padding = "SAME"}), bias1.value()));
  const Tensor h2 = MaxPool(Conv2D(h1, k2.value(), {.padding = "SAME"}));
  const Tensor logits = Add(MatMul(Reshape(h2, {4, 18}), w.value()), b.value());

  const Tensor one = Constant(Tensor(1.0f));
  std::vector<Tensor> terms = {
      // A depthwise branch and average pooling (their gradients bring the
      // backprop ops and AvgPoolGrad).
      ReduceSum(AvgPool(DepthwiseConv2dNative(h1, kd.value(), {.padding = "SAME"}))),
      ReduceSum(SparseSoftmaxCrossEntropyWithLogits(labels, logits)),
      ReduceMean(Mul(LogSoftmax(logits), OneHot(labels, 3))),
      ReduceMax(Softmax(logits), {1}),
      ReduceMin(Softmax(logits), {1}),
      ReduceProd(Sigmoid(logits), {1}),
      ReduceSum(Pow(Sigmoid(logits), Constant(Tensor(2.0f)))),
      ReduceSum(Div(Tanh(logits), Sqrt(Add(Square(logits), one)))),
      ReduceSum(Maximum(logits, Minimum(Exp(Neg(logits)), Log(Add(Square(logits), one))))),
      ReduceSum(Transpose(Concat({logits, Slice(logits, {0, 0}, {4, 2})}, 1))),
      ReduceSum(Gather(logits, Constant(Tensor::Vector<int32_t>({3, 1})))),
      ReduceSum(UnsortedSegmentSum(logits, Constant(Tensor::Vector<int32_t>({0, 1, 0, 1})), 2)),
      ReduceSum(Mul(BroadcastTo(b.value(), Shape{4, 3}), StopGradient(Identity(logits)))),
      ReduceSum(Cast(Cast(logits, DType::kFloat64), DType::kFloat32)),
      // Cumprod also comes from ReduceProd's gradient (TF's _ProdGrad).
      ReduceSum(Cumsum(Cumprod(logits, 1, true), 0, false, true)),
      ReduceSum(Mul(Squeeze(Elu(ReduceMean(logits, {0}, true))),
                    Rsqrt(Add(SquaredDifference(logits, b.value()), one)))),
      // Dropout's ops (TF 2.x's SelectV2 form; Floor from TF <= 1.13's).
      ReduceSum(SelectV2(GreaterEqual(RandomUniformNode(ShapeOf(logits), DType::kFloat32, 1, 2),
                                      Constant(Tensor(0.3f))),
                         Mul(logits, Floor(Add(logits, one))), Constant(Tensor(0.0f)))),
      // Ops of TF 2.21's graphs of common layers (issue 39); their gradients
      // bring Sign, Relu6Grad, LeakyReluGrad, StridedSliceGrad.
      ReduceSum(BatchMatMulV2(ExpandDims(logits, 0), Tile(ExpandDims(logits, 0), {2, 1, 1}), false,
                              true)),
      ReduceSum(AddN({Abs(logits), Relu6(logits), LeakyRelu(logits, 0.3),
                      FloorMod(logits, Constant(Tensor(0.7f)))})),
      ReduceSum(StridedSlice(Tile(PadV2(Pad(Pack({ExpandDims(logits, 0), ExpandDims(logits, 0)}, 1),
                                            {{0, 0}, {1, 0}, {0, 1}, {0, 0}}),
                                        {{0, 0}, {0, 0}, {0, 0}, {1, 1}}, Constant(Tensor(0.5f))),
                                  {1, 1, 2, 1}),
                             {0, 0, -1, 1}, {1, 3, -5, 4}, {1, 1, -1, 2}, {.shrink_axis = 1})),
      // Smooth activations (their gradients bring SeluGrad, SoftplusGrad,
      // SoftsignGrad), TF's SigmoidGrad/TanhGrad and TF1's Select.
      ReduceSum(AddN({Selu(logits), Softplus(logits), Softsign(logits), Erf(logits),
                      SigmoidGrad(Sigmoid(logits), logits), TanhGrad(Tanh(logits), logits),
                      Select(Greater(logits, one), logits, Neg(logits))})),
      // Einsum and DynamicStitch, with eager's graph gradients of them
      // (Einsum's is Einsums; DynamicStitch's is GatherV2).
      ReduceSum(Einsum("ij,kj->ik", {logits, Tanh(logits)})),
      ReduceSum(DynamicStitch(
          {Constant(Tensor::Vector<int32_t>({1, 0})), Constant(Tensor(2))},
          {Slice(logits, {0, 0}, {2, 3}), Reshape(Slice(logits, {2, 0}, {1, 3}), {3})})),
      ReduceSum(ParallelDynamicStitch({Constant(Tensor::Vector<int32_t>({0, 1}))},
                                      {Slice(logits, {1, 0}, {2, 3})})),
      // Ops of TF's own TF1 graphs (issue 39's op-coverage report);
      // Reciprocal's gradient brings ReciprocalGrad.
      ReduceSum(AddN({Reciprocal(Add(Square(logits), one)), Log1p(Square(logits)),
                      DivNoNan(logits, Add(Square(logits), one))})),
      L2Loss(logits),
      ReduceSum(Execute(kLegacyGatherOp, {logits, Constant(Tensor::Vector<int32_t>({2, 2}))})),
  };
  // Off the gradient's way: comparisons, logical ops, Fill, Range, *Like.
  (void)LogicalOr(LogicalAnd(Greater(logits, one), LogicalNot(Less(logits, one))),
                  NotEqual(LessEqual(logits, one), Constant(Tensor(true))));
  (void)Execute(kFillOp, {Constant(Tensor::Vector<int32_t>({2, 3})), one});
  (void)Execute(kZerosLikeOp, {FloorDiv(logits, one)});
  (void)Execute(kOnesLikeOp, {logits});
  (void)Range(Constant(Tensor(0)), Constant(Tensor(5)), Constant(Tensor(2)));
  (void)ReduceAll(Greater(logits, one), {1});
  (void)ReduceAny(Greater(logits, one), {0});
  Tensor loss = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) loss = Sub(loss, terms[i]);
  // Off the gradient's way: accuracy.
  const Tensor correct = Equal(Cast(ArgMax(logits, 1), DType::kInt32), labels);
  (void)ReduceMean(Cast(correct, DType::kFloat32));
  (void)ShapeOf(logits);
  // Off the gradient's way: Size, ScatterNd (TF's gradient graph of TopKV2), GatherNd.
  (void)Size(logits);
  (void)BiasAddGrad(logits);
  (void)InvertPermutation(Constant(Tensor::Vector<int32_t>({1, 0})));
  (void)Rank(logits);
  (void)Reverse(logits, {1});
  (void)PreventGradient(logits, "not differentiated");
  (void)GatherNd(logits, Constant(Tensor::FromVector<int32_t>({1, 0}, Shape{1, 2})));
  (void)ScatterNd(Constant(Tensor::FromVector<int32_t>({1, 0}, Shape{2, 1})),
                  Constant(Tensor::FromVector<float>({1, 2, 3, 4}, Shape{2, 2})),
                  Constant(Tensor::Vector<int32_t>({3, 2})));

  AdamOptions options;
  options.tf1_compatible = true;
  Adam adam(options);
  (void)adam.Minimize(loss, {&k1, &bias1, &k2, &w, &b, &kd});
  Saver saver;
  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  return saver.Save(sess, dir + "/model.ckpt");
}

TEST(StrippedOpListTest, EveryNodeWeWriteIsValidAgainstTfsOpDefInTheFile) {
  const std::string prefix = SaveGraphUsingEveryOp(TempDir());
  const MetaGraph meta = ReadMetaGraph(prefix + ".meta");

  std::map<std::string, const MetaOpDef*> written;
  for (const MetaOpDef& op : meta.stripped_op_list) written[op.name] = &op;
  std::set<std::string> types;
  for (const MetaGraphNode& node : meta.nodes) {
    types.insert(node.op);
    auto it = written.find(node.op);
    ASSERT_NE(it, written.end()) << node.op << " is not in the stripped op list";
    const MetaOpDef& op = *it->second;
    // TF's definition, not a bare name.
    ASSERT_NE(FindTfOpDef(node.op), nullptr) << node.op;
    EXPECT_EQ(op.attrs.size(), FindTfOpDef(node.op)->attrs.size()) << node.op;
    EXPECT_EQ(op.inputs.size(), FindTfOpDef(node.op)->inputs.size()) << node.op;
    ExpectValidAgainst(node, op);
  }
  EXPECT_EQ(types.size(), written.size());  // nothing listed that no node uses
  for (const OpDef* op : AllOps()) {
    if (op->eager_only || op->compute == nullptr) continue;  // graph-only ones: listed below
    EXPECT_TRUE(types.contains(std::string(op->type))) << op->type << " is not in the test graph";
  }
  for (const char* type : {"ApplyAdam", "Assign", "Const", "NoOp", "Placeholder", "RandomUniform",
                           "RestoreV2", "SaveV2", "VariableV2"}) {
    EXPECT_TRUE(types.contains(type)) << type;
  }
}

// The independent decoder lists the same op list.
TEST(StrippedOpListTest, TfckptListsTheOpTypes) {
  EAGER_SKIP_WITHOUT_TFCKPT();
  const std::string dir = TempDir();
  const std::string prefix = SaveGraphUsingEveryOp(dir);
  std::string out;
  ASSERT_EQ(testing::RunTfckpt("meta '" + prefix + ".meta'", dir + "/log", &out), 0) << out;
  for (const char* type : {"ApplyAdam", "Conv2D", "Conv2DBackpropFilter", "Conv2DBackpropInput",
                           "MaxPool", "MaxPoolGrad", "ReluGrad"}) {
    EXPECT_THAT(out, ::testing::HasSubstr(std::string(" ") + type + ",")) << type;
  }
}

}  // namespace
}  // namespace eager
