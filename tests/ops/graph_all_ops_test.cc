// Every op in AllOps(), added to a graph and run by a Session, equals its
// eager result bit for bit: the node record (TF attributes, input attrs as
// Const inputs) carries everything the kernel needs. Inputs are fed
// placeholders of known shape, of unknown dimensions, or Const nodes.

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "ops/activation_ops.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/conv_ops.h"
#include "ops/cumulative_ops.h"
#include "ops/depthwise_conv.h"
#include "ops/execute.h"
#include "ops/fused_conv.h"
#include "ops/fused_lstm_cell.h"
#include "ops/fused_matmul.h"
#include "ops/fused_normalization.h"
#include "ops/gradient_helper_ops.h"
#include "ops/graph_ops.h"
#include "ops/index_ops.h"
#include "ops/internal/graph_builder.h"
#include "ops/matmul.h"
#include "ops/nn_ops.h"
#include "ops/pooling_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "ops/reverse_ops.h"
#include "ops/session.h"
#include "ops/shape_ops.h"
#include "ops/split_ops.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"

namespace eager {
namespace {

struct OpCase {
  std::string name;
  const OpDef* op;
  std::vector<Tensor> inputs;
  Attrs attrs;
};

Tensor Floats(const Shape& shape, uint64_t seed, double lo = -2.0, double hi = 2.0) {
  return RandomUniform(shape, seed, lo, hi, DType::kFloat32);
}

std::vector<OpCase> Cases() {
  const Shape m{2, 3};
  std::vector<OpCase> c;
  c.push_back({"AddV2", &kAddOp, {Floats(m, 1), Floats(Shape{3}, 2)}, {}});
  c.push_back({"Sub", &kSubOp, {Floats(m, 3), Floats(m, 4)}, {}});
  c.push_back({"Mul", &kMulOp, {Floats(Shape{2, 1}, 5), Floats(m, 6)}, {}});
  c.push_back({"RealDiv", &kDivOp, {Floats(m, 7), Floats(m, 8, 0.5, 2.0)}, {}});
  c.push_back({"Pow", &kPowOp, {Floats(m, 9, 0.5, 2.0), Floats(m, 10)}, {}});
  c.push_back({"Maximum", &kMaximumOp, {Floats(m, 11), Floats(m, 12)}, {}});
  c.push_back({"Minimum", &kMinimumOp, {Floats(m, 13), Floats(m, 14)}, {}});
  c.push_back({"Equal",
               &kEqualOp,
               {Tensor::Vector<int32_t>({1, 2, 3}), Tensor::Vector<int32_t>({1, 0, 3})},
               {}});
  for (const OpDef* op :
       {&kNegOp, &kExpOp, &kSquareOp, &kReluOp, &kSigmoidOp, &kTanhOp, &kStopGradientOp,
        &kPreventGradientOp, &kIdentityOp, &kSoftmaxOp, &kLogSoftmaxOp}) {
    c.push_back({std::string(op->type), op, {Floats(m, 15)}, {}});
  }
  c.push_back({"Log", &kLogOp, {Floats(m, 16, 0.1, 3.0)}, {}});
  c.push_back({"Sqrt", &kSqrtOp, {Floats(m, 17, 0.1, 3.0)}, {}});
  c.push_back({"ReluGrad", &kReluGradOp, {Floats(m, 18), Floats(m, 19)}, {}});
  c.push_back({"Elu", &kEluOp, {Floats(m, 43)}, {}});
  c.push_back({"EluGrad", &kEluGradOp, {Floats(m, 44), Floats(m, 45, -0.9, 2.0)}, {}});
  c.push_back({"Rsqrt", &kRsqrtOp, {Floats(m, 46, 0.1, 3.0)}, {}});
  c.push_back({"RsqrtGrad", &kRsqrtGradOp, {Floats(m, 47, 0.1, 3.0), Floats(m, 48)}, {}});
  c.push_back(
      {"SquaredDifference", &kSquaredDifferenceOp, {Floats(m, 49), Floats(Shape{3}, 50)}, {}});
  c.push_back({"Squeeze",
               &kSqueezeOp,
               {Floats(Shape{2, 1, 3}, 51)},
               Attrs{{"squeeze_dims", std::vector<int64_t>{1}}}});
  c.push_back(
      {"Shape", &kShapeOp, {Floats(Shape{2, 1, 3}, 52)}, Attrs{{"out_type", DType::kInt64}}});
  c.push_back({"MatMul",
               &kMatMulOp,
               {Floats(m, 20), Floats(Shape{4, 3}, 21)},
               Attrs{{"transpose_a", false}, {"transpose_b", true}}});
  c.push_back({"Sum",
               &kSumOp,
               {Floats(m, 22)},
               Attrs{{"axis", std::vector<int64_t>{1}}, {"keep_dims", true}}});
  c.push_back({"Mean",
               &kMeanOp,
               {Floats(m, 23)},
               Attrs{{"axis", std::vector<int64_t>{0}}, {"keep_dims", false}}});
  c.push_back({"Max",
               &kMaxOp,
               {Floats(m, 24)},
               Attrs{{"axis", std::vector<int64_t>{0, 1}}, {"keep_dims", false}}});
  c.push_back({"Min",
               &kMinOp,
               {Floats(m, 27)},
               Attrs{{"axis", std::vector<int64_t>{1}}, {"keep_dims", true}}});
  c.push_back({"Prod",
               &kProdOp,
               {Floats(m, 28)},
               Attrs{{"axis", std::vector<int64_t>{0}}, {"keep_dims", false}}});
  c.push_back({"Cumsum",
               &kCumsumOp,
               {Floats(Shape{2, 3, 4}, 53)},
               Attrs{{"axis", int64_t{-2}}, {"exclusive", true}, {"reverse", false}}});
  c.push_back({"Cumprod",
               &kCumprodOp,
               {Floats(Shape{2, 3, 4}, 54)},
               Attrs{{"axis", int64_t{2}}, {"exclusive", true}, {"reverse", true}}});
  c.push_back({"CumprodInt64",
               &kCumprodOp,
               {Tensor::Vector<int64_t>({3, -2, 5, 7})},
               Attrs{{"axis", int64_t{0}}, {"exclusive", false}, {"reverse", false}}});
  c.push_back({"ArgMax",
               &kArgMaxOp,
               {Floats(m, 25)},
               Attrs{{"axis", int64_t{1}}, {"output_type", DType::kInt64}}});
  c.push_back(
      {"Reshape", &kReshapeOp, {Floats(m, 26)}, Attrs{{"shape", std::vector<int64_t>{3, -1}}}});
  c.push_back({"Transpose",
               &kTransposeOp,
               {Floats(Shape{2, 3, 4}, 27)},
               Attrs{{"perm", std::vector<int64_t>{2, 0, 1}}}});
  c.push_back({"ReverseV2",
               &kReverseV2Op,
               {Floats(Shape{2, 3, 4}, 901)},
               Attrs{{"axis", std::vector<int64_t>{1, -1}}}});
  c.push_back({"ConcatV2",
               &kConcatOp,
               {Floats(Shape{2, 1}, 28), Floats(m, 29), Floats(Shape{2, 2}, 30)},
               Attrs{{"axis", int64_t{1}}}});
  c.push_back(
      {"Slice",
       &kSliceOp,
       {Floats(Shape{3, 4}, 31)},
       Attrs{{"begin", std::vector<int64_t>{1, 1}}, {"size", std::vector<int64_t>{2, -1}}}});
  c.push_back({"GatherV2",
               &kGatherOp,
               {Floats(Shape{4, 3}, 32), Tensor::Vector<int32_t>({2, 0, 3})},
               Attrs{{"axis", int64_t{0}}, {"batch_dims", int64_t{0}}}});
  c.push_back({"UnsortedSegmentSum",
               &kUnsortedSegmentSumOp,
               {Floats(Shape{4, 2}, 33), Tensor::Vector<int64_t>({1, 0, 1, 2})},
               Attrs{{"num_segments", int64_t{3}}}});
  c.push_back({"OneHot",
               &kOneHotOp,
               {Tensor::Vector<int32_t>({0, 3, 1, 7})},
               Attrs{{"depth", int64_t{4}},
                     {"on_value", 2.5},
                     {"off_value", -1.0},
                     {"axis", int64_t{-1}},
                     {"T", DType::kFloat32}}});
  c.push_back({"Cast",
               &kCastOp,
               {Floats(m, 34, -5, 5)},
               Attrs{{"SrcT", DType::kFloat32}, {"DstT", DType::kInt32}}});
  c.push_back(
      {"BroadcastTo", &kBroadcastToOp, {Floats(Shape{3}, 35)}, Attrs{{"shape", Shape{2, 3}}}});
  c.push_back({"SparseSoftmaxCrossEntropyWithLogits",
               &kSparseSoftmaxCrossEntropyOp,
               {Floats(Shape{3, 4}, 36), Tensor::Vector<int32_t>({3, 0, 1})},
               {}});
  c.push_back({"BiasAdd", &kBiasAddOp, {Floats(m, 37), Floats(Shape{3}, 38)}, {}});
  const Attrs conv{{"strides", std::vector<int64_t>{1, 2, 1, 1}},
                   {"use_cudnn_on_gpu", true},
                   {"padding", std::string("SAME")},
                   {"data_format", std::string("NHWC")},
                   {"dilations", std::vector<int64_t>{1, 1, 1, 1}}};
  const Tensor images = Floats(Shape{2, 5, 4, 3}, 39);
  const Tensor filter = Floats(Shape{3, 2, 3, 4}, 40);
  const Tensor conv_grad = Floats(Shape{2, 3, 4, 4}, 41);
  c.push_back({"Conv2D", &kConv2DOp, {images, filter}, conv});
  c.push_back({"Conv2DBackpropInput",
               &kConv2DBackpropInputOp,
               {Tensor::Vector<int32_t>({2, 5, 4, 3}), filter, conv_grad},
               conv});
  c.push_back({"Conv2DBackpropFilter",
               &kConv2DBackpropFilterOp,
               {images, Tensor::Vector<int32_t>({3, 2, 3, 4}), conv_grad},
               conv});
  const Attrs pool{{"ksize", std::vector<int64_t>{1, 2, 2, 1}},
                   {"strides", std::vector<int64_t>{1, 2, 2, 1}},
                   {"padding", std::string("VALID")},
                   {"data_format", std::string("NHWC")}};
  c.push_back({"MaxPool", &kMaxPoolOp, {images}, pool});
  c.push_back({"MaxPoolGrad",
               &kMaxPoolGradOp,
               {images, Execute(kMaxPoolOp, {images}, pool), Floats(Shape{2, 2, 2, 3}, 42)},
               pool});
  c.push_back({"AvgPool", &kAvgPoolOp, {images}, pool});
  c.push_back({"AvgPoolGrad",
               &kAvgPoolGradOp,
               {Tensor::Vector<int32_t>({2, 5, 4, 3}), Floats(Shape{2, 2, 2, 3}, 49)},
               pool});
  Attrs depthwise = conv;
  depthwise.Erase("use_cudnn_on_gpu");
  const Tensor depthwise_filter = Floats(Shape{3, 2, 3, 2}, 50);
  const Tensor depthwise_grad = Floats(Shape{2, 3, 4, 6}, 51);
  c.push_back(
      {"DepthwiseConv2dNative", &kDepthwiseConv2dNativeOp, {images, depthwise_filter}, depthwise});
  c.push_back({"DepthwiseConv2dNativeBackpropInput",
               &kDepthwiseConv2dNativeBackpropInputOp,
               {Tensor::Vector<int32_t>({2, 5, 4, 3}), depthwise_filter, depthwise_grad},
               depthwise});
  c.push_back({"DepthwiseConv2dNativeBackpropFilter",
               &kDepthwiseConv2dNativeBackpropFilterOp,
               {images, Tensor::Vector<int32_t>({3, 2, 3, 2}), depthwise_grad},
               depthwise});
  c.push_back({"_FusedMatMul",
               &kFusedMatMulOp,
               {Floats(m, 43), Floats(Shape{3, 4}, 44), Floats(Shape{4}, 45)},
               Attrs{{"transpose_a", false}, {"transpose_b", false}, {"relu", true}}});
  c.push_back({"_LstmCellState",
               &kLstmCellStateOp,
               {Floats(Shape{2, 8}, 60), Floats(Shape{2, 2}, 61)},
               {}});
  c.push_back({"_LstmCellOutput",
               &kLstmCellOutputOp,
               {Floats(Shape{2, 8}, 62), Floats(Shape{2, 2}, 63)},
               {}});
  c.push_back({"_BatchMoments", &kBatchMomentsOp, {Floats(Shape{4, 3}, 64)}, {}});
  c.push_back({"_ChannelScaleShift",
               &kChannelScaleShiftOp,
               {Floats(Shape{4, 3}, 65), Floats(Shape{3}, 66), Floats(Shape{3}, 67)},
               {}});
  Attrs fused_conv = conv;
  fused_conv.Set("relu", true);
  c.push_back({"_FusedConv2D",
               &kFusedConv2DOp,
               {images, Floats(Shape{2, 2, 3, 4}, 46), Floats(Shape{4}, 47)},
               fused_conv});
  c.push_back({"Floor", &kFloorOp, {Floats(m, 46)}, {}});
  c.push_back({"GreaterEqual", &kGreaterEqualOp, {Floats(m, 47), Floats(Shape{3}, 48)}, {}});
  c.push_back({"SelectV2",
               &kSelectV2Op,
               {Tensor::FromVector<bool>({true, false}, Shape{2, 1}), Floats(m, 49), Tensor(0.0f)},
               {}});
  // Ops of TF 2.21's graphs of common layers (issue 39).
  for (const OpDef* op : {&kAbsOp, &kSignOp, &kRelu6Op}) {
    c.push_back({std::string(op->type), op, {Floats(m, 60, -8.0, 8.0)}, {}});
  }
  c.push_back({"LeakyRelu", &kLeakyReluOp, {Floats(m, 59, -8.0, 8.0)}, Attrs{{"alpha", 0.2}}});
  c.push_back({"Relu6Grad", &kRelu6GradOp, {Floats(m, 61), Floats(m, 62, -2.0, 8.0)}, {}});
  // Smooth activations (ops/activation_ops.h).
  for (const OpDef* op : {&kSeluOp, &kSoftplusOp, &kSoftsignOp, &kErfOp}) {
    c.push_back({std::string(op->type), op, {Floats(m, 65, -8.0, 8.0)}, {}});
  }
  c.push_back({"SigmoidGrad", &kSigmoidGradOp, {Floats(m, 68, 0.0, 1.0), Floats(m, 69)}, {}});
  c.push_back({"TanhGrad", &kTanhGradOp, {Floats(m, 70, -1.0, 1.0), Floats(m, 71)}, {}});
  c.push_back({"Select",
               &kSelectOp,
               {Tensor::Vector<bool>({false, true}), Floats(m, 72), Floats(m, 73)},
               {}});
  for (const OpDef* op : {&kSeluGradOp, &kSoftplusGradOp, &kSoftsignGradOp}) {
    c.push_back({std::string(op->type), op, {Floats(m, 66), Floats(m, 67, -2.0, 4.0)}, {}});
  }
  c.push_back(
      {"LeakyReluGrad", &kLeakyReluGradOp, {Floats(m, 63), Floats(m, 64)}, Attrs{{"alpha", 0.25}}});
  for (const OpDef* op : {&kGreaterOp, &kLessOp, &kLessEqualOp, &kNotEqualOp}) {
    c.push_back(
        {std::string(op->type),
         op,
         {Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, m), Tensor::Vector<int32_t>({2, 2, 7})},
         {}});
  }
  const Tensor p = Tensor::FromVector<bool>({true, true, false, false, true, false}, m);
  const Tensor q = Tensor::Vector<bool>({true, false, false});
  c.push_back({"LogicalAnd", &kLogicalAndOp, {p, q}, {}});
  c.push_back({"LogicalOr", &kLogicalOrOp, {p, q}, {}});
  c.push_back({"LogicalNot", &kLogicalNotOp, {p}, {}});
  const Tensor dividends = Tensor::FromVector<int32_t>({7, -7, 7, -7, 0, -1}, m);
  c.push_back({"FloorDiv", &kFloorDivOp, {dividends, Tensor::Vector<int32_t>({2, -2, 3})}, {}});
  c.push_back({"FloorMod", &kFloorModOp, {dividends, Tensor::Vector<int32_t>({2, -2, 3})}, {}});
  c.push_back({"AddN", &kAddNOp, {Floats(m, 65), Floats(m, 66), Floats(m, 67)}, {}});
  const auto ints = [](std::vector<int32_t> v) {
    return Tensor::FromVector<int32_t>(std::move(v));
  };
  c.push_back({"ExpandDims", &kExpandDimsOp, {Floats(m, 68), Tensor::Scalar<int32_t>(1)}, {}});
  c.push_back({"Tile", &kTileOp, {Floats(m, 69), ints({2, 1})}, {}});
  c.push_back({"Pack", &kPackOp, {Floats(m, 70), Floats(m, 71)}, Attrs{{"axis", int64_t{-1}}}});
  c.push_back({"Size", &kSizeOp, {Floats(Shape{2, 3, 2}, 77)}, Attrs{{"out_type", DType::kInt64}}});
  c.push_back({"ScatterNd",
               &kScatterNdOp,
               {Tensor::FromVector<int32_t>({2, 0, 2}, Shape{3, 1}), Floats(Shape{3, 2}, 78),
                Tensor::Vector<int32_t>({4, 2})},
               {}});
  c.push_back({"GatherNd",
               &kGatherNdOp,
               {Floats(Shape{3, 2, 2}, 80), Tensor::FromVector<int64_t>({2, 1, 0, 0}, Shape{2, 2})},
               {}});
  c.push_back({"BiasAddGrad", &kBiasAddGradOp, {Floats(Shape{2, 2, 3}, 81)}, {}});
  c.push_back({"Rank", &kRankOp, {Floats(Shape{2, 2, 3}, 82)}, {}});
  c.push_back(
      {"InvertPermutation", &kInvertPermutationOp, {Tensor::Vector<int32_t>({2, 0, 1})}, {}});
  c.push_back({"_TopKIndices",
               &kTopKIndicesOp,
               {Floats(Shape{2, 5}, 75)},
               Attrs{{"k", int64_t{3}}, {"sorted", true}}});
  c.push_back({"_TopKValues",
               &kTopKValuesOp,
               {Floats(Shape{2, 4}, 76), Tensor::FromVector<int32_t>({3, 0, 1, 2, 1, 3}, m)},
               {}});
  c.push_back({"_SplitOutput",
               &kSplitOutputOp,
               {Floats(Shape{2, 5}, 79)},
               Attrs{{"axis", int64_t{1}}, {"begin", int64_t{2}}, {"size", int64_t{2}}}});
  c.push_back({"_UnpackOutput",
               &kUnpackOutputOp,
               {Floats(Shape{2, 3, 2}, 74)},
               Attrs{{"axis", int64_t{1}}, {"index", int64_t{1}}}});
  const Tensor paddings = Tensor::FromVector<int32_t>({1, 0, 2, 1}, Shape{2, 2});
  c.push_back({"Pad", &kPadOp, {Floats(m, 72), paddings}, {}});
  c.push_back({"PadV2", &kPadV2Op, {Floats(m, 73), paddings, Tensor(-1.5f)}, {}});
  const Attrs masks{{"begin_mask", int64_t{1}},
                    {"end_mask", int64_t{0}},
                    {"ellipsis_mask", int64_t{0}},
                    {"new_axis_mask", int64_t{2}},
                    {"shrink_axis_mask", int64_t{4}}};
  c.push_back({"StridedSlice",
               &kStridedSliceOp,
               {Floats(Shape{4, 5}, 74), ints({3, 0, -1}), ints({0, 0, 0}), ints({-1, 1, 1})},
               masks});
  c.push_back(
      {"StridedSliceGrad",
       &kStridedSliceGradOp,
       {ints({4, 5}), ints({3, 0, -1}), ints({0, 0, 0}), ints({-1, 1, 1}), Floats(Shape{3, 1}, 75)},
       masks});
  c.push_back({"BatchMatMulV2",
               &kBatchMatMulV2Op,
               {Floats(Shape{2, 1, 3, 4}, 77), Floats(Shape{3, 5, 4}, 78)},
               Attrs{{"adj_x", false}, {"adj_y", true}}});
  c.push_back({"BatchMatMulV2Int",
               &kBatchMatMulV2Op,
               {Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, Shape{1, 3, 2}),
                Tensor::FromVector<int32_t>({1, -1, 2, 0, 3, 1}, Shape{2, 3, 1})},
               Attrs{{"adj_x", true}, {"adj_y", false}}});
  const auto eq = [](const char* e) { return Attrs{{"equation", std::string(e)}}; };
  c.push_back({"EinsumAttention",
               &kEinsumOp,
               {Floats(Shape{2, 3, 2, 4}, 79), Floats(Shape{2, 5, 2, 4}, 80)},
               eq("aecd,abcd->acbe")});
  c.push_back({"EinsumEllipsisInt",
               &kEinsumOp,
               {Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, Shape{1, 2, 3}),
                Tensor::FromVector<int32_t>({1, -1, 2, 0, 3, 1}, Shape{2, 3, 1})},
               eq("...ij,...jk->...ik")});
  c.push_back({"EinsumReduce", &kEinsumOp, {Floats(Shape{3, 4}, 81)}, eq("ij->i")});
  const Attrs n2 = {{"N", int64_t{2}}};
  c.push_back({"DynamicStitch",
               &kDynamicStitchOp,
               {ints({3, 0}), ints({1, 3}), Floats(Shape{2, 2}, 82), Floats(Shape{2, 2}, 83)},
               n2});
  c.push_back({"ParallelDynamicStitch",
               &kParallelDynamicStitchOp,
               {ints({2, 0}), ints({1}), Floats(Shape{2, 3}, 84), Floats(Shape{1, 3}, 85)},
               n2});
  c.push_back({"Fill", &kFillOp, {ints({2, 3}), Tensor(2.5f)}, {}});
  c.push_back({"ZerosLike", &kZerosLikeOp, {Floats(m, 76)}, {}});
  c.push_back({"OnesLike", &kOnesLikeOp, {Tensor::Vector<int64_t>({4, 5})}, {}});
  c.push_back({"RangeInt32", &kRangeOp, {Tensor(3), Tensor(-4), Tensor(-2)}, {}});
  c.push_back({"RangeFloat", &kRangeOp, {Tensor(0.5f), Tensor(2.0f), Tensor(0.4f)}, {}});
  // Ops of TF's own TF1 graphs (issue 39's op-coverage report).
  c.push_back({"Reciprocal", &kReciprocalOp, {Floats(m, 960, 0.5, 2.0)}, {}});
  c.push_back({"ReciprocalGrad", &kReciprocalGradOp, {Floats(m, 961), Floats(m, 962)}, {}});
  c.push_back({"Log1p", &kLog1pOp, {Floats(m, 963, -0.5, 2.0)}, {}});
  c.push_back(
      {"DivNoNan", &kDivNoNanOp, {Floats(m, 964), Tensor::Vector<float>({0.0f, 2.0f, -0.5f})}, {}});
  c.push_back({"L2Loss", &kL2LossOp, {Floats(m, 965)}, {}});
  c.push_back({"Gather",
               &kLegacyGatherOp,
               {Floats(Shape{4, 3}, 966), Tensor::Matrix<int64_t>({{3, 0}, {1, 1}})},
               Attrs{{"validate_indices", true}}});
  const Tensor bools = Tensor::FromVector<bool>({true, false, true, true, true, true}, m);
  c.push_back(
      {"All", &kAllOp, {bools}, Attrs{{"axis", std::vector<int64_t>{1}}, {"keep_dims", false}}});
  c.push_back(
      {"Any", &kAnyOp, {bools}, Attrs{{"axis", std::vector<int64_t>{0}}, {"keep_dims", true}}});
  return c;
}

