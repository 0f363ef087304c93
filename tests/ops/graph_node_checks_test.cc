// Imported graphs compute what TF computes or are refused (issue 27): the
// attributes TF defines for GatherV2 and OneHot are computed; the attribute
// values TF rejects are rejected naming the attribute; sizes from a graph
// never overflow and a tensor too big to make is ResourceExhaustedError
// naming the op, the node and the shape, never std::bad_alloc.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ops/array_ops.h"
#include "ops/internal/graph_builder.h"
#include "ops/internal/node_check.h"
#include "ops/op_def.h"
#include "ops/session.h"
#include "runtime/errors.h"
#include "runtime/graph.h"

namespace eager {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// Adds node `name` of type `op` on `inputs` with `attrs`, its output specs
// derived as an importer derives them.
void AddNode(Graph& graph, const std::string& name, const std::string& op,
             std::vector<std::string> inputs, Attrs attrs) {
  Node node{.name = name, .op = op, .inputs = std::move(inputs)};
  node.attrs = std::move(attrs);
  SetDefaultOutputSpecs(node);
  graph.AddNode(std::move(node));
}

std::string Const(Graph& graph, const std::string& name, const Tensor& value) {
  Node node{.name = name, .op = "Const"};
  node.attrs = {{"dtype", value.dtype()}, {"value", value}};
  node.output_specs = {{value.shape(), value.dtype()}};
  graph.AddNode(std::move(node));
  return name;
}

// The message of the error `run` throws as kind E; fails when it throws none.
template <typename E, typename F>
std::string ErrorOf(F&& run) {
  try {
    run();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error of the expected kind";
  return "";
}

Tensor Iota(const Shape& shape, float start = 0) {
  std::vector<float> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return Tensor::FromVector<float>(std::move(v), shape);
}

Attrs GatherAttrs(int64_t batch_dims) {
  return {{"Tparams", DType::kFloat32},
          {"Tindices", DType::kInt32},
          {"Taxis", DType::kInt32},
          {"batch_dims", batch_dims}};
}

TEST(GraphNodeChecksTest, GatherV2GathersAlongItsAxisAsTfDocumentsIt) {
  // The example: index 2 along axis 1 of a 3x3 tensor.
  Graph graph;
  Const(graph, "p", Iota(Shape{3, 3}));
  Const(graph, "i", Tensor::Vector<int32_t>({2}));
  Const(graph, "axis", Tensor::Scalar<int32_t>(1));
  AddNode(graph, "g", "GatherV2", {"p", "i", "axis"}, GatherAttrs(0));
  Const(graph, "axis_neg", Tensor::Scalar<int32_t>(-1));
  AddNode(graph, "g_neg", "GatherV2", {"p", "i", "axis_neg"}, GatherAttrs(0));
  Session sess(graph);
  const Tensor g = sess.Run("g:0");
  EXPECT_EQ(g.shape(), (Shape{3, 1}));
  EXPECT_EQ(g.ToVector<float>(), (std::vector<float>{2, 5, 8}));
  EXPECT_EQ(sess.Run("g_neg:0").ToVector<float>(), (std::vector<float>{2, 5, 8}));
}

TEST(GraphNodeChecksTest, GatherV2WithBatchDimsGathersWithinEachBatch) {
  // params [2, 3, 4], indices [2, 5], axis 2, batch_dims 1:
  // out[b, r, j] = params[b, r, indices[b, j]], shape [2, 3, 5].
  const Tensor params = Iota(Shape{2, 3, 4});
  const std::vector<int32_t> idx = {3, 0, 1, 1, 2, 0, 0, 3, 2, 1};
  Graph graph;
  Const(graph, "p", params);
  Const(graph, "i", Tensor::FromVector<int32_t>(idx, Shape{2, 5}));
  Const(graph, "axis", Tensor::Scalar<int32_t>(2));
  AddNode(graph, "g", "GatherV2", {"p", "i", "axis"}, GatherAttrs(1));
  const Tensor g = Session(graph).Run("g:0");
  ASSERT_EQ(g.shape(), (Shape{2, 3, 5}));
  std::vector<float> want;
  for (int b = 0; b < 2; ++b) {
    for (int r = 0; r < 3; ++r) {
      for (int j = 0; j < 5; ++j)
        want.push_back(static_cast<float>(b * 12 + r * 4 + idx[b * 5 + j]));
    }
  }
  EXPECT_EQ(g.ToVector<float>(), want);
}

TEST(GraphNodeChecksTest, GatherV2RefusesAxesAndBatchDimsTfRefuses) {
  const auto run = [](int32_t axis, int64_t batch_dims, Shape indices_shape) {
    Graph graph;
    Const(graph, "p", Iota(Shape{2, 3}));
    Const(graph, "i", Tensor::Zeros(indices_shape, DType::kInt32));
    Const(graph, "axis", Tensor::Scalar<int32_t>(axis));
    AddNode(graph, "g", "GatherV2", {"p", "i", "axis"}, GatherAttrs(batch_dims));
    Session(graph).Run("g:0");
  };
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { run(2, 0, Shape{1}); }),
              AllOf(HasSubstr("Expected axis in the range [-2, 2), but got 2"),
                    HasSubstr("[[{{node g}}]]")));
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { run(-3, 0, Shape{1}); }),
              HasSubstr("but got -3"));
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] {
                run(1, 2, Shape{2, 1});
              }),
              HasSubstr("batch_dims (2) must be less than rank(params) (2)"));
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] {
                run(0, 1, Shape{2, 1});
              }),
              HasSubstr("must be less than or equal to axis"));
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] {
                run(1, 1, Shape{3, 1});
              }),
              HasSubstr("params.shape[0]: 2 should be equal to indices.shape[0]: 3"));
}

