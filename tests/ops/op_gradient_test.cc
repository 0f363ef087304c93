// One finite-difference check per differentiable op in AllOps(), in float64,
// calling each OpDef's gradient function directly (no GradientTape).

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "ops/activation_ops.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/conv_ops.h"
#include "ops/cumulative_ops.h"
#include "ops/depthwise_conv.h"
#include "ops/fused_conv.h"
#include "ops/fused_lstm_cell.h"
#include "ops/fused_matmul.h"
#include "ops/fused_normalization.h"
#include "ops/gradient_helper_ops.h"
#include "ops/graph_ops.h"
#include "ops/index_ops.h"
#include "ops/matmul.h"
#include "ops/nn_ops.h"
#include "ops/pooling_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "ops/reverse_ops.h"
#include "ops/shape_ops.h"
#include "ops/split_ops.h"
#include "ops/unary_ops.h"
#include "tests/testing/numeric_gradient.h"

namespace eager {
namespace {

struct GradientCase {
  std::string name;
  const OpDef* op;
  std::vector<Tensor> inputs;
  Attrs attrs;
  // Inputs (besides integer ones) that are declared to have no gradient.
  std::vector<int> no_gradient = {};
  double eps = 1e-6;
  double tolerance = 1e-6;
};

// Values in [lo, hi), float64, reproducible per seed.
Tensor Uniform(const Shape& shape, uint64_t seed, double lo = -2.0, double hi = 2.0) {
  return RandomUniform(shape, seed, lo, hi, DType::kFloat64);
}

// Distinct values spaced >= 0.1 apart (no ties: max/min/relu have kinks there).
Tensor Distinct(const Shape& shape, uint64_t seed, double offset = 0.05) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.1 * static_cast<double>(i) - 0.3 + offset;
  RandomGenerator rng(seed);
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.NextBelow(i)]);
  return Tensor::FromVector<double>(v, shape);
}

Attrs ReduceAttrs(std::vector<int64_t> axes, bool keepdims) {
  return Attrs{{"axis", std::move(axes)}, {"keep_dims", keepdims}};
}
Attrs MatMulAttrs(bool ta, bool tb) { return Attrs{{"transpose_a", ta}, {"transpose_b", tb}}; }