enum class Feed { kKnownShapes, kUnknownDims, kConstants };

// The op in a fresh graph on inputs fed as `feed` says, run by a Session.
Tensor RunInGraph(const OpCase& c, Feed feed) {
  Graph graph;
  Graph::AsDefault in(graph);
  std::vector<Tensor> inputs;
  Feeds feeds;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Tensor& value = c.inputs[i];
    if (feed == Feed::kConstants) {
      inputs.push_back(Constant(value));
      continue;
    }
    Shape shape = value.shape();
    if (feed == Feed::kUnknownDims) {
      std::vector<int64_t> dims(static_cast<size_t>(shape.rank()), Shape::kUnknownDim);
      shape = Shape::Partial(dims);
    }
    inputs.push_back(Placeholder(value.dtype(), shape, "input"));
    feeds.emplace_back(inputs.back(), value);
  }
  Tensor out = Execute(*c.op, inputs, c.attrs);
  EXPECT_TRUE(out.is_symbolic());
  const Node& node = graph.node(graph.OperationOf(out).index());
  EXPECT_EQ(node.op, c.op->type);
  // Attributes that TF passes as inputs are inputs, not attributes.
  for (const InputAttr& a : c.op->input_attrs) EXPECT_EQ(node.FindAttr(a.attr), nullptr) << a.attr;
  EXPECT_EQ(node.inputs.size(), c.inputs.size() + c.op->input_attrs.size());
  Session sess(graph);
  Tensor value = sess.Run(out, feeds);
  EXPECT_TRUE(out.shape().IsCompatibleWith(value.shape()))
      << "static " << out.shape() << " vs run " << value.shape();
  EXPECT_EQ(out.dtype(), value.dtype());
  return value;
}