Attrs OneHotAttrs(int64_t axis) {
  return {{"T", DType::kFloat32}, {"TI", DType::kInt32}, {"axis", axis}};
}

Tensor RunOneHot(const Tensor& indices, int64_t axis) {
  Graph graph;
  Const(graph, "i", indices);
  Const(graph, "depth", Tensor::Scalar<int32_t>(3));
  Const(graph, "on", Tensor::Scalar<float>(5));
  Const(graph, "off", Tensor::Scalar<float>(-1));
  AddNode(graph, "h", "OneHot", {"i", "depth", "on", "off"}, OneHotAttrs(axis));
  return Session(graph).Run("h:0");
}

TEST(GraphNodeChecksTest, OneHotPutsTheDepthDimensionAtItsAxis) {
  // TF's documented example: indices [0, 2, -1, 1], depth 3, on 5, off -1
  // (off 0 in the docs), axis -1: one row per index.
  const Tensor indices = Tensor::Vector<int32_t>({0, 2, -1, 1});
  const Tensor last = RunOneHot(indices, -1);
  EXPECT_EQ(last.shape(), (Shape{4, 3}));
  EXPECT_EQ(last.ToVector<float>(),
            (std::vector<float>{5, -1, -1, -1, -1, 5, -1, -1, -1, -1, 5, -1}));
  // axis 0: the same, transposed ([depth, 4]).
  const Tensor first = RunOneHot(indices, 0);
  EXPECT_EQ(first.shape(), (Shape{3, 4}));
  EXPECT_EQ(first.ToVector<float>(), Transpose(last, {1, 0}).ToVector<float>());
  // Indices [2, 2], axis 1: out[a, d, b] = indices[a, b] == d.
  const Tensor middle = RunOneHot(Tensor::FromVector<int32_t>({0, 2, 1, 7}, Shape{2, 2}), 1);
  EXPECT_EQ(middle.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(middle.ToVector<float>(),
            (std::vector<float>{5, -1, -1, -1, -1, 5, -1, -1, 5, -1, -1, -1}));
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { RunOneHot(indices, 2); }),
              HasSubstr("Expected axis to be -1 or between [0, 1].  But received: 2"));
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { RunOneHot(indices, -2); }),
              HasSubstr("But received: -2"));
}

