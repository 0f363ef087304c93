#pragma once

// TensorFlow's plain and momentum gradient descent ops on (ref) variables:
// the fused updates tf.compat.v1.train.GradientDescentOptimizer and
// MomentumOptimizer add to a graph ("GradientDescent/update_w/
// ApplyGradientDescent", "Momentum/update_w/ApplyMomentum"). Formulas as
// TF's training_ops.cc kernels, in var's dtype:
//   ApplyGradientDescent: var -= alpha * delta
//   ApplyMomentum:        accum = accum * momentum + grad
//                         var -= lr * accum                          (plain)
//                         var -= grad * lr + accum * momentum * lr   (use_nesterov)
// In a graph they add a node with TF's inputs (var, accum as refs) and
// attributes (T, use_locking false, use_nesterov); eagerly the update
// happens at once. Each returns var's new value. Throws InvalidArgumentError
// naming the variable for a dtype or shape mismatch (float32 or float64),
// FailedPreconditionError when running finds a variable uninitialized.

#include "runtime/tensor.h"
#include "runtime/variable.h"

namespace eager {

Tensor ApplyGradientDescent(Variable& var, const Tensor& alpha, const Tensor& delta);
Tensor ApplyMomentum(Variable& var, Variable& accum, const Tensor& lr, const Tensor& grad,
                     const Tensor& momentum, bool use_nesterov = false);

struct OpDef;
// Graph-only (OpDef::run); their first inputs are references.
extern const OpDef kApplyGradientDescentOp;
extern const OpDef kApplyMomentumOp;

}  // namespace eager