void ExpectSameTensor(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.shape(), want.shape());
  ASSERT_EQ(got.bytes().size(), want.bytes().size());
  EXPECT_EQ(std::memcmp(got.bytes().data(), want.bytes().data(), got.bytes().size()), 0)
      << "graph " << got << " vs eager " << want;
}

class GraphAllOpsTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(GraphAllOpsTest, SessionEqualsEager) {
  const OpCase& c = GetParam();
  const Tensor eager = Execute(*c.op, c.inputs, c.attrs);
  for (Feed feed : {Feed::kKnownShapes, Feed::kUnknownDims, Feed::kConstants}) {
    SCOPED_TRACE(static_cast<int>(feed));
    ExpectSameTensor(RunInGraph(c, feed), eager);
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, GraphAllOpsTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

// A new op in AllOps() cannot skip the check above.
TEST(GraphAllOpsCoverageTest, EveryOpHasACase) {
  std::set<const OpDef*> covered;
  for (const OpCase& c : Cases()) covered.insert(c.op);
  for (const OpDef* op : AllOps()) {
    if (op->compute == nullptr) continue;  // graph-only: no eager form (graph_test.cc)
    EXPECT_TRUE(covered.count(op)) << op->type << " has no case in graph_all_ops_test.cc";
  }
}

}  // namespace
}  // namespace eager
