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

#include <string_view>

#include "autodiff/optimizer.h"

namespace eager {

struct SGDOptions {
  double learning_rate = 0.01;
  double momentum = 0.0;  // REQUIRES: in [0, 1]
  bool nesterov = false;
  double decay = 0.0;  // REQUIRES: >= 0
  std::string_view name = "SGD";
};

class SGD final : public Optimizer {
 public:
  // Throws InvalidArgumentError for a momentum outside [0, 1] or a negative
  // learning rate or decay.
  explicit SGD(double learning_rate = 0.01, double momentum = 0.0, bool nesterov = false);
  explicit SGD(const SGDOptions& options);
  ~SGD() override;

  // The hyper-parameter variables (float32 scalars); Assign to change them.
  Variable& learning_rate() const { return *learning_rate_; }
  Variable& momentum() const { return *momentum_; }
  Variable& decay() const { return *decay_; }
  bool nesterov() const { return nesterov_; }

 private:
  void CreateSlots(const Variable& variable) override;
  void ApplyDense(const Tensor& grad, Variable& variable) override;

  bool use_momentum_;
  bool nesterov_;
  bool use_decay_;
  Variable* decay_ = nullptr;
  Variable* learning_rate_ = nullptr;
  Variable* momentum_ = nullptr;
};

}  // namespace eager
