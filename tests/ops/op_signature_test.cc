// The one op table and the one signature table agree: every OpDef that can
// be in a graph has TF's signature (runtime/op_signature.h), with the same
// reference inputs and output count; every signature's op type runs; an
// imported node's outputs and its kernel's attribute defaults come from the
// signature.

#include "runtime/op_signature.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "ops/op_def.h"
#include "ops/session.h"
#include "runtime/graph.h"

namespace eager {
namespace {

TEST(OpSignatureTest, EveryOpThatCanBeInAGraphHasTfsSignature) {
  for (const OpDef* op : AllOps()) {
    if (op->eager_only) continue;  // never in a graph (ops/op_def.h)
    SCOPED_TRACE(std::string(op->type));
    const OpSignature* sig = FindOpSignature(op->type);
    ASSERT_NE(sig, nullptr) << op->type << " has no signature in runtime/op_signature.cc";
    for (size_t i = 0; i < sig->inputs.size(); ++i) {
      // A resource handle (DT_RESOURCE, 20) travels as a reference does
      // (ops/resource_variable_ops.h).
      const bool handle = sig->inputs[i].tf_type == 20;
      EXPECT_EQ(op->IsRefInput(i), sig->inputs[i].is_ref || handle)
          << "input " << sig->inputs[i].name;
    }
    EXPECT_FALSE(op->IsRefInput(sig->inputs.size()));
    if (op->compute == nullptr && op->num_outputs != OpDef::kVariadic) {
      EXPECT_EQ(static_cast<size_t>(op->num_outputs), sig->outputs.size());
    }
    // An op's kernel is stateless, a node kernel, or the Session's own (flow).
    EXPECT_EQ((op->compute != nullptr) + (op->run != nullptr) + (op->flow != OpDef::Flow::kNone),
              1);
  }
}

// The Session runs every op type the signature table describes, except the
// Saver's two, whose nodes a Saver runs itself (saving/saver/saver.h).
TEST(OpSignatureTest, EverySignatureResolvesToAnOpDef) {
  const std::set<std::string_view> saver_ops = {"SaveV2", "RestoreV2"};
  const std::vector<std::string_view> types = OpSignatureTypes();
  const auto eager_only = static_cast<size_t>(std::count_if(
      AllOps().begin(), AllOps().end(), [](const OpDef* op) { return op->eager_only; }));
  EXPECT_GE(types.size(), AllOps().size() - eager_only);  // _FusedMatMul, _UnpackOutput, ...
  for (std::string_view type : types) {
    if (saver_ops.contains(type)) continue;
    EXPECT_NE(FindOp(type), nullptr) << type << " has a signature but no OpDef";
  }
  for (std::string_view type : saver_ops) EXPECT_NE(FindOpSignature(type), nullptr) << type;
}

TEST(OpSignatureTest, DefaultsAreTfs) {
  const OpSignature* conv = FindOpSignature("Conv2D");
  ASSERT_NE(conv, nullptr);
  Attrs attrs = {{"padding", std::string("SAME")}, {"data_format", std::string("NCHW")}};
  SetAttrDefaults(*conv, attrs);
  EXPECT_EQ(attrs.GetString("data_format"), "NCHW");  // set: kept
  EXPECT_EQ(attrs.GetInts("dilations"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_TRUE(attrs.GetBool("use_cudnn_on_gpu"));
  EXPECT_EQ(attrs.GetInts("explicit_paddings"), std::vector<int64_t>{});
  EXPECT_FALSE(attrs.Has("T"));  // no default
  const OpSignature* argmax = FindOpSignature("ArgMax");
  ASSERT_NE(argmax, nullptr);
  Attrs a;
  SetAttrDefaults(*argmax, a);
  EXPECT_EQ(a.GetType("output_type"), DType::kInt64);
  EXPECT_EQ(a.GetType("Tidx"), DType::kInt32);
  const OpSignature* placeholder = FindOpSignature("Placeholder");
  ASSERT_NE(placeholder, nullptr);
  Attrs p;
  SetAttrDefaults(*placeholder, p);
  EXPECT_TRUE(p.GetShape("shape").unknown_rank());
}

TEST(OpSignatureTest, OutputDTypesFollowTheSignature) {
  const auto dtypes = [](std::string_view type, const Attrs& attrs) {
    const OpSignature* sig = FindOpSignature(type);
    EXPECT_NE(sig, nullptr) << type;
    return sig == nullptr ? std::nullopt : OutputDTypes(*sig, attrs);
  };
  EXPECT_EQ(dtypes("Equal", {{"T", DType::kInt32}}), std::vector<DType>{DType::kBool});
  EXPECT_EQ(dtypes("Merge", {{"T", DType::kFloat64}, {"N", int64_t{2}}}),
            (std::vector<DType>{DType::kFloat64, DType::kInt32}));
  EXPECT_EQ(dtypes("RefSwitch", {{"T", DType::kFloat32}}),
            (std::vector<DType>{DType::kFloat32, DType::kFloat32}));
  EXPECT_EQ(dtypes("RestoreV2", {{"dtypes", std::vector<DType>{DType::kInt64, DType::kFloat32}}}),
            (std::vector<DType>{DType::kInt64, DType::kFloat32}));
  EXPECT_EQ(dtypes("NoOp", {}), std::vector<DType>{});
  EXPECT_EQ(dtypes("Cast", {{"SrcT", DType::kInt32}}), std::nullopt);  // DstT missing
}

// A node added without output specs (as an importer adds a NodeDef) gets
// them from its signature; one of a type with no signature, by its attributes.
TEST(OpSignatureTest, GraphDerivesAnImportedNodesOutputsFromItsSignature) {
  Graph graph;
  Node merge{.name = "merge", .op = "Merge", .inputs = {"a", "b"}};
  merge.attrs = {{"T", DType::kFloat32}, {"N", int64_t{2}}};
  const Node& m = graph.node(graph.AddNode(merge));
  EXPECT_EQ(m.output_specs, (std::vector<OutputSpec>{{Shape::UnknownRank(), DType::kFloat32},
                                                     {Shape::UnknownRank(), DType::kInt32}}));

  Node adam{.name = "adam", .op = "ApplyAdam"};
  adam.attrs = {{"T", DType::kFloat64}, {"_output_shapes", std::vector<Shape>{Shape{3}}}};
  const Node& a = graph.node(graph.AddNode(adam));
  EXPECT_EQ(a.output_specs, (std::vector<OutputSpec>{{Shape{3}, DType::kFloat64}}));

  Node erf{.name = "erf", .op = "Erf"};  // not in eager's table
  erf.attrs = {{"T", DType::kFloat32}};
  const Node& r = graph.node(graph.AddNode(erf));
  EXPECT_EQ(r.output_specs, (std::vector<OutputSpec>{{Shape::UnknownRank(), DType::kFloat32}}));
}

// A NodeDef written with stripped_default_attrs omits attributes at their
// defaults; the kernel still gets them (Conv2D's data_format, dilations).
TEST(OpSignatureTest, SessionFillsTheSignaturesDefaultsBeforeTheKernelRuns) {
  Graph graph;
  Node x{.name = "x", .op = "Const"};
  x.attrs = {{"dtype", DType::kFloat32}, {"value", Tensor::Zeros(Shape{1, 3, 3, 1})}};
  graph.AddNode(x);
  Node f{.name = "f", .op = "Const"};
  f.attrs = {{"dtype", DType::kFloat32}, {"value", Tensor::Zeros(Shape{2, 2, 1, 4})}};
  graph.AddNode(f);
  Node conv{.name = "conv", .op = "Conv2D", .inputs = {"x", "f"}};
  conv.attrs = {{"T", DType::kFloat32},
                {"strides", std::vector<int64_t>{1, 1, 1, 1}},
                {"padding", std::string("VALID")}};
  graph.AddNode(conv);
  Session sess(graph);
  const Tensor out = sess.Run("conv:0");
  EXPECT_EQ(out.shape(), (Shape{1, 2, 2, 4}));
  // Running it again uses what the Session resolved the first time.
  EXPECT_EQ(sess.Run("conv:0").shape(), (Shape{1, 2, 2, 4}));
}

}  // namespace
}  // namespace eager
