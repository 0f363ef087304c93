#pragma once

// Neural-network ops over the last axis, as tf.nn.

#include <cstdint>

#include "ops/op_def.h"

namespace eager {

// exp(x) / sum(exp(x)) along the last axis, computed stably (max subtracted).
Tensor Softmax(const Tensor& logits);     // "Softmax"
Tensor LogSoftmax(const Tensor& logits);  // "LogSoftmax"
// Per-example cross entropy: labels int32/int64 [batch] (class ids in
// [0, classes), else InvalidArgumentError naming the bad label), logits float
// [batch, classes]; returns [batch]. Differentiable with respect to logits:
// softmax(logits) - one_hot(labels).
Tensor SparseSoftmaxCrossEntropyWithLogits(const Tensor& labels, const Tensor& logits);
// "SparseSoftmaxCrossEntropyWithLogits"

// BiasAdd: value + bias along the last axis (tf.nn.bias_add, NHWC).
// value: [..., C] of rank >= 2, bias: [C], one numeric dtype. Throws
// InvalidArgumentError naming both shapes otherwise. Only the default
// data_format "NHWC" (channels last).
Tensor BiasAdd(const Tensor& value, const Tensor& bias);  // "BiasAdd"

// The k largest entries of each row (the last axis) of `input` and their
// int32 indices, ties by the lower index first, in decreasing order
// ("TopKV2", tf.math.top_k); `sorted` false is TF's "any order", which
// eager gives sorted too. The values' gradient is grad scattered into zeros
// shaped like `input` at the indices. A scalar input, k < 0 or k past the
// last dimension is InvalidArgumentError. In graph mode one TopKV2 node with
// k as an int32 Const input.
struct TopKOutputs {
  Tensor values;
  Tensor indices;
};
TopKOutputs TopK(const Tensor& input, int64_t k, bool sorted = true);

// sum(t^2) / 2 over every element, a scalar of t's float dtype ("L2Loss",
// tf.nn.l2_loss); gradient grad * t.
Tensor L2Loss(const Tensor& t);

extern const OpDef kSoftmaxOp;
extern const OpDef kL2LossOp;
// "SoftmaxCrossEntropyWithLogits" (TF1's tf.nn.softmax_cross_entropy_with_logits):
// graph-only (OpDef::run); features and labels [batch, classes] of one float
// dtype (a dimension of 1 broadcasts, as TF's), outputs loss [batch] and
// backprop softmax(features) - labels.
extern const OpDef kSoftmaxCrossEntropyOp;
extern const OpDef kLogSoftmaxOp;
extern const OpDef kSparseSoftmaxCrossEntropyOp;
extern const OpDef kBiasAddOp;
// "TopKV2": graph-only (OpDef::run), inputs input and k, outputs values and
// indices; attrs sorted, T, Tk, index_type (int32 only).
extern const OpDef kTopKV2Op;
// Eager-only halves of TopKV2 (what TopK runs eagerly): "_TopKIndices"
// (input; attrs k, sorted) and "_TopKValues" (input, indices: input gathered
// along the last axis, with TF's TopKV2 gradient).
extern const OpDef kTopKIndicesOp;
extern const OpDef kTopKValuesOp;

}  // namespace eager
