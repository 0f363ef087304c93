#pragma once

// RMSprop as Keras 3 (keras.optimizers.RMSprop) and tf_keras 2.11+
// (tf_keras.optimizers.RMSprop) compute and checkpoint it.
//
//   eager::RMSprop optimizer({.learning_rate = 0.01, .momentum = 0.9});
//   optimizer.Minimize(loss_fn, model.TrainableVariables());
//
// Per step, in the variable's dtype T, with lr the float32 learning-rate
// variable cast to T, rho, momentum and epsilon converted to T, and 1 - rho
// taken in double then rounded to T (Keras's Python floats):
//   velocity = rho * velocity + (1 - rho) * grad^2
//   centered:  average_gradient = rho * average_gradient + (1 - rho) * grad
//              denominator = velocity - average_gradient^2 + epsilon
//   else:      denominator = velocity + epsilon
//   increment = lr * grad / sqrt(denominator)   (Keras 3: (lr * grad) / sqrt;
//                                               tf_keras: (lr * grad) * rsqrt,
//                                               here (lr * grad) * (1 / sqrt))
//   momentum > 0:  momentum_slot = momentum * momentum_slot + increment
//                  var -= momentum_slot
//   else:          var -= increment
//
// Checkpoint (kKeras3, the default, or kKeras2; the legacy OptimizerV2
// layout is not supported): "_iterations", "_learning_rate", and the lists
// "_velocities/N", "_momentums/N" (momentum > 0), "_average_gradients/N"
// (centered), one item per variable; "_variables/N" lists iterations (and
// in Keras 3 the learning rate), then every velocity, then every momentum,
// then every average gradient (one Keras add_optimizer_variables call per
// kind). Slots "velocity", "momentum", "average_gradient" (GetSlot), named
// "RMSprop/<variable>/<slot>". float32 and float64 variables.

#include <string_view>

#include "autodiff/optimizer.h"

namespace eager {

struct RMSpropOptions {
  double learning_rate = 0.001;
  double rho = 0.9;       // REQUIRES: in [0, 1]
  double momentum = 0.0;  // REQUIRES: >= 0
  double epsilon = 1e-7;  // REQUIRES: >= 0
  bool centered = false;
  GradientClipping clipping = {};
  // Keras's floatx: the dtype of the learning-rate variable in the keras3
  // and keras2 layouts (keras.backend.set_floatx("float64") makes TF's
  // "_learning_rate" float64). float32 or float64.
  DType floatx = DType::kFloat32;
  KerasLayout layout = KerasLayout::kKeras3;  // kKeras3 or kKeras2
  std::string_view name = "RMSprop";
};

class RMSprop final : public Optimizer {
 public:
  // Throws InvalidArgumentError for an option out of its range, and
  // UnimplementedError for the kKeras2Legacy layout.
  explicit RMSprop(const RMSpropOptions& options = {});
  ~RMSprop() override;

  // The float32 learning-rate variable ("_learning_rate"); Assign to change.
  Variable& learning_rate() const { return *learning_rate_; }
  const RMSpropOptions& options() const { return options_; }

  // Trackable: kKeras3 and kKeras2 only (else UnimplementedError).
  void UseKerasLayout(KerasLayout layout) override;

 private:
  void CreateSlots(const Variable& variable) override;
  void ApplyDense(const Tensor& grad, Variable& variable) override;
  void ApplyDenseWithSquares(const Tensor& grad, const Tensor& grad_squares,
                             Variable& variable) override;
  // Both: `squares` null means grad * grad.
  void Update(const Tensor& grad, const Tensor* squares, Variable& variable);

  RMSpropOptions options_;
  Variable* learning_rate_ = nullptr;
};

}  // namespace eager