TEST(GraphNodeChecksTest, ConstWhoseDtypeDiffersFromItsValueIsRefused) {
  Graph graph;
  Node node{.name = "c", .op = "Const"};
  node.attrs = {{"dtype", DType::kInt32}, {"value", Tensor(1.5f)}};
  node.output_specs = {{Shape{}, DType::kInt32}};
  graph.AddNode(std::move(node));
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { Session(graph).Run("c:0"); }),
              AllOf(HasSubstr("node 'c' (Const)"), HasSubstr("'dtype' is int32"),
                    HasSubstr("'value' is a float")));
}

TEST(GraphNodeChecksTest, ConcatV2WhoseNDisagreesWithItsInputsIsRefused) {
  Graph graph;
  Const(graph, "a", Iota(Shape{2}));
  Const(graph, "axis", Tensor::Scalar<int32_t>(0));
  AddNode(graph, "c", "ConcatV2", {"a", "a", "axis"},
          {{"N", int64_t{3}}, {"T", DType::kFloat32}, {"Tidx", DType::kInt32}});
  EXPECT_THAT(
      ErrorOf<InvalidArgumentError>([&] { Session(graph).Run("c:0"); }),
      AllOf(HasSubstr("node 'c' (ConcatV2) has 3 data inputs"), HasSubstr("takes 4 (N = 3)")));
  Graph one;
  Const(one, "a", Iota(Shape{2}));
  Const(one, "axis", Tensor::Scalar<int32_t>(0));
  AddNode(one, "c", "ConcatV2", {"a", "axis"},
          {{"N", int64_t{1}}, {"T", DType::kFloat32}, {"Tidx", DType::kInt32}});
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { Session(one).Run("c:0"); }),
              HasSubstr("attr 'N' of 1 must be at least minimum 2"));
}

TEST(GraphNodeChecksTest, AttributeValuesOutsideTheSignatureAreRefusedByName) {
  Graph graph;
  Const(graph, "a", Iota(Shape{2, 2}));
  Const(graph, "b", Tensor::FromVector<bool>({true, false, true, false}, Shape{2, 2}));
  AddNode(graph, "bad_type", "MatMul", {"b", "b"}, {{"T", DType::kBool}});
  AddNode(graph, "unknown", "MatMul", {"a", "a"}, {{"T", DType::kFloat32}, {"fast", true}});
  AddNode(graph, "internal", "MatMul", {"a", "a"},
          {{"T", DType::kFloat32}, {"_class", std::vector<std::string>{"loc:@a"}}});
  AddNode(graph, "hint", "MatMul", {"a", "a"}, {{"T", DType::kFloat32}, {"grad_a", true}});
  AddNode(graph, "eq", "Equal", {"a", "a"},
          {{"T", DType::kFloat32}, {"incompatible_shape_error", false}});
  AddNode(graph, "cast", "Cast", {"a"},
          {{"SrcT", DType::kFloat32}, {"DstT", DType::kHalf}, {"Truncate", true}});
  AddNode(graph, "wrong_kind", "MatMul", {"a", "a"},
          {{"T", DType::kFloat32}, {"transpose_a", int64_t{1}}});
  Session sess(graph);
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { sess.Run("bad_type:0"); }),
              AllOf(HasSubstr("value for attr 'T' of bool is not in the list of allowed"),
                    HasSubstr("DT_FLOAT")));
  EXPECT_THAT(ErrorOf<UnimplementedError>([&] { sess.Run("unknown:0"); }),
              HasSubstr("has attribute 'fast'"));
  EXPECT_EQ(sess.Run("internal:0").ToVector<float>(), (std::vector<float>{2, 3, 6, 11}));
  EXPECT_EQ(sess.Run("hint:0").ToVector<float>(), (std::vector<float>{2, 3, 6, 11}));
  EXPECT_THAT(ErrorOf<UnimplementedError>([&] { sess.Run("eq:0"); }),
              HasSubstr("'incompatible_shape_error'"));
  EXPECT_THAT(ErrorOf<UnimplementedError>([&] { sess.Run("cast:0"); }),
              HasSubstr("'Truncate' = true"));
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { sess.Run("wrong_kind:0"); }),
              HasSubstr("attribute 'transpose_a' must be of kind bool"));
}

