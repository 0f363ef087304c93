#pragma once

// Adagrad as Keras 3 (keras.optimizers.Adagrad) and tf_keras 2.11+
// (tf_keras.optimizers.Adagrad) compute and checkpoint it (Duchi et al.,
// "Adaptive Subgradient Methods", 2011).
//
//   eager::Adagrad optimizer({.learning_rate = 0.1});
//
// Per step, in the variable's dtype T, with lr the float32 learning-rate
// variable cast to T and epsilon converted to T:
//   accumulator += grad^2
//   var -= (lr * grad) / sqrt(accumulator + epsilon)
// Each accumulator starts at initial_accumulator_value (converted to T).
//
// Checkpoint (kKeras3, the default, or kKeras2; not the legacy OptimizerV2
// layout): "_iterations", "_learning_rate", "_accumulators/N" per variable,
// "_variables/N" (iterations, in Keras 3 the learning rate, then the
// accumulators). Slot "accumulator" (GetSlot), named
// "Adagrad/<variable>/accumulator". float32 and float64 variables.

#include <string_view>

#include "autodiff/optimizer.h"

namespace eager {

struct AdagradOptions {
  double learning_rate = 0.001;
  double initial_accumulator_value = 0.1;  // REQUIRES: >= 0
  double epsilon = 1e-7;                   // REQUIRES: >= 0
  GradientClipping clipping = {};
  // Keras's floatx: the dtype of the learning-rate variable in the keras3
  // and keras2 layouts (keras.backend.set_floatx("float64") makes TF's
  // "_learning_rate" float64). float32 or float64.
  DType floatx = DType::kFloat32;
  KerasLayout layout = KerasLayout::kKeras3;  // kKeras3 or kKeras2
  std::string_view name = "Adagrad";
};

class Adagrad final : public Optimizer {
 public:
  // Throws InvalidArgumentError for an option out of its range, and
  // UnimplementedError for the kKeras2Legacy layout.
  explicit Adagrad(const AdagradOptions& options = {});
  ~Adagrad() override;

  // The float32 learning-rate variable ("_learning_rate"); Assign to change.
  Variable& learning_rate() const { return *learning_rate_; }
  const AdagradOptions& options() const { return options_; }

  // Trackable: kKeras3 and kKeras2 only (else UnimplementedError).
  void UseKerasLayout(KerasLayout layout) override;

 private:
  void CreateSlots(const Variable& variable) override;
  void ApplyDense(const Tensor& grad, Variable& variable) override;
  void ApplyDenseWithSquares(const Tensor& grad, const Tensor& grad_squares,
                             Variable& variable) override;
  // Both: `squares` null means grad * grad.
  void Update(const Tensor& grad, const Tensor* squares, Variable& variable);

  AdagradOptions options_;
  Variable* learning_rate_ = nullptr;
};

}  // namespace eager
