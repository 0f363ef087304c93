#pragma once

// TensorFlow's training ops on resource variables (handles, see
// ops/resource_variable_ops.h): what TF1's optimizers add to a graph whose
// variables are resource variables (TF 2.x with disable_eager_execution()),
// and what Keras's optimizers use. They update the variables and slots their
// handles reach and have no output. Formulas as TF's CPU kernels
// (training_ops.cc), in var's dtype (float32 or float64), with no fused
// multiply-add (this file's kernels round as TF's):
//
//   ResourceApplyGradientDescent  var -= alpha * delta
//   ResourceApplyMomentum         accum = accum * momentum + grad
//                                 var -= lr * accum                        (plain)
//                                 var -= grad * lr + accum * momentum * lr (use_nesterov)
//   ResourceApplyKerasMomentum    accum = accum * momentum - grad * lr
//                                 var += accum                             (plain)
//                                 var += accum * momentum - grad * lr      (use_nesterov)
//   ResourceApplyAdam             as ApplyAdam (ops/training_ops.h);
//                                 use_nesterov = true is UnimplementedError
//   ResourceApplyRMSProp          ms += (grad * grad - ms) * (1 - rho)
//                                 mom = mom * momentum + grad * lr / sqrt(ms + epsilon)
//                                 var -= mom
//   ResourceApplyAdagradV2        accum += grad * grad             (when update_slots)
//                                 var -= grad * lr / (sqrt(accum) + epsilon)
//
// The scalar inputs (lr, rho, ...) are tensors of var's dtype with one
// element, grad has var's shape, and every slot var's dtype and shape:
// otherwise InvalidArgumentError naming the op, the variable and the input.
// An uninitialized variable or slot is FailedPreconditionError naming it.

namespace eager {

struct OpDef;

extern const OpDef kResourceApplyGradientDescentOp;
extern const OpDef kResourceApplyMomentumOp;
extern const OpDef kResourceApplyKerasMomentumOp;
extern const OpDef kResourceApplyAdamOp;
extern const OpDef kResourceApplyRMSPropOp;
extern const OpDef kResourceApplyAdagradV2Op;

}  // namespace eager
