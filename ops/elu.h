#pragma once

// Elu: the exponential linear unit (tf.nn.elu), x where x > 0 else exp(x) - 1,
// the activation of tf.layers.dense(..., activation=tf.nn.elu) that TF1
// graphs in .meta files use; and EluGrad, its gradient op.

#include "ops/op_def.h"

namespace eager {

// Float dtypes; any shape.
Tensor Elu(const Tensor& features);  // "Elu"
// Elu's gradient from its output y: gradients where y > 0, else
// gradients * (y + 1) (TF's "EluGrad"). Same shapes and float dtype.
Tensor EluGrad(const Tensor& gradients, const Tensor& outputs);  // "EluGrad"

extern const OpDef kEluOp;
extern const OpDef kEluGradOp;

}  // namespace eager