TEST(GraphNodeChecksTest, AttributeValuesEagerDoesNotComputeAreUnimplementedByName) {
  Node adam{.name = "adam", .op = "ApplyAdam"};
  for (const char* input : {"var", "m", "v", "b1p", "b2p", "lr", "b1", "b2", "eps", "g"}) {
    adam.inputs.emplace_back(input);
  }
  const OpDef* op = FindOp("ApplyAdam");
  ASSERT_NE(op, nullptr);
  Attrs attrs = {{"T", DType::kFloat32}, {"use_locking", false}, {"use_nesterov", false}};
  internal::CheckNode(adam, *op, attrs);  // plain Adam: eager's kernel
  attrs.Set("use_nesterov", true);
  EXPECT_THAT(ErrorOf<UnimplementedError>([&] { internal::CheckNode(adam, *op, attrs); }),
              HasSubstr("node 'adam' (ApplyAdam): attribute 'use_nesterov' = true"));
  Node conv{.name = "conv", .op = "Conv2D", .inputs = {"x", "k"}};
  Attrs conv_attrs = {{"T", DType::kFloat32},
                      {"strides", std::vector<int64_t>{1, 1, 1, 1}},
                      {"padding", std::string("EXPLICIT")},
                      {"explicit_paddings", std::vector<int64_t>{0, 0, 1, 1, 1, 1, 0, 0}},
                      {"use_cudnn_on_gpu", true},
                      {"data_format", std::string("NHWC")},
                      {"dilations", std::vector<int64_t>{1, 1, 1, 1}}};
  EXPECT_THAT(ErrorOf<UnimplementedError>(
                  [&] { internal::CheckNode(conv, *FindOp("Conv2D"), conv_attrs); }),
              HasSubstr("attribute 'padding' = 'EXPLICIT'"));
}

TEST(GraphNodeChecksTest, AssignWithoutValidateShapeToAnotherShapeIsUnimplemented) {
  // TF gives the variable the value's shape; eager's variables keep theirs.
  Graph graph;
  Node var{.name = "v", .op = "VariableV2"};
  var.attrs = {{"dtype", DType::kFloat32}, {"shape", Shape{2}}};
  SetDefaultOutputSpecs(var);
  graph.AddNode(std::move(var));
  graph.ImportVariable({.variable_node = "v"});
  Const(graph, "two", Tensor::Vector<float>({1, 2}));
  Const(graph, "three", Tensor::Vector<float>({1, 2, 3}));
  const Attrs no_validate = {{"T", DType::kFloat32}, {"validate_shape", false}};
  AddNode(graph, "same", "Assign", {"v", "two"}, no_validate);
  AddNode(graph, "other", "Assign", {"v", "three"}, no_validate);
  Session sess(graph);
  EXPECT_EQ(sess.Run("same:0").ToVector<float>(), (std::vector<float>{1, 2}));
  EXPECT_THAT(ErrorOf<UnimplementedError>([&] { sess.Run("other:0"); }),
              AllOf(HasSubstr("attribute 'validate_shape' = false with a value of shape [3]"),
                    HasSubstr("[[{{node other}}]]")));
}