std::vector<GradientCase> Cases() {
  const Shape m{2, 3};
  std::vector<GradientCase> c;
  // Binary ops, including every broadcast pattern.
  c.push_back({"AddSameShape", &kAddOp, {Uniform(m, 1), Uniform(m, 2)}, {}});
  c.push_back({"AddRowBroadcast", &kAddOp, {Uniform(m, 3), Uniform(Shape{3}, 4)}, {}});
  c.push_back({"AddScalar", &kAddOp, {Uniform(Shape{}, 5), Uniform(m, 6)}, {}});
  c.push_back(
      {"AddColumnTimesRow", &kAddOp, {Uniform(Shape{2, 1}, 7), Uniform(Shape{1, 3}, 8)}, {}});
  c.push_back({"SubRowBroadcast", &kSubOp, {Uniform(Shape{3}, 9), Uniform(m, 10)}, {}});
  c.push_back({"SubRank3", &kSubOp, {Uniform(Shape{2, 1, 3}, 11), Uniform(Shape{4, 1}, 12)}, {}});
  c.push_back({"MulSameShape", &kMulOp, {Uniform(m, 13), Uniform(m, 14)}, {}});
  c.push_back({"MulColumnBroadcast", &kMulOp, {Uniform(m, 15), Uniform(Shape{2, 1}, 16)}, {}});
  c.push_back({"DivRowBroadcast", &kDivOp, {Uniform(m, 17), Uniform(Shape{3}, 18, 0.5, 2.0)}, {}});
  c.push_back(
      {"DivScalarNumerator", &kDivOp, {Uniform(Shape{}, 19), Uniform(m, 20, 0.5, 2.0)}, {}});
  c.push_back({"PowRowBroadcast", &kPowOp, {Uniform(m, 21, 0.5, 2.0), Uniform(Shape{3}, 22)}, {}});
  c.push_back({"MaximumSameShape", &kMaximumOp, {Distinct(m, 23), Distinct(m, 24, 0.0)}, {}});
  c.push_back(
      {"MaximumRowBroadcast", &kMaximumOp, {Distinct(m, 25), Distinct(Shape{3}, 26, 0.0)}, {}});
  c.push_back({"MinimumSameShape", &kMinimumOp, {Distinct(m, 27), Distinct(m, 28, 0.0)}, {}});
  c.push_back({"MinimumScalar", &kMinimumOp, {Distinct(m, 29), Tensor(0.01)}, {}});
  // Unary ops.
  c.push_back({"Neg", &kNegOp, {Uniform(m, 30)}, {}});
  c.push_back({"Exp", &kExpOp, {Uniform(m, 31)}, {}});
  c.push_back({"Log", &kLogOp, {Uniform(m, 32, 0.2, 3.0)}, {}});
  c.push_back({"Sqrt", &kSqrtOp, {Uniform(m, 33, 0.2, 3.0)}, {}});
  c.push_back({"Square", &kSquareOp, {Uniform(m, 34)}, {}});
  c.push_back({"Relu", &kReluOp, {Distinct(m, 35)}, {}});
  c.push_back({"Sigmoid", &kSigmoidOp, {Uniform(m, 36)}, {}});
  c.push_back({"Tanh", &kTanhOp, {Uniform(m, 37)}, {}});
  c.push_back({"StopGradient", &kStopGradientOp, {Uniform(m, 38)}, {}, {0}});
  c.push_back({"ReluGrad", &kReluGradOp, {Uniform(m, 39), Distinct(m, 40)}, {}, {1}});
  // Elu on both sides of its kink at 0 (Distinct avoids 0 itself); EluGrad's
  // outputs are Elu's, so > -1.
  c.push_back({"Elu", &kEluOp, {Distinct(m, 201)}, {}});
  c.push_back({"EluGrad", &kEluGradOp, {Uniform(m, 202), Distinct(m, 203)}, {}});
  c.push_back({"Rsqrt", &kRsqrtOp, {Uniform(m, 204, 0.3, 3.0)}, {}});
  c.push_back({"RsqrtGrad", &kRsqrtGradOp, {Uniform(m, 205, 0.3, 3.0), Uniform(m, 206)}, {}});
  c.push_back({"SquaredDifferenceRowBroadcast",
               &kSquaredDifferenceOp,
               {Uniform(m, 207), Uniform(Shape{3}, 208)},
               {}});
  c.push_back({"Squeeze",
               &kSqueezeOp,
               {Uniform(Shape{2, 1, 3, 1}, 209)},
               Attrs{{"squeeze_dims", std::vector<int64_t>{-1}}}});
  // MatMul, every transpose combination.
  c.push_back({"MatMul",
               &kMatMulOp,
               {Uniform(Shape{2, 3}, 41), Uniform(Shape{3, 4}, 42)},
               MatMulAttrs(false, false)});
  c.push_back({"MatMulTransposeA",
               &kMatMulOp,
               {Uniform(Shape{3, 2}, 43), Uniform(Shape{3, 4}, 44)},
               MatMulAttrs(true, false)});
  c.push_back({"MatMulTransposeB",
               &kMatMulOp,
               {Uniform(Shape{2, 3}, 45), Uniform(Shape{4, 3}, 46)},
               MatMulAttrs(false, true)});
  c.push_back({"MatMulTransposeBoth",
               &kMatMulOp,
               {Uniform(Shape{3, 2}, 47), Uniform(Shape{4, 3}, 48)},
               MatMulAttrs(true, true)});
  // FusedMatMul, with and without its ReLU (inputs whose sums stay clear of
  // the kink at 0), transposed operands.
  const auto fused = [](bool relu, bool ta, bool tb) {
    return Attrs{{"transpose_a", ta}, {"transpose_b", tb}, {"relu", relu}};
  };
  c.push_back({"FusedMatMul",
               &kFusedMatMulOp,
               {Uniform(Shape{2, 3}, 73), Uniform(Shape{3, 4}, 74), Uniform(Shape{4}, 75)},
               fused(false, false, false)});
  c.push_back({"FusedMatMulRelu",
               &kFusedMatMulOp,
               {Uniform(Shape{3, 2}, 76), Uniform(Shape{3, 4}, 77), Uniform(Shape{4}, 78)},
               fused(true, true, false)});
  c.push_back({"FusedMatMulReluTransposeB",
               &kFusedMatMulOp,
               {Uniform(Shape{2, 3}, 79), Uniform(Shape{4, 3}, 80), Uniform(Shape{4}, 81)},
               fused(true, false, true)});
  // The fused LSTM cell (units 3: z [2, 12]) and batch-norm ops.
  c.push_back({"LstmCellState",
               &kLstmCellStateOp,
               {Uniform(Shape{2, 12}, 174), Uniform(Shape{2, 3}, 175)},
               {}});
  c.push_back({"LstmCellOutput",
               &kLstmCellOutputOp,
               {Uniform(Shape{2, 12}, 176), Uniform(Shape{2, 3}, 177)},
               {}});
  c.push_back({"BatchMoments", &kBatchMomentsOp, {Uniform(Shape{4, 2, 3}, 178)}, {}});
  c.push_back({"ChannelScaleShift",
               &kChannelScaleShiftOp,
               {Uniform(Shape{4, 2, 3}, 179), Uniform(Shape{3}, 180), Uniform(Shape{3}, 181)},
               {}});
  // Reductions.
  c.push_back({"SumAll", &kSumOp, {Uniform(m, 49)}, ReduceAttrs({0, 1}, false)});
  // TF's empty reduction_indices reduce nothing.
  c.push_back({"SumNoAxes", &kSumOp, {Uniform(m, 71)}, ReduceAttrs({}, false)});
  c.push_back({"SumRows", &kSumOp, {Uniform(m, 50)}, ReduceAttrs({0}, false)});
  c.push_back(
      {"SumOuterAxesKeepDims", &kSumOp, {Uniform(Shape{2, 3, 4}, 51)}, ReduceAttrs({0, -1}, true)});
  c.push_back({"MeanLastAxis", &kMeanOp, {Uniform(Shape{2, 3, 4}, 52)}, ReduceAttrs({-1}, false)});
  c.push_back({"MeanAllKeepDims", &kMeanOp, {Uniform(m, 53)}, ReduceAttrs({0, 1}, true)});
  c.push_back({"MaxLastAxis", &kMaxOp, {Distinct(m, 54)}, ReduceAttrs({1}, false)});
  c.push_back(
      {"MaxMiddleAxisKeepDims", &kMaxOp, {Distinct(Shape{2, 3, 2}, 55)}, ReduceAttrs({1}, true)});
  c.push_back({"MinLastAxis", &kMinOp, {Distinct(m, 172)}, ReduceAttrs({1}, false)});
  c.push_back({"ProdRows", &kProdOp, {Uniform(m, 173)}, ReduceAttrs({0}, false)});
  c.push_back({"ProdOuterAxesKeepDims",
               &kProdOp,
               {Uniform(Shape{2, 3, 4}, 174)},
               ReduceAttrs({0, 2}, true)});
  // Several axes in a non-ascending order, with zeros: one in some groups,
  // two in another (TF's cumulative-product formulation).
  c.push_back(
      {"ProdAxes2And0WithZeros",
       &kProdOp,
       {Tensor::FromVector<double>({0.0, 1.2, -0.7, 0.9,  1.1, 0.0, -1.3, 0.6, 0.8,  1.4, 0.0, -0.5,
                                    0.0, 0.7, 1.5,  -1.2, 0.4, 0.9, 1.3,  0.0, -0.6, 1.1, 0.8, 0.5},
                                   Shape{2, 3, 4})},
       ReduceAttrs({2, 0}, false)});
  c.push_back({"ProdNoAxes", &kProdOp, {Uniform(m, 175)}, ReduceAttrs({}, false)});
  // Cumulative ops: every combination of exclusive and reverse.
  const auto scan = [](int64_t axis, bool exclusive, bool reverse) {
    return Attrs{{"axis", axis}, {"exclusive", exclusive}, {"reverse", reverse}};
  };
  c.push_back({"Cumsum", &kCumsumOp, {Uniform(Shape{2, 3, 4}, 176)}, scan(1, false, false)});
  c.push_back(
      {"CumsumExclusiveReverse", &kCumsumOp, {Uniform(Shape{3, 4}, 177)}, scan(-1, true, true)});
  c.push_back({"Cumprod", &kCumprodOp, {Uniform(Shape{2, 3, 4}, 178)}, scan(2, false, false)});
  c.push_back({"CumprodExclusive", &kCumprodOp, {Uniform(Shape{4, 3}, 179)}, scan(0, true, false)});
  c.push_back({"CumprodReverse", &kCumprodOp, {Uniform(Shape{3, 4}, 180)}, scan(-2, false, true)});
  c.push_back(
      {"CumprodExclusiveReverse", &kCumprodOp, {Uniform(Shape{5}, 181)}, scan(0, true, true)});
  // Array ops.
  c.push_back(
      {"Reshape", &kReshapeOp, {Uniform(m, 56)}, Attrs{{"shape", std::vector<int64_t>{3, -1}}}});
  c.push_back({"Transpose",
               &kTransposeOp,
               {Uniform(Shape{2, 3, 4}, 57)},
               Attrs{{"perm", std::vector<int64_t>{2, 0, 1}}}});
  c.push_back({"ReverseV2",
               &kReverseV2Op,
               {Uniform(Shape{2, 3, 4}, 901)},
               Attrs{{"axis", std::vector<int64_t>{0, -1}}}});
  c.push_back({"ConcatAxis1",
               &kConcatOp,
               {Uniform(Shape{2, 1}, 58), Uniform(m, 59), Uniform(Shape{2, 2}, 60)},
               Attrs{{"axis", int64_t{1}}}});
  c.push_back(
      {"Slice",
       &kSliceOp,
       {Uniform(Shape{3, 4}, 61)},
       Attrs{{"begin", std::vector<int64_t>{1, 1}}, {"size", std::vector<int64_t>{2, -1}}}});
  c.push_back({"GatherRepeatedRows",
               &kGatherOp,
               {Uniform(Shape{4, 3}, 62), Tensor::Vector<int32_t>({2, 0, 2})},
               Attrs{{"axis", int64_t{0}}}});
  c.push_back({"UnsortedSegmentSum",
               &kUnsortedSegmentSumOp,
               {Uniform(Shape{4, 2}, 63), Tensor::Vector<int64_t>({1, 0, 1, 2})},
               Attrs{{"num_segments", int64_t{3}}}});
  // Cast to float32 is linear; the float32 rounding needs a coarser step.
  c.push_back({"CastToFloat32",
               &kCastOp,
               {Uniform(m, 64)},
               Attrs{{"SrcT", DType::kFloat64}, {"DstT", DType::kFloat32}},
               {},
               1e-2,
               1e-4});
  c.push_back(
      {"BroadcastToRows", &kBroadcastToOp, {Uniform(Shape{3}, 65)}, Attrs{{"shape", Shape{2, 3}}}});
  c.push_back({"BroadcastToColumns",
               &kBroadcastToOp,
               {Uniform(Shape{2, 1}, 66)},
               Attrs{{"shape", Shape{2, 2, 3}}}});
  // NN ops.
  c.push_back({"BiasAdd", &kBiasAddOp, {Uniform(Shape{2, 3}, 90), Uniform(Shape{3}, 91)}, {}});
  c.push_back(
      {"BiasAddRank4", &kBiasAddOp, {Uniform(Shape{2, 2, 2, 3}, 92), Uniform(Shape{3}, 93)}, {}});
  c.push_back({"Softmax", &kSoftmaxOp, {Uniform(Shape{2, 4}, 67)}, {}});
  c.push_back({"SoftmaxRank3", &kSoftmaxOp, {Uniform(Shape{2, 2, 3}, 68)}, {}});
  c.push_back({"LogSoftmax", &kLogSoftmaxOp, {Uniform(Shape{3, 4}, 69)}, {}});
  c.push_back({"SparseSoftmaxCrossEntropy",
               &kSparseSoftmaxCrossEntropyOp,
               {Uniform(Shape{3, 4}, 70), Tensor::Vector<int32_t>({3, 0, 1})},
               {}});
  // Convolution and pooling (NHWC): VALID and SAME, strides, dilations.
  const auto conv = [](std::vector<int64_t> strides, const char* padding,
                       std::vector<int64_t> dilations = {1, 1, 1, 1}) {
    return Attrs{{"strides", std::move(strides)},
                 {"padding", std::string(padding)},
                 {"dilations", std::move(dilations)}};
  };
  c.push_back({"Conv2DValid",
               &kConv2DOp,
               {Uniform(Shape{2, 4, 5, 2}, 94), Uniform(Shape{2, 3, 2, 3}, 95)},
               conv({1, 1, 1, 1}, "VALID")});
  c.push_back({"Conv2DSameStride2",
               &kConv2DOp,
               {Uniform(Shape{1, 5, 4, 2}, 96), Uniform(Shape{3, 2, 2, 2}, 97)},
               conv({1, 2, 2, 1}, "SAME")});
  c.push_back({"Conv2DDilated",
               &kConv2DOp,
               {Uniform(Shape{1, 5, 5, 1}, 98), Uniform(Shape{2, 2, 1, 2}, 99)},
               conv({1, 1, 1, 1}, "SAME", {1, 2, 2, 1})});
  // Conv2DBackpropInput is Conv2DTranspose's forward: its own gradient.
  c.push_back({"Conv2DBackpropInputSameStride2",
               &kConv2DBackpropInputOp,
               {Tensor::Vector<int32_t>({1, 5, 4, 2}), Uniform(Shape{3, 2, 2, 3}, 115),
                Uniform(Shape{1, 3, 2, 3}, 116)},
               conv({1, 2, 2, 1}, "SAME")});
  // FusedConv2D with and without its ReLU (small filters, so that sums stay
  // clear of the kink at 0 by more than eps).
  const auto fused_conv = [](std::vector<int64_t> strides, const char* padding, bool relu) {
    return Attrs{{"strides", std::move(strides)},
                 {"padding", std::string(padding)},
                 {"dilations", std::vector<int64_t>{1, 1, 1, 1}},
                 {"relu", relu}};
  };
  c.push_back(
      {"FusedConv2D",
       &kFusedConv2DOp,
       {Uniform(Shape{2, 4, 5, 2}, 102), Uniform(Shape{2, 3, 2, 3}, 103), Uniform(Shape{3}, 104)},
       fused_conv({1, 1, 1, 1}, "VALID", false)});
  c.push_back(
      {"FusedConv2DReluSameStride2",
       &kFusedConv2DOp,
       {Uniform(Shape{2, 5, 4, 2}, 105), Uniform(Shape{3, 2, 2, 3}, 106), Uniform(Shape{3}, 107)},
       fused_conv({1, 2, 2, 1}, "SAME", true)});
  const auto pool = [](std::vector<int64_t> ksize, std::vector<int64_t> strides,
                       const char* padding) {
    return Attrs{{"ksize", std::move(ksize)},
                 {"strides", std::move(strides)},
                 {"padding", std::string(padding)}};
  };
  c.push_back({"MaxPoolValid",
               &kMaxPoolOp,
               {Distinct(Shape{2, 4, 4, 2}, 100)},
               pool({1, 2, 2, 1}, {1, 2, 2, 1}, "VALID")});
  c.push_back({"MaxPoolSameOverlapping",
               &kMaxPoolOp,
               {Distinct(Shape{1, 5, 4, 2}, 101)},
               pool({1, 3, 2, 1}, {1, 2, 1, 1}, "SAME")});
  c.push_back({"AvgPoolValid",
               &kAvgPoolOp,
               {Uniform(Shape{2, 4, 4, 2}, 108)},
               pool({1, 2, 2, 1}, {1, 2, 2, 1}, "VALID")});
  c.push_back({"AvgPoolSameOverlapping",
               &kAvgPoolOp,
               {Uniform(Shape{1, 5, 4, 2}, 109)},
               pool({1, 3, 2, 1}, {1, 2, 1, 1}, "SAME")});
  c.push_back({"AvgPoolGradSame",
               &kAvgPoolGradOp,
               {Tensor::Vector<int32_t>({1, 5, 4, 2}), Uniform(Shape{1, 3, 4, 2}, 110)},
               pool({1, 3, 2, 1}, {1, 2, 1, 1}, "SAME")});
  c.push_back({"DepthwiseConv2dNativeSameStride2",
               &kDepthwiseConv2dNativeOp,
               {Uniform(Shape{2, 5, 4, 2}, 111), Uniform(Shape{3, 2, 2, 3}, 112)},
               conv({1, 2, 2, 1}, "SAME")});
  c.push_back({"DepthwiseConv2dNativeDilated",
               &kDepthwiseConv2dNativeOp,
               {Uniform(Shape{1, 5, 5, 3}, 113), Uniform(Shape{2, 2, 3, 1}, 114)},
               conv({1, 1, 1, 1}, "VALID", {1, 2, 2, 1})});
  // Graph ops that also run eagerly.
  c.push_back({"Identity", &kIdentityOp, {Uniform(m, 72)}, {}});
  // Dropout's ops: Floor's gradient is none (TF's _FloorGrad); SelectV2
  // routes the gradient by the condition, summed back over broadcasting.
  c.push_back({"Floor", &kFloorOp, {Distinct(m, 73)}, {}, {0}});
  const Tensor mask = Tensor::FromVector<bool>({true, false, false, true, true, false}, m);
  c.push_back({"SelectV2SameShape", &kSelectV2Op, {mask, Uniform(m, 74), Uniform(m, 75)}, {}});
  c.push_back({"SelectV2Broadcast",
               &kSelectV2Op,
               {Tensor::FromVector<bool>({true, false}, Shape{2, 1}), Uniform(Shape{3}, 76),
                Uniform(Shape{}, 77)},
               {}});
  // Each input broadcast along other axes: condition [2,1,1], t [1,3,1], e [1,1,4].
  c.push_back({"SelectV2ThreeWayBroadcast",
               &kSelectV2Op,
               {Tensor::FromVector<bool>({true, false}, Shape{2, 1, 1}),
                Uniform(Shape{1, 3, 1}, 183), Uniform(Shape{1, 1, 4}, 182)},
               {}});
  // Ops of TF 2.21's graphs of common layers (issue 39). Relu6 on both
  // sides of both kinks (0 and 6); FloorMod where floor(x / y) is not near
  // an integer.
  c.push_back({"Abs", &kAbsOp, {Distinct(m, 300)}, {}});
  c.push_back({"Sign", &kSignOp, {Distinct(m, 301)}, {}, {0}});
  c.push_back(
      {"Relu6", &kRelu6Op, {Tensor::FromVector<double>({-1.0, 0.5, 3.0, 5.5, 6.5, 7.0}, m)}, {}});
  c.push_back({"Relu6Grad",
               &kRelu6GradOp,
               {Uniform(m, 302), Tensor::FromVector<double>({-1.0, 0.5, 3.0, 5.5, 6.5, 7.0}, m)},
               {},
               {1}});
  const Attrs alpha{{"alpha", 0.3}};
  c.push_back({"LeakyRelu", &kLeakyReluOp, {Distinct(m, 303)}, alpha});
  c.push_back(
      {"LeakyReluGrad", &kLeakyReluGradOp, {Uniform(m, 304), Distinct(m, 305)}, alpha, {1}});
  // Smooth activations (ops/activation_ops.h); the grad ops in both inputs,
  // away from the kinks at 0. Softplus also far out, where TF's kernel
  // switches to x and to exp(x).
  c.push_back({"Selu", &kSeluOp, {Distinct(m, 330)}, {}});
  c.push_back({"SeluGrad", &kSeluGradOp, {Uniform(m, 331), Distinct(m, 332)}, {}});
  c.push_back({"Softplus", &kSoftplusOp, {Uniform(m, 333, -3.0, 3.0)}, {}});
  c.push_back({"SoftplusFar",
               &kSoftplusOp,
               {Tensor::FromVector<double>({-40.0, -37.0, -30.0, 30.0, 37.0, 40.0}, m)},
               {}});
  c.push_back({"SoftplusGrad", &kSoftplusGradOp, {Uniform(m, 334), Uniform(m, 335)}, {}});
  c.push_back({"Softsign", &kSoftsignOp, {Uniform(m, 336)}, {}});
  c.push_back({"SoftsignGrad", &kSoftsignGradOp, {Uniform(m, 337), Distinct(m, 338)}, {}});
  c.push_back({"Erf", &kErfOp, {Uniform(m, 339)}, {}});
  // TF's gradient-graph ops of Sigmoid and Tanh, in both inputs (y in (0, 1)
  // and (-1, 1) as outputs are), and TF1's Select with each condition form.
  c.push_back({"SigmoidGrad", &kSigmoidGradOp, {Uniform(m, 340, 0.05, 0.95), Uniform(m, 341)}, {}});
  c.push_back({"TanhGrad", &kTanhGradOp, {Uniform(m, 342, -0.95, 0.95), Uniform(m, 343)}, {}});
  c.push_back({"SelectSameShape",
               &kSelectOp,
               {Tensor::FromVector<bool>({true, false, false, true, true, false}, m),
                Uniform(m, 344), Uniform(m, 345)},
               {}});
  c.push_back({"SelectRows",
               &kSelectOp,
               {Tensor::Vector<bool>({false, true}), Uniform(m, 346), Uniform(m, 347)},
               {}});
  c.push_back({"SelectScalar", &kSelectOp, {Tensor(true), Uniform(m, 348), Uniform(m, 349)}, {}});
  c.push_back({"FloorDiv", &kFloorDivOp, {Uniform(m, 306), Uniform(m, 307, 0.5, 2.0)}, {}, {0, 1}});
  c.push_back({"FloorModRowBroadcast",
               &kFloorModOp,
               {Tensor::FromVector<double>({0.7, -1.3, 2.2, -2.9, 1.1, 0.3}, m),
                Tensor::Vector<double>({0.5, -0.8, 1.5})},
               {}});
  c.push_back({"AddN", &kAddNOp, {Uniform(m, 308), Uniform(m, 309), Uniform(m, 310)}, {}});
  // Shape ops of those graphs: index arguments are integer inputs (no gradient).
  const auto ints = [](std::vector<int32_t> v) {
    return Tensor::FromVector<int32_t>(std::move(v));
  };
  c.push_back({"ExpandDims", &kExpandDimsOp, {Uniform(m, 311), Tensor::Scalar<int32_t>(-1)}, {}});
  c.push_back({"Tile", &kTileOp, {Uniform(m, 312), ints({2, 3})}, {}});
  c.push_back({"PackAxis1",
               &kPackOp,
               {Uniform(m, 313), Uniform(m, 314), Uniform(m, 315)},
               Attrs{{"axis", int64_t{1}}}});
  // One output of Unpack: TF's _UnpackGrad with the others' gradients zero.
  c.push_back({"UnpackOutputAxis1",
               &kUnpackOutputOp,
               {Uniform(Shape{2, 3, 2}, 321)},
               Attrs{{"axis", int64_t{1}}, {"index", int64_t{2}}}});
  c.push_back({"UnpackOutputAxis0",
               &kUnpackOutputOp,
               {Uniform(m, 322)},
               Attrs{{"axis", int64_t{0}}, {"index", int64_t{1}}}});
  // One piece of Split / SplitV: its gradient padded into place.
  c.push_back({"SplitOutput",
               &kSplitOutputOp,
               {Uniform(Shape{2, 5}, 324)},
               Attrs{{"axis", int64_t{1}}, {"begin", int64_t{1}}, {"size", int64_t{3}}}});
  // GatherNd and ScatterNd, each the other's gradient (a repeated index
  // sums into params' gradient).
  c.push_back(
      {"GatherNd",
       &kGatherNdOp,
       {Uniform(Shape{3, 2, 2}, 325), Tensor::FromVector<int32_t>({2, 1, 0, 0, 2, 1}, Shape{3, 2})},
       {}});
  c.push_back({"ScatterNd",
               &kScatterNdOp,
               {Tensor::FromVector<int64_t>({1, 0, 1}, Shape{3, 1}), Uniform(Shape{3, 2}, 326),
                Tensor::Vector<int64_t>({2, 2})},
               {}});
  // BiasAddGrad: its gradient broadcast back over all but the channels.
  c.push_back({"BiasAddGrad", &kBiasAddGradOp, {Uniform(Shape{2, 2, 3}, 327)}, {}});
  // TopKV2's values: grad scattered to the rows' indices.
  c.push_back({"TopKValues",
               &kTopKValuesOp,
               {Uniform(Shape{2, 4}, 323), Tensor::FromVector<int32_t>({3, 0, 1, 2, 1, 3}, m)},
               {}});
  const Tensor paddings = Tensor::FromVector<int32_t>({1, 0, 2, 1}, Shape{2, 2});
  c.push_back({"Pad", &kPadOp, {Uniform(m, 316), paddings}, {}});
  c.push_back({"PadV2", &kPadV2Op, {Uniform(m, 317), paddings, Tensor(0.5)}, {}, {2}});
  const auto masks = [](int64_t b, int64_t e, int64_t ellipsis, int64_t new_axis, int64_t shrink) {
    return Attrs{{"begin_mask", b},
                 {"end_mask", e},
                 {"ellipsis_mask", ellipsis},
                 {"new_axis_mask", new_axis},
                 {"shrink_axis_mask", shrink}};
  };
  c.push_back({"StridedSliceNegativeStride",
               &kStridedSliceOp,
               {Uniform(Shape{4, 5, 3}, 318), ints({1, -1, 0}), ints({4, 0, 2}), ints({2, -2, 1})},
               masks(0, 0, 0, 0, 0)});
  // x[..., tf.newaxis, 1]: ellipsis, new axis, shrink.
  c.push_back({"StridedSliceEllipsisNewAxisShrink",
               &kStridedSliceOp,
               {Uniform(Shape{2, 3, 4}, 319), ints({0, 0, 1}), ints({0, 0, 2}), ints({1, 1, 1})},
               masks(0, 0, 1, 2, 4)});
  const auto adj = [](bool x, bool y) { return Attrs{{"adj_x", x}, {"adj_y", y}}; };
  c.push_back({"BatchMatMulV2Broadcast",
               &kBatchMatMulV2Op,
               {Uniform(Shape{2, 1, 2, 3}, 321), Uniform(Shape{3, 3, 4}, 322)},
               adj(false, false)});
  c.push_back({"BatchMatMulV2AdjBoth",
               &kBatchMatMulV2Op,
               {Uniform(Shape{2, 3, 2}, 323), Uniform(Shape{1, 4, 3}, 324)},
               adj(true, true)});
  c.push_back({"BatchMatMulV2AdjY",
               &kBatchMatMulV2Op,
               {Uniform(Shape{2, 2, 3}, 325), Uniform(Shape{4, 3}, 326)},
               adj(false, true)});
  const auto eq = [](const char* e) { return Attrs{{"equation", std::string(e)}}; };
  c.push_back({"EinsumDense",
               &kEinsumOp,
               {Uniform(Shape{2, 3, 4}, 327), Uniform(Shape{4, 2, 3}, 328)},
               eq("abc,cde->abde")});
  c.push_back({"EinsumAttentionScores",
               &kEinsumOp,
               {Uniform(Shape{2, 3, 2, 4}, 329), Uniform(Shape{2, 5, 2, 4}, 330)},
               eq("aecd,abcd->acbe")});
  c.push_back({"EinsumEllipsisBroadcast",
               &kEinsumOp,
               {Uniform(Shape{2, 1, 2, 3}, 331), Uniform(Shape{3, 3, 4}, 332)},
               eq("...ij,...jk->...ik")});
  // 'x' is summed away alone in operand 0, 'k' in operand 1: their
  // gradients broadcast back.
  c.push_back({"EinsumSummedAlone",
               &kEinsumOp,
               {Uniform(Shape{2, 3, 4}, 333), Uniform(Shape{4, 5}, 334)},
               eq("xij,jk->i")});
  c.push_back({"EinsumTransposeReduce", &kEinsumOp, {Uniform(Shape{2, 3, 4}, 335)}, eq("abc->ca")});
  c.push_back(
      {"EinsumOuter", &kEinsumOp, {Uniform(Shape{3}, 336), Uniform(Shape{2}, 337)}, eq("i,j->ji")});
  c.push_back({"DynamicStitch",
               &kDynamicStitchOp,
               {ints({2, 0}), ints({1}), Uniform(Shape{2, 3}, 338), Uniform(Shape{1, 3}, 339)},
               Attrs{{"N", int64_t{2}}}});
  c.push_back({"ParallelDynamicStitch",
               &kParallelDynamicStitchOp,
               {ints({1}), ints({0}), Uniform(Shape{1}, 340), Uniform(Shape{1}, 341)},
               Attrs{{"N", int64_t{2}}}});
  c.push_back({"StridedSliceGrad",
               &kStridedSliceGradOp,
               {ints({4, 5}), ints({1, 0}), ints({4, 5}), ints({2, 2}), Uniform(Shape{2, 3}, 320)},
               masks(0, 0, 0, 0, 0)});
  // Ops of TF's own TF1 graphs (issue 39's op-coverage report).
  c.push_back({"Reciprocal", &kReciprocalOp, {Uniform(m, 960, 0.5, 2.0)}, {}});
  c.push_back({"ReciprocalGrad", &kReciprocalGradOp, {Uniform(m, 961), Uniform(m, 962)}, {}});
  c.push_back({"Log1p", &kLog1pOp, {Uniform(m, 963, -0.5, 2.0)}, {}});
  c.push_back({"DivNoNan", &kDivNoNanOp, {Uniform(m, 964), Uniform(Shape{3}, 965, 0.5, 2.0)}, {}});
  c.push_back({"L2Loss", &kL2LossOp, {Uniform(m, 966)}, {}});
  c.push_back({"LegacyGather",
               &kLegacyGatherOp,
               {Uniform(Shape{4, 3}, 967), Tensor::Vector<int64_t>({3, 0, 3})},
               {}});
  return c;
}

