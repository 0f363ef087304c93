#pragma once

// TensorFlow's training ops on (ref) variables: the fused updates TF1's
// optimizers add to a graph: ApplyAdam (tf.compat.v1.train.AdamOptimizer,
// "Adam/update_v/ApplyAdam"), ApplyGradientDescent and ApplyMomentum
// (GradientDescentOptimizer, MomentumOptimizer).
//
//   // in a graph: one node; Session::Run of it (or of a group over it)
//   // updates var, m and v; its output is var's new value.
//   eager::Tensor step = eager::ApplyAdam(w, m, v, beta1_power, beta2_power,
//                                         lr, beta1, beta2, epsilon, grad);
//
// The arithmetic is FORMAT.md 7.1 in var's dtype, the same code the eager
// Adam runs (ops/apply_adam.h), so graph and eager training give the
// same bits.

#include <span>

#include "runtime/tensor.h"
#include "runtime/variable.h"

namespace eager {

// var, m, v: variables of one float dtype and shape; the seven tensors:
// scalars of that dtype (any shape with one element), then grad of var's
// shape. In a graph the variables must belong to the default graph; the node
// has TF's inputs (var, m, v as refs, then the tensors in this order) and
// attributes (T, use_locking false, use_nesterov false). Eagerly the update
// happens at once. Returns var's new value. Throws InvalidArgumentError
// naming the variable for a dtype or shape mismatch, FailedPreconditionError
// when running it finds a variable uninitialized.
Tensor ApplyAdam(Variable& var, Variable& m, Variable& v, const Tensor& beta1_power,
                 const Tensor& beta2_power, const Tensor& lr, const Tensor& beta1,
                 const Tensor& beta2, const Tensor& epsilon, const Tensor& grad);

// Plain and momentum gradient descent ("GradientDescent/update_w/
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
Tensor ApplyGradientDescent(Variable& var, const Tensor& alpha, const Tensor& delta);
Tensor ApplyMomentum(Variable& var, Variable& accum, const Tensor& lr, const Tensor& grad,
                     const Tensor& momentum, bool use_nesterov = false);

struct OpDef;
// "ApplyAdam": graph-only (OpDef::run), inputs var, m, v are references.
extern const OpDef kApplyAdamOp;
// Graph-only (OpDef::run); their first inputs are references.
extern const OpDef kApplyGradientDescentOp;
extern const OpDef kApplyMomentumOp;

namespace internal {
// What running an ApplyAdam node does (Session): `tensors` are its seven
// non-ref inputs' values. Returns var's new value.
Tensor RunApplyAdam(Variable& var, Variable& m, Variable& v, std::span<const Tensor> tensors);
}  // namespace internal

}  // namespace eager