TEST(GraphNodeChecksTest, AxesOutsideIntRangeAreOutOfRangeNotTruncated) {
  // -2^63 and 2^32 + 1 once became axes 0 and 1 by a cast to int.
  for (const int64_t axis : {std::numeric_limits<int64_t>::min(), (int64_t{1} << 32) + 1}) {
    Graph graph;
    Const(graph, "x", Iota(Shape{2, 3}));
    Const(graph, "axes", Tensor::Vector<int64_t>({axis}));
    AddNode(graph, "s", "Sum", {"x", "axes"}, {{"T", DType::kFloat32}, {"Tidx", DType::kInt64}});
    Const(graph, "axis", Tensor::Scalar<int64_t>(axis));
    AddNode(graph, "c", "ConcatV2", {"x", "x", "axis"},
            {{"N", int64_t{2}}, {"T", DType::kFloat32}, {"Tidx", DType::kInt64}});
    Session sess(graph);
    EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { sess.Run("s:0"); }),
                HasSubstr(StrCat("axis ", axis, " is out of range")));
    EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { sess.Run("c:0"); }),
                HasSubstr(StrCat("axis ", axis, " is out of range")));
  }
}

TEST(GraphNodeChecksTest, ReshapeToAShapeWhoseSizeOverflowsIsRefused) {
  Graph graph;
  Const(graph, "x", Iota(Shape{4}));
  Const(graph, "shape", Tensor::Vector<int64_t>({int64_t{1} << 62, 4}));
  AddNode(graph, "r", "Reshape", {"x", "shape"},
          {{"T", DType::kFloat32}, {"Tshape", DType::kInt64}});
  Const(graph, "shape2", Tensor::Vector<int64_t>({int64_t{1} << 62, 4, -1}));
  AddNode(graph, "r2", "Reshape", {"x", "shape2"},
          {{"T", DType::kFloat32}, {"Tshape", DType::kInt64}});
  Session sess(graph);
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { sess.Run("r:0"); }),
              HasSubstr("has more elements than an int64 counts"));
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { sess.Run("r2:0"); }),
              HasSubstr("has more elements than an int64 counts"));
}

TEST(GraphNodeChecksTest, SliceWhoseBeginPlusSizeOverflowsIsRefused) {
  Graph graph;
  Const(graph, "x", Iota(Shape{4}));
  Const(graph, "begin", Tensor::Vector<int64_t>({2}));
  Const(graph, "size", Tensor::Vector<int64_t>({std::numeric_limits<int64_t>::max()}));
  AddNode(graph, "s", "Slice", {"x", "begin", "size"},
          {{"T", DType::kFloat32}, {"Index", DType::kInt64}});
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { Session(graph).Run("s:0"); }),
              HasSubstr("out of bounds in dimension 0"));
}

// ~300-byte graphs that asked for 16 GiB and more (the list).
TEST(GraphNodeChecksTest, OutputsTooBigToMakeAreResourceExhaustedNamingOpNodeAndShape) {
  Graph graph;
  Const(graph, "one", Tensor(1.0f));
  Const(graph, "big", Tensor::Vector<int32_t>({1 << 30, 1 << 30}));
  AddNode(graph, "b", "BroadcastTo", {"one", "big"},
          {{"T", DType::kFloat32}, {"Tidx", DType::kInt32}});
  Const(graph, "i", Tensor::Vector<int32_t>({0, 1, 2, 3, 4, 5, 6, 7}));
  Const(graph, "depth", Tensor::Scalar<int32_t>(std::numeric_limits<int32_t>::max()));
  Const(graph, "on", Tensor(1.0f));
  Const(graph, "off", Tensor(0.0f));
  AddNode(graph, "h", "OneHot", {"i", "depth", "on", "off"}, OneHotAttrs(-1));
  Const(graph, "ids", Tensor::Vector<int64_t>({0}));
  Const(graph, "segments", Tensor::Scalar<int64_t>(int64_t{1} << 40));
  Const(graph, "data", Tensor::Vector<float>({1}));
  AddNode(graph, "u", "UnsortedSegmentSum", {"data", "ids", "segments"},
          {{"T", DType::kFloat32}, {"Tindices", DType::kInt64}, {"Tnumsegments", DType::kInt64}});
  Session sess(graph);
  EXPECT_THAT(ErrorOf<ResourceExhaustedError>([&] { sess.Run("b:0"); }),
              AllOf(HasSubstr("OOM when allocating tensor with shape[1073741824,1073741824]"),
                    HasSubstr("for BroadcastTo"), HasSubstr("[[{{node b}}]]")));
  EXPECT_THAT(ErrorOf<ResourceExhaustedError>([&] { sess.Run("h:0"); }),
              AllOf(HasSubstr("shape[8,2147483647]"), HasSubstr("for OneHot"),
                    HasSubstr("[[{{node h}}]]")));
  EXPECT_THAT(ErrorOf<ResourceExhaustedError>([&] { sess.Run("u:0"); }),
              AllOf(HasSubstr("shape[1099511627776]"), HasSubstr("[[{{node u}}]]")));
}

