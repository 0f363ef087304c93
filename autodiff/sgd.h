#pragma once

// SGD: gradient descent with optional (Nesterov) momentum, as Keras
// OptimizerV2 tf.keras.optimizers.SGD (TF 2.0-2.10; FORMAT.md 7.5).
//
// Per step, in the variable's dtype, with lr = learning_rate (float32
// variable, cast) divided by (1 + decay * iterations) when decay > 0:
//   momentum == 0:  var -= grad * lr                       (ApplyGradientDescent)
//   otherwise:      accum = accum * momentum - grad * lr   (ApplyKerasMomentum)
//                   var += accum                          (plain)
//                   var += accum * momentum - grad * lr   (nesterov)
// Children: "iter", then "decay", "learning_rate", "momentum" (float32
// hyper-parameter variables "SGD/decay", ...). Slot "momentum" (accum,
// "SGD/<variable>/momentum") exists only when momentum != 0.
//
// In the kKeras3 and kKeras2 layouts (SetKerasLayout; Keras 3's and tf_keras
// 2.11+'s SGD) the update is the same with momentum the Python float cast
// to the variable's dtype (the "momentum" variable is not read), and the
// checkpoint holds "_iterations", "_learning_rate", "momentums/N" (the
// slots) and "_variables/N". tf_keras makes the slot with momentum 0 too
// (it then holds -grad * lr); Keras 3 only with momentum.

#include <string_view>
#include <vector>

#include "autodiff/optimizer.h"
#include "runtime/graph.h"

namespace eager {

struct SGDOptions {
  double learning_rate = 0.01;
  double momentum = 0.0;  // REQUIRES: in [0, 1]
  bool nesterov = false;
  double decay = 0.0;  // REQUIRES: >= 0
  // Keras's floatx, the learning-rate variable's dtype; float64 only in the
  // keras3 and keras2 layouts (OptimizerV2 keeps its hyper-parameters
  // float32), so such an optimizer starts in kKeras3. Keras mode only.
  DType floatx = DType::kFloat32;

  // TF1's tf.compat.v1.train.GradientDescentOptimizer (momentum == 0) or
  // MomentumOptimizer(use_nesterov = nesterov): no variables of its own
  // (the hyper-parameters are constants; no "iter"), the slot "<v>/<name>"
  // ("w/Momentum"), TF's update formulas (ops/training_ops.h: the
  // accumulator sums gradients, unlike Keras's), and Minimize(loss tensor)
  // in graph mode. The name defaults to TF1's: "GradientDescent" or
  // "Momentum". REQUIRES: decay == 0.
  bool tf1_compatible = false;
  std::string_view name = "SGD";
};

class SGD final : public Optimizer {
 public:
  // Throws InvalidArgumentError for a momentum outside [0, 1] or a negative
  // learning rate or decay.
  explicit SGD(double learning_rate = 0.01, double momentum = 0.0, bool nesterov = false);
  explicit SGD(const SGDOptions& options);
  ~SGD() override;

  // The eager step: Optimizer::Minimize(loss_fn, var_list).
  using Optimizer::Minimize;

  // TF1 graph mode, GradientDescentOptimizer / MomentumOptimizer
  // (...).minimize(loss), as Adam::Minimize(loss) (autodiff/adam.h): the
  // gradients of `loss` for `var_list` (default: the graph's trainable
  // variables), the slots "<v>/Momentum" (momentum only), and in a unique
  // name scope name(): Consts learning_rate (and momentum), float32, one
  // "update_<v>/ApplyGradientDescent" or "update_<v>/ApplyMomentum" per
  // variable (ops/training_ops.h, TF's attrs, use_nesterov), waiting for
  // every gradient, and the group name() it returns. REQUIRES:
  // tf1_compatible (else FailedPreconditionError) and a default graph.
  // Throws InvalidArgumentError when no variable gets a gradient.
  Operation Minimize(const Tensor& loss, std::vector<Variable*> var_list = {});

  bool tf1_compatible() const { return tf1_; }

  // Keras mode only (REQUIRES: !tf1_compatible()):
  // the hyper-parameter variables (float32 scalars; the learning rate:
  // floatx); Assign to change them.
  Variable& learning_rate() const { return *learning_rate_; }
  Variable& momentum() const { return *momentum_; }
  Variable& decay() const { return *decay_; }
  bool nesterov() const { return nesterov_; }

 private:
  void CreateSlots(const Variable& variable) override;
  void ApplyDense(const Tensor& grad, Variable& variable) override;

  // TF1 mode: the update of ApplyGradientDescent / ApplyMomentum.
  void ApplyTf1(const Tensor& grad, Variable& variable);

  bool tf1_ = false;
  double lr_value_ = 0.0;
  double momentum_value_ = 0.0;
  bool use_momentum_;
  bool nesterov_;
  bool use_decay_;
  Variable* decay_ = nullptr;
  Variable* learning_rate_ = nullptr;
  Variable* momentum_ = nullptr;
};

}  // namespace eager
