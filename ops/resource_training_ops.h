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
//
// Graph builders, what TF1's optimizers' _resource_apply_dense adds for a
// resource variable (autodiff/sgd_graph.cc and adam_graph.cc call them when
// Graph::IsResourceVariable):
//
//   eager::Graph::UseResourceVariables resource(graph);  // slots as TF makes them
//   eager::Variable m(eager::DType::kFloat32, w.shape(), "w/Adam"), ...
//   eager::Operation step = eager::ResourceApplyAdam(w, m, v, beta1_power, ...);
//
// In a graph each adds one node ("ResourceApplyAdam", made unique in the
// current name scope) whose resource inputs are the variables' VarHandleOp
// nodes, with TF's attrs T, use_locking = false (and use_nesterov), and
// returns it; the arguments are checked as the kernel checks them, and a
// variable that is not a resource variable of the default graph is
// InvalidArgumentError naming it. Eagerly they update at once as the ref
// ops of ops/training_ops.h do and return a none Operation.

#include "runtime/graph.h"
#include "runtime/tensor.h"
#include "runtime/variable.h"

namespace eager {

struct OpDef;

Operation ResourceApplyGradientDescent(Variable& var, const Tensor& alpha, const Tensor& delta);
Operation ResourceApplyMomentum(Variable& var, Variable& accum, const Tensor& lr,
                                const Tensor& grad, const Tensor& momentum,
                                bool use_nesterov = false);
Operation ResourceApplyAdam(Variable& var, Variable& m, Variable& v, const Tensor& beta1_power,
                            const Tensor& beta2_power, const Tensor& lr, const Tensor& beta1,
                            const Tensor& beta2, const Tensor& epsilon, const Tensor& grad);

extern const OpDef kResourceApplyGradientDescentOp;
extern const OpDef kResourceApplyMomentumOp;
extern const OpDef kResourceApplyKerasMomentumOp;
extern const OpDef kResourceApplyAdamOp;
extern const OpDef kResourceApplyRMSPropOp;
extern const OpDef kResourceApplyAdagradV2Op;

}  // namespace eager