class OpGradientTest : public ::testing::TestWithParam<GradientCase> {};

TEST_P(OpGradientTest, MatchesCentralDifferences) {
  const GradientCase& c = GetParam();
  ASSERT_NE(c.op->gradient, nullptr) << c.op->type << " has no gradient function";
  testing::GradientCheck check = testing::CheckGradient(*c.op, c.inputs, c.attrs, c.eps);
  EXPECT_LE(check.max_error, c.tolerance) << c.op->type << ": " << check.worst;
  // nullopt exactly for integer inputs and those declared non-differentiable.
  std::vector<int> expected;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const bool declared = std::find(c.no_gradient.begin(), c.no_gradient.end(),
                                    static_cast<int>(i)) != c.no_gradient.end();
    if (declared || !IsFloating(c.inputs[i].dtype())) expected.push_back(static_cast<int>(i));
  }
  EXPECT_EQ(check.without_gradient, expected) << c.op->type;
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpGradientTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

// A new differentiable op in AllOps() cannot skip the check above.
TEST(OpGradientCoverageTest, EveryDifferentiableOpHasAGradientCase) {
  std::set<const OpDef*> covered;
  for (const GradientCase& c : Cases()) covered.insert(c.op);
  for (const OpDef* op : AllOps()) {
    // Graph-only ops (ReadVariableOp) never run eagerly; TF judges their
    // gradients in graphs (tests/tf_graphs/resource_variables_test.py).
    if (op->gradient == nullptr || op->compute == nullptr) continue;
    // Its gradient is an error by design (unary_ops_test.cc).
    if (op == &kPreventGradientOp) continue;
    EXPECT_TRUE(covered.count(op))
        << op->type << " has a gradient but no case in op_gradient_test.cc";
  }
}

TEST(OpGradientCoverageTest, CheckerDetectsAWrongGradient) {
  // Mul's gradient fed to Add's forward must be caught: guards the checker.
  OpDef wrong = kAddOp;
  wrong.gradient = kMulOp.gradient;
  testing::GradientCheck check =
      testing::CheckGradient(wrong, {Uniform(Shape{2, 3}, 71), Uniform(Shape{2, 3}, 72)}, {});
  EXPECT_GT(check.max_error, 0.1);
}

}  // namespace
}  // namespace eager
