#pragma once

// BiasAdd: value + bias along the last axis (tf.nn.bias_add, NHWC), the op
// tf.layers.dense and conv layers put after their MatMul / Conv2D; TF1 graphs
// in .meta files use it, so eager runs it with that op type.

#include "ops/op_def.h"

namespace eager {

// value: [..., C] of rank >= 2, bias: [C], one numeric dtype. Throws
// InvalidArgumentError naming both shapes otherwise. Only the default
// data_format "NHWC" (channels last).
Tensor BiasAdd(const Tensor& value, const Tensor& bias);  // "BiasAdd"

extern const OpDef kBiasAddOp;

}  // namespace eager
