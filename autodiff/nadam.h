#pragma once

// Nadam (Dozat, "Incorporating Nesterov Momentum into Adam", 2016) as
// Keras 3 (keras.optimizers.Nadam) and tf_keras 2.11+
// (tf_keras.optimizers.Nadam) compute and checkpoint it.
//
//   eager::Nadam optimizer({.learning_rate = 0.002});
//
// State: slots "m" and "v" per variable and one scalar u_product (the
// running product of the momentum schedule u_t), 1 at first, of the first
// variable's dtype, made with the first slots. Per step t = iterations + 1,
// in the variable's dtype T (beta_1, beta_2, 0.96 and epsilon converted to
// T, lr the float32 learning-rate variable cast to T):
//   u_t   = beta_1 * (1 - 0.5 * 0.96^t),  u_t1 = beta_1 * (1 - 0.5 * 0.96^(t+1))
//   u_product *= u_t    (Keras 3: once per step before any update, as
//                        (u_product * beta_1) * (1 - 0.5 * 0.96^t);
//                        tf_keras: as u_product * u_t, guarded by a Python
//                        counter that starts at 1 on build and is not
//                        checkpointed, so after a restore tf_keras multiplies
//                        once per variable until it catches up: mirrored)
//   m += (grad - m) * (1 - beta_1),  v += (grad^2 - v) * (1 - beta_2)
//   m_hat = (u_t1 * m) / (1 - u_product * u_t1) + ((1 - u_t) * grad) / (1 - u_product)
//   v_hat = v / (1 - beta_2^t)
//   var  -= (m_hat * lr) / (sqrt(v_hat) + epsilon)
//
// Checkpoint (kKeras3, the default, or kKeras2): "_iterations",
// "_learning_rate", "_momentums/N", "_velocities/N", "_u_product";
// "_variables/N" lists iterations (Keras 3: and the learning rate), each
// variable's m and v, and in Keras 3 last u_product. float32 and float64.

#include <cstdint>
#include <string_view>

#include "autodiff/optimizer.h"

namespace eager {

struct NadamOptions {
  double learning_rate = 0.001;
  double beta_1 = 0.9;    // REQUIRES: in [0, 1)
  double beta_2 = 0.999;  // REQUIRES: in [0, 1)
  double epsilon = 1e-7;  // REQUIRES: >= 0
  GradientClipping clipping = {};
  // Keras's floatx: the dtype of the learning-rate variable in the keras3
  // and keras2 layouts (keras.backend.set_floatx("float64") makes TF's
  // "_learning_rate" float64). float32 or float64.
  DType floatx = DType::kFloat32;
  KerasLayout layout = KerasLayout::kKeras3;  // kKeras3 or kKeras2
  std::string_view name = "Nadam";
};

class Nadam final : public Optimizer {
 public:
  // Throws InvalidArgumentError for an option out of its range, and
  // UnimplementedError for the kKeras2Legacy layout.
  explicit Nadam(const NadamOptions& options = {});
  ~Nadam() override;

  // The float32 learning-rate variable ("_learning_rate"); Assign to change.
  Variable& learning_rate() const { return *learning_rate_; }
  // The "_u_product" variable, nullptr before the first slots exist.
  Variable* u_product() const { return u_product_; }
  const NadamOptions& options() const { return options_; }

  // Trackable: kKeras3 and kKeras2 only (else UnimplementedError).
  void UseKerasLayout(KerasLayout layout) override;

 private:
  void CreateSlots(const Variable& variable) override;
  void PrepareStep() override;
  void ApplyDense(const Tensor& grad, Variable& variable) override;
  void ApplyDenseWithSquares(const Tensor& grad, const Tensor& grad_squares,
                             Variable& variable) override;
  // Both: `squares` null means grad * grad.
  void Update(const Tensor& grad, const Tensor* squares, Variable& variable);

  NadamOptions options_;
  Variable* learning_rate_ = nullptr;
  Variable* u_product_ = nullptr;
  int64_t step_ = 0;              // iterations before this step
  int64_t tf_keras_counter_ = 1;  // tf_keras's _u_product_counter
};

}  // namespace eager
