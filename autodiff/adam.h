#pragma once

// Adam, with the numerics and variable layout of TensorFlow.
//
// Two modes:
//  - Keras OptimizerV2 (default; tf.keras.optimizers.Adam of TF 2.0-2.10,
//    FORMAT.md 7.1, 7.3): defaults lr 0.001, beta_1 0.9, beta_2 0.999,
//    epsilon 1e-7, decay 0. Children "iter" (int64 "Adam/iter"), then the
//    float32 hyper-parameters "beta_1", "beta_2", "decay", "learning_rate"
//    ("Adam/beta_1", ...). Slots "m" and "v" per variable, named
//    "Adam/<variable>/m" and "Adam/<variable>/v". Step t = iter + 1 uses
//    beta^t computed with pow.
//  - TF1 compatible (tf.compat.v1.train.AdamOptimizer, FORMAT.md 5.3, 7.2):
//    epsilon defaults to 1e-8; no "iter" or hyper-parameter variables; on
//    the first step two float32 scalars "beta1_power" and "beta2_power"
//    (children of the same names) are created in the name scope current
//    then, starting at beta1 and beta2 and multiplied by them in float32
//    after every step (denormals kept, as TF: the powers are products, not
//    pow). Slots "m" and "v" are named "<variable>/Adam" and
//    "<variable>/Adam_1". This is what the name-based Saver needs to read and
//    write TF1 Adam checkpoints.
//
// The update, in the variable's dtype (hyper-parameters cast from float32;
// Keras's epsilon is converted directly), for each variable with a gradient:
//   alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
//   m    += (grad - m) * (1 - beta1)
//   v    += (grad * grad - v) * (1 - beta2)
//   var  -= (m * alpha) / (sqrt(v) + epsilon)
// with lr = learning_rate / (1 + decay * iterations) when decay > 0 (Keras).
// float32 and float64 variables only.
//
// amsgrad (Keras mode; Reddi et al., "On the Convergence of Adam and
// Beyond"): a third slot "vhat" per variable ("Adam/<variable>/vhat", after
// all "m" and "v" slots, as OptimizerV2's _create_slots), and TF's
// ApplyAdamWithAmsgrad kernel: m and v as above, then
//   vhat = max(vhat, v)
//   var -= (m * alpha) / (sqrt(vhat) + epsilon)
//
// Gradient clipping (clipnorm, clipvalue, global_clipnorm): Optimizer's
// GradientClipping, settable here through AdamOptions.
//
// AdamW (Loshchilov and Hutter, "Decoupled Weight Decay Regularization"),
// as keras.optimizers.AdamW and tf_keras.optimizers.AdamW (Keras's default
// weight_decay is 0.004):
//   eager::Adam adamw({.weight_decay = 0.004, .name = "AdamW"});
// Before each variable's Adam update, with lr the learning-rate variable
// cast to the variable's dtype T and weight_decay converted to T:
//   var -= (var * weight_decay) * lr
// Only in the Keras 3 and tf_keras 2.11+ layouts (their AdamW's checkpoint
// is their Adam's): such an Adam starts in kKeras3 and refuses
// kKeras2Legacy and tf1_compatible.

#include <optional>
#include <string_view>

#include "autodiff/optimizer.h"
#include "runtime/graph.h"

namespace eager {

struct AdamOptions {
  double learning_rate = 0.001;
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  // Default: 1e-7 (Keras) or 1e-8 (tf1_compatible).
  std::optional<double> epsilon;
  double decay = 0.0;    // Keras mode only
  bool amsgrad = false;  // Keras mode only
  // Keras's floatx, the learning-rate variable's dtype; float64 only in the
  // keras3 and keras2 layouts (OptimizerV2 keeps its hyper-parameters
  // float32), so such an optimizer starts in kKeras3. Keras mode only.
  DType floatx = DType::kFloat32;
  // AdamW's decoupled weight decay (see above). REQUIRES: >= 0.
  std::optional<double> weight_decay = std::nullopt;
  GradientClipping clipping = {};
  bool tf1_compatible = false;
  std::string_view name = "Adam";
};

class Adam final : public Optimizer {
 public:
  // Keras mode. Throws InvalidArgumentError for a negative learning rate or
  // epsilon, or a beta outside [0, 1).
  explicit Adam(double learning_rate = 0.001, double beta_1 = 0.9, double beta_2 = 0.999,
                double epsilon = 1e-7);
  explicit Adam(const AdamOptions& options);
  ~Adam() override;

