#include <algorithm>
#include <iterator>

#include "ops/activation_ops.h"
#include "ops/array_ops.h"
#include "ops/batch_norm_ops.h"
#include "ops/binary_ops.h"
#include "ops/control_flow_ops.h"
#include "ops/conv_ops.h"
#include "ops/cumulative_ops.h"
#include "ops/depthwise_conv.h"
#include "ops/functional_ops.h"
#include "ops/fused_conv.h"
#include "ops/fused_lstm_cell.h"
#include "ops/fused_matmul.h"
#include "ops/fused_normalization.h"
#include "ops/gradient_helper_ops.h"
#include "ops/graph_ops.h"
#include "ops/index_ops.h"
#include "ops/list_ops.h"
#include "ops/logging_ops.h"
#include "ops/lookup_ops.h"
#include "ops/matmul.h"
#include "ops/nn_ops.h"
#include "ops/op_def.h"
#include "ops/pooling_ops.h"
#include "ops/random_ops.h"
#include "ops/reduction_ops.h"
#include "ops/resource_training_ops.h"
#include "ops/resource_variable_ops.h"
#include "ops/reverse_ops.h"
#include "ops/shape_ops.h"
#include "ops/split_ops.h"
#include "ops/stack_ops.h"
#include "ops/tensor_array_ops.h"
#include "ops/training_ops.h"
#include "ops/unary_ops.h"
#include "ops/while_loop_ops.h"

