#pragma once

// Neural-network ops over the last axis, as tf.nn.

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

extern const OpDef kSoftmaxOp;
extern const OpDef kLogSoftmaxOp;
extern const OpDef kSparseSoftmaxCrossEntropyOp;
extern const OpDef kBiasAddOp;

}  // namespace eager