  // The eager step: Optimizer::Minimize(loss_fn, var_list).
  using Optimizer::Minimize;

  // TF1 graph mode, tf.compat.v1.train.AdamOptimizer(...).minimize(loss):
  // adds to the default graph the gradients of `loss` with respect to
  // `var_list` (default: the graph's trainable variables; graph gradients
  // under "gradients/", autodiff/graph_gradients.h), then what TF1's
  // apply_gradients adds: on the first call "beta1_power" and "beta2_power"
  // (global, not trainable, in the name scope current then), the slots
  // "<v>/Adam" and "<v>/Adam_1" of each variable with a gradient, and in a
  // unique name scope "Adam": Consts learning_rate, beta1, beta2, epsilon
  // (float32), one "update_<v>/ApplyAdam" per variable (ops/training_ops.h),
  // then "mul"/"Assign" and "mul_1"/"Assign_1" advancing the powers after
  // every update, and the group "Adam" that it returns. Each Session::Run of
  // it is one step with the same bits as an eager TF1 Adam step. Unlike
  // TF1's default, the updates also wait for every gradient (TF's
  // GATE_GRAPH), as a Session runs one node at a time and an update must not
  // run before another gradient has read the variable. REQUIRES:
  // tf1_compatible() (else FailedPreconditionError) and a default graph.
  // Throws InvalidArgumentError when no variable gets a gradient.
  Operation Minimize(const Tensor& loss, std::vector<Variable*> var_list = {});

  // Trackable: as Optimizer (with amsgrad the newer layouts' "_variables"
  // lists every m and v, then every vhat, and "_velocity_hats/N"); with
  // weight_decay only kKeras3 and kKeras2 (else UnimplementedError).
  void UseKerasLayout(KerasLayout layout) override;

  bool tf1_compatible() const { return tf1_; }
  bool amsgrad() const { return amsgrad_; }
  std::optional<double> weight_decay() const { return weight_decay_; }
  double epsilon() const { return epsilon_; }

  // Keras mode: the hyper-parameter variables, float32 (the learning rate:
  // floatx) (Assign to change
  // them). REQUIRES: !tf1_compatible() (else FailedPreconditionError).
  Variable& learning_rate() const;
  Variable& beta_1() const;
  Variable& beta_2() const;
  Variable& decay() const;

  // TF1 mode: the accumulated powers, nullptr before the first step (and
  // always in Keras mode).
  Variable* beta1_power() const { return beta1_power_; }
  Variable* beta2_power() const { return beta2_power_; }

 private:
  void CreateSlots(const Variable& variable) override;
  void PrepareStep() override;
  void ApplyDense(const Tensor& grad, Variable& variable) override;
  void ApplyDenseWithSquares(const Tensor& grad, const Tensor& grad_squares,
                             Variable& variable) override;
  // Both: `squares` null means grad * grad.
  void Update(const Tensor& grad, const Tensor* squares, Variable& variable);
  void FinishStep() override;
  void CreatePowers();  // TF1 mode: beta1_power, beta2_power, once
  Variable& Hyper(Variable* hyper, const char* what) const;

  bool tf1_;
  bool amsgrad_;
  std::optional<double> weight_decay_;
  double epsilon_;
  bool use_decay_ = false;
  // TF1 mode: Python-float hyper-parameters, as TF1 holds them.
  double lr_value_, beta_1_value_, beta_2_value_;
  // Keras mode.
  Variable* beta_1_ = nullptr;
  Variable* beta_2_ = nullptr;
  Variable* decay_ = nullptr;
  Variable* learning_rate_ = nullptr;
  // TF1 mode.
  Variable* beta1_power_ = nullptr;
  Variable* beta2_power_ = nullptr;
  // Per step, read once in PrepareStep: float32 views of the scalars.
  float beta1_32_ = 0, beta2_32_ = 0, beta1_power32_ = 0, beta2_power32_ = 0;
  double lr_ = 0;     // the learning rate's value (float32 or float64)
  int64_t step_ = 0;  // iterations before this step (Keras)
};

}  // namespace eager