namespace eager {
namespace {

// Every op, once. A new op is one OpDef in its family's .cc plus one line
// here; the gradient test in tests/ops picks it up from this list.
const OpDef* const kAllOps[] = {
    // unary_ops.cc
    &kNegOp,
    &kExpOp,
    &kLogOp,
    &kSqrtOp,
    &kSquareOp,
    &kReluOp,
    &kSigmoidOp,
    &kTanhOp,
    &kStopGradientOp,
    &kPreventGradientOp,
    &kReluGradOp,
    &kEluOp,
    &kEluGradOp,
    &kFloorOp,
    &kRsqrtOp,
    &kRsqrtGradOp,
    // binary_ops.cc
    &kAddOp,
    &kSubOp,
    &kMulOp,
    &kDivOp,
    &kPowOp,
    &kMaximumOp,
    &kMinimumOp,
    &kEqualOp,
    &kGreaterEqualOp,
    &kSelectV2Op,
    &kSquaredDifferenceOp,
    // matmul.cc
    &kMatMulOp,
    // fused_matmul.cc
    &kFusedMatMulOp,
    // fused_lstm_cell.cc
    &kLstmCellStateOp,
    &kLstmCellOutputOp,
    // fused_normalization.cc
    &kBatchMomentsOp,
    &kChannelScaleShiftOp,
    // reduction_ops.cc
    &kSumOp,
    &kMeanOp,
    &kMaxOp,
    &kMinOp,
    &kProdOp,
    &kArgMaxOp,
    // cumulative_ops.cc
    &kCumsumOp,
    &kCumprodOp,
    // shape_ops.cc
    &kReshapeOp,
    &kTransposeOp,
    &kReverseV2Op,  // reverse_ops.cc
    &kConcatOp,
    &kSliceOp,
    &kSqueezeOp,
    &kBroadcastToOp,
    &kShapeOp,
    &kSizeOp,
    &kBroadcastGradientArgsOp,
    // index_ops.cc
    &kGatherOp,
    &kScatterNdOp,
    &kGatherNdOp,
    &kUnsortedSegmentSumOp,
    &kOneHotOp,
    // array_ops.cc
    &kCastOp,
    // nn_ops.cc
    &kSoftmaxOp,
    &kLogSoftmaxOp,
    &kSparseSoftmaxCrossEntropyOp,
    &kBiasAddOp,
    &kTopKV2Op,
    &kTopKIndicesOp,
    &kTopKValuesOp,
    // conv_ops.cc
    &kConv2DOp,
    &kConv2DBackpropInputOp,
    &kConv2DBackpropFilterOp,
    // fused_conv.cc
    &kFusedConv2DOp,
    // pooling_ops.cc
    &kMaxPoolOp,
    &kMaxPoolGradOp,
    &kAvgPoolOp,
    &kAvgPoolGradOp,
    // depthwise_conv.cc
    &kDepthwiseConv2dNativeOp,
    &kDepthwiseConv2dNativeBackpropInputOp,
    &kDepthwiseConv2dNativeBackpropFilterOp,
    // Graph-only node types (OpDef::run or OpDef::flow).
    // graph_ops.cc
    &kIdentityOp,
    &kIdentityNOp,
    &kConstOp,
    &kPlaceholderOp,
    &kPlaceholderWithDefaultOp,
    &kVariableV2Op,
    &kAssignOp,
    &kAssignAddOp,
    &kAssignSubOp,
    &kNoOpOp,
    // training_ops.cc
    &kApplyAdamOp,
    &kApplyGradientDescentOp,
    &kApplyMomentumOp,
    // control_flow_ops.cc
    &kSwitchOp,
    &kRefSwitchOp,
    &kMergeOp,
    // random_ops.cc (stateful per Session)
    &kRandomUniformOp,
    // Ops of TF 2.21's graphs of common layers (issue 39).
    // unary_ops.cc
    &kAbsOp,
    &kSignOp,
    &kRelu6Op,
    &kRelu6GradOp,
    &kLeakyReluOp,
    &kLeakyReluGradOp,
    &kLogicalNotOp,
    // activation_ops.cc
    &kSeluOp,
    &kSeluGradOp,
    &kSoftplusOp,
    &kSoftplusGradOp,
    &kSoftsignOp,
    &kSoftsignGradOp,
    &kErfOp,
    &kSigmoidGradOp,
    &kTanhGradOp,
    &kSelectOp,
    // binary_ops.cc
    &kGreaterOp,
    &kLessOp,
    &kLessEqualOp,
    &kNotEqualOp,
    &kLogicalAndOp,
    &kLogicalOrOp,
    &kFloorDivOp,
    &kFloorModOp,
    &kAddNOp,
    // shape_ops.cc
    &kExpandDimsOp,
    &kTileOp,
    &kPackOp,
    &kUnpackOp,
    &kUnpackOutputOp,
    // split_ops.cc
    &kSplitOp,
    &kSplitVOp,
    &kSplitOutputOp,
    // gradient_helper_ops.cc
    &kBiasAddGradOp,
    &kRankOp,
    &kInvertPermutationOp,
    &kConcatOffsetOp,
    &kShapeNOp,
    &kPadOp,
    &kPadV2Op,
    &kStridedSliceOp,
    &kStridedSliceGradOp,
    // array_ops.cc
    &kFillOp,
    &kZerosLikeOp,
    &kOnesLikeOp,
    &kRangeOp,
    // matmul.cc
    &kBatchMatMulV2Op,
    &kEinsumOp,
    // index_ops.cc
    &kDynamicStitchOp,
    &kParallelDynamicStitchOp,
    // batch_norm_ops.cc
    &kFusedBatchNormV3Op,
    &kFusedBatchNormGradV3Op,
    // resource_variable_ops.cc
    &kVarHandleOp,
    &kReadVariableOp,
    &kAssignVariableOp,
    &kAssignAddVariableOp,
    &kAssignSubVariableOp,
    &kResourceGatherOp,
    &kVariableShapeOp,
    &kVarIsInitializedOp,
    &kDestroyResourceOp,
    // lookup_ops.cc
    &kHashTableV2Op,
    &kInitializeTableV2Op,
    &kLookupTableImportV2Op,
    &kLookupTableFindV2Op,
    &kLookupTableSizeV2Op,
    // list_ops.cc
    &kEmptyTensorListOp,
    &kTensorListReserveOp,
    &kTensorListFromTensorOp,
    &kTensorListStackOp,
    &kTensorListGatherOp,
    &kTensorListGetItemOp,
    &kTensorListSetItemOp,
    &kTensorListPushBackOp,
    &kTensorListPopBackOp,
    &kTensorListLengthOp,
    &kTensorListElementShapeOp,
    &kTensorListScatterIntoExistingListOp,
    &kTensorListScatterV2Op,
    &kTensorListResizeOp,
    &kTensorListConcatV2Op,
    &kTensorListSplitOp,
    // resource_training_ops.cc
    &kResourceApplyGradientDescentOp,
    &kResourceApplyMomentumOp,
    &kResourceApplyKerasMomentumOp,
    &kResourceApplyAdamOp,
    &kResourceApplyRMSPropOp,
    &kResourceApplyAdagradV2Op,
    // functional_ops.cc
    &kArgOp,
    &kPartitionedCallOp,
    &kStatefulPartitionedCallOp,
    &kIfOp,
    &kStatelessIfOp,
    &kCaseOp,
    &kStatelessCaseOp,
    &kWhileOp,
    &kStatelessWhileOp,
    // while_loop_ops.cc: TF1 while loops, run by the Session as steps
    &kEnterOp,
    &kRefEnterOp,
    &kExitOp,
    &kRefExitOp,
    &kNextIterationOp,
    &kRefNextIterationOp,
    &kLoopCondOp,
    &kRefMergeOp,
    &kWhileLoopStepOp,
    &kInFrameStepOp,
    // stack_ops.cc
    &kStackV2Op,
    &kStackPushV2Op,
    &kStackPopV2Op,
    &kControlTriggerOp,
    // tensor_array_ops.cc
    &kTensorArrayV3Op,
    &kTensorArrayWriteV3Op,
    &kTensorArrayReadV3Op,
    &kTensorArrayGatherV3Op,
    &kTensorArrayScatterV3Op,
    &kTensorArraySizeV3Op,
    &kTensorArrayCloseV3Op,
    // Ops of TF's own TF1 graphs (issue 39's op-coverage report).
    // unary_ops.cc
    &kReciprocalOp,
    &kReciprocalGradOp,
    &kLog1pOp,
    // binary_ops.cc
    &kDivNoNanOp,
    // nn_ops.cc
    &kL2LossOp,
    &kSoftmaxCrossEntropyOp,
    // reduction_ops.cc
    &kAllOp,
    &kAnyOp,
    // graph_ops.cc
    &kIsVariableInitializedOp,
    // logging_ops.cc
    &kAssertOp,
    // random_ops.cc
    &kRandomStandardNormalOp,
    &kTruncatedNormalOp,
    // index_ops.cc
    &kLegacyGatherOp,
    &kWhereOp,
    // batch_norm_ops.cc
    &kFusedBatchNormV1Op,
    &kFusedBatchNormGradV1Op,
};

}  // namespace

std::span<const OpDef* const> AllOps() { return kAllOps; }

const OpDef* FindOp(std::string_view type) {
  // TF < 1.14 writes Add for `+`; same semantics on the dtypes eager has.
  if (type == "Add") return &kAddOp;
  // TF < 1.0 graphs hold the legacy Variable op: VariableV2's semantics.
  if (type == "Variable") return &kVariableV2Op;
  auto it = std::find_if(std::begin(kAllOps), std::end(kAllOps),
                         [&](const OpDef* op) { return op->type == type; });
  return it == std::end(kAllOps) ? nullptr : *it;
}

}  // namespace eager