TEST(GraphNodeChecksTest, SessionOptionsMemoryLimitRefusesLargerTensorsBeforeRunning) {
  Graph graph;
  Const(graph, "one", Tensor(1.0f));
  Const(graph, "small", Tensor::Vector<int32_t>({256, 256}));   // 256 KiB
  Const(graph, "large", Tensor::Vector<int32_t>({1024, 512}));  // 2 MiB
  AddNode(graph, "s", "BroadcastTo", {"one", "small"},
          {{"T", DType::kFloat32}, {"Tidx", DType::kInt32}});
  AddNode(graph, "l", "BroadcastTo", {"one", "large"},
          {{"T", DType::kFloat32}, {"Tidx", DType::kInt32}});
  Session limited(graph, {.memory_limit_bytes = 1 << 20});
  EXPECT_EQ(limited.Run("s:0").num_elements(), 256 * 256);
  EXPECT_THAT(ErrorOf<ResourceExhaustedError>([&] { limited.Run("l:0"); }),
              AllOf(HasSubstr("shape[1024,512]"), HasSubstr("limit of 1048576 bytes"),
                    HasSubstr("SessionOptions::memory_limit_bytes"), HasSubstr("[[{{node l}}]]")));
  EXPECT_EQ(Session(graph).Run("l:0").num_elements(), 1024 * 512);  // no limit: it runs
}

// Issue 37: a node's type attribute was not checked against its inputs'
// dtypes, so AddV2 with T = int32 on floats returned floats and Cast with
// SrcT = int32 turned 2.7 into 2. TF refuses both; so does eager, naming the
// node, the input and both types.
TEST(GraphNodeChecksTest, TypeAttributesMustMatchTheInputs) {
  Graph graph;
  Const(graph, "x", Tensor::Scalar(2.7f));
  AddNode(graph, "add", "AddV2", {"x", "x"}, {{"T", DType::kInt32}});
  AddNode(graph, "cast", "Cast", {"x"},
          {{"SrcT", DType::kInt32}, {"DstT", DType::kInt32}, {"Truncate", false}});
  AddNode(graph, "good", "Cast", {"x"},
          {{"SrcT", DType::kFloat32}, {"DstT", DType::kInt32}, {"Truncate", false}});
  Session sess(graph);
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { sess.Run("add:0"); }),
              AllOf(HasSubstr("node 'add' (AddV2)"), HasSubstr("input 0 ('x', 'x')"),
                    HasSubstr("is float32"), HasSubstr("attribute 'T' expects int32")));
  EXPECT_THAT(ErrorOf<InvalidArgumentError>([&] { sess.Run("cast:0"); }),
              AllOf(HasSubstr("node 'cast' (Cast)"), HasSubstr("is float32"),
                    HasSubstr("attribute 'SrcT' expects int32")));
  EXPECT_EQ(sess.Run("good:0").ToVector<int32_t>(), std::vector<int32_t>{2});
}

}  // namespace
}  // namespace eager
