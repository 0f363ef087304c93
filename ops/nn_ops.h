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

extern const OpDef kSoftmaxOp;
extern const OpDef kLogSoftmaxOp;
extern const OpDef kSparseSoftmaxCrossEntropyOp;

}  // namespace eager
