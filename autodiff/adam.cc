#include "autodiff/adam.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "autodiff/internal/writable_value.h"
#include "ops/apply_adam.h"
#include "runtime/names.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

AdamOptions MakeOptions(double learning_rate, double beta_1, double beta_2, double epsilon) {
  AdamOptions o;
  o.learning_rate = learning_rate;
  o.beta_1 = beta_1;
  o.beta_2 = beta_2;
  o.epsilon = epsilon;
  return o;
}

// TF's ApplyAdam / ApplyAdamWithAmsgrad CPU functors, element by element in
// their order, for the rarer paths: amsgrad (`vhat_slot`) and a square of
// the gradient given apart (`squares`, Keras 3's IndexedSlices), either may
// be null. Into new buffers, kept simple.
template <typename T>
void ApplyAdamElementwise(const Tensor& grad, const Tensor* squares, Variable& variable,
                          Variable& m_slot, Variable& v_slot, Variable* vhat_slot, T lr,
                          T one_minus_beta1, T one_minus_beta2, T beta1_power, T beta2_power,
                          T epsilon) {
  const auto hold_value = internal::LockVariable(variable);
  const auto hold_m = internal::LockVariable(m_slot);
  const auto hold_v = internal::LockVariable(v_slot);
  std::unique_lock<std::recursive_mutex> hold_vhat;
  if (vhat_slot != nullptr) hold_vhat = internal::LockVariable(*vhat_slot);
  const Tensor var_in = variable.value(), m_in = m_slot.value(), v_in = v_slot.value();
  const Tensor vhat_in = vhat_slot != nullptr ? vhat_slot->value() : Tensor();
  Tensor var_out = internal::NewTensor(var_in.shape(), var_in.dtype());
  Tensor m_out = internal::NewTensor(m_in.shape(), m_in.dtype());
  Tensor v_out = internal::NewTensor(v_in.shape(), v_in.dtype());
  Tensor vhat_out =
      vhat_slot != nullptr ? internal::NewTensor(vhat_in.shape(), vhat_in.dtype()) : Tensor();
  const T* g = grad.data<T>().data();
  const T* g2 = squares != nullptr ? squares->data<T>().data() : nullptr;
  const T* var = var_in.data<T>().data();
  const T* m = m_in.data<T>().data();
  const T* v = v_in.data<T>().data();
  const T* vhat = vhat_slot != nullptr ? vhat_in.data<T>().data() : nullptr;
  T* var_o = internal::MutableData<T>(var_out);
  T* m_o = internal::MutableData<T>(m_out);
  T* v_o = internal::MutableData<T>(v_out);
  T* vhat_o = vhat_slot != nullptr ? internal::MutableData<T>(vhat_out) : nullptr;
  const T alpha = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
  const auto n = static_cast<size_t>(var_in.num_elements());
  for (size_t i = 0; i < n; ++i) {
    m_o[i] = m[i] + (g[i] - m[i]) * one_minus_beta1;
    v_o[i] = v[i] + ((g2 != nullptr ? g2[i] : g[i] * g[i]) - v[i]) * one_minus_beta2;
    T denominator = v_o[i];
    if (vhat != nullptr) {
      vhat_o[i] = std::max(vhat[i], v_o[i]);  // Eigen's cwiseMax
      denominator = vhat_o[i];
    }
    var_o[i] = var[i] - (m_o[i] * alpha) / (std::sqrt(denominator) + epsilon);
  }
  m_slot.Assign(m_out);
  v_slot.Assign(v_out);
  if (vhat_slot != nullptr) vhat_slot->Assign(vhat_out);
  variable.Assign(var_out);
}

}  // namespace

Adam::Adam(double learning_rate, double beta_1, double beta_2, double epsilon)
    : Adam(MakeOptions(learning_rate, beta_1, beta_2, epsilon)) {}

Adam::Adam(const AdamOptions& options)
    : Optimizer(options.name,
                options.amsgrad ? std::vector<std::string>{"m", "v", "vhat"}
                                : std::vector<std::string>{"m", "v"},
                /*keras_variables=*/!options.tf1_compatible),
      tf1_(options.tf1_compatible),
      amsgrad_(options.amsgrad),
      weight_decay_(options.weight_decay),
      epsilon_(options.epsilon ? *options.epsilon : (options.tf1_compatible ? 1e-8 : 1e-7)),
      lr_value_(options.learning_rate),
      beta_1_value_(options.beta_1),
      beta_2_value_(options.beta_2) {
  EAGER_CHECK(options.learning_rate >= 0.0, "Adam '", name(), "': learning_rate must be >= 0, got ",
              options.learning_rate);
  EAGER_CHECK(options.beta_1 >= 0.0 && options.beta_1 < 1.0, "Adam '", name(),
              "': beta_1 must be in [0, 1), got ", options.beta_1);
  EAGER_CHECK(options.beta_2 >= 0.0 && options.beta_2 < 1.0, "Adam '", name(),
              "': beta_2 must be in [0, 1), got ", options.beta_2);
  EAGER_CHECK(epsilon_ >= 0.0, "Adam '", name(), "': epsilon must be >= 0, got ", epsilon_);
  EAGER_CHECK(options.decay >= 0.0, "Adam '", name(), "': decay must be >= 0, got ", options.decay);
  EAGER_CHECK(!tf1_ || options.decay == 0.0, "Adam '", name(),
              "': decay is a Keras option; TF1 AdamOptimizer has none (got ", options.decay, ")");
  EAGER_CHECK(!tf1_ || !amsgrad_, "Adam '", name(),
              "': amsgrad is a Keras option; TF1 AdamOptimizer has none");
  EAGER_CHECK(!weight_decay_ || *weight_decay_ >= 0.0, "Adam '", name(),
              "': weight_decay must be >= 0, got ", weight_decay_.value_or(0));
  EAGER_CHECK(!tf1_ || !weight_decay_, "Adam '", name(),
              "': weight_decay (AdamW) is a Keras 3 / tf_keras option; TF1 AdamOptimizer has none");
  SetGradientClipping(options.clipping);
  if (tf1_) return;
  SetSlotListNames(amsgrad_
                       ? std::vector<std::string>{"_momentums", "_velocities", "_velocity_hats"}
                       : std::vector<std::string>{"_momentums", "_velocities"});
  // Keras builds every m and v, then every vhat (a second call).
  if (amsgrad_) SetSlotGroups({2, 1});
  use_decay_ = options.decay > 0.0;
  // Sorted order, as Keras lists hyper-parameters in the object graph.
  beta_1_ = &AddHyper("beta_1", options.beta_1);
  beta_2_ = &AddHyper("beta_2", options.beta_2);
  decay_ = &AddHyper("decay", options.decay);
  learning_rate_ = &AddHyper("learning_rate", options.learning_rate, options.floatx);
  if (weight_decay_ || options.floatx != DType::kFloat32) UseKerasLayout(KerasLayout::kKeras3);
}

Adam::~Adam() = default;

void Adam::UseKerasLayout(KerasLayout layout) {
  if (weight_decay_ && layout == KerasLayout::kKeras2Legacy) {
    throw UnimplementedError(StrCat("Adam '", name(),
                                    "': weight_decay (AdamW) exists only in the keras3 and keras2 "
                                    "checkpoint layouts, not keras2_legacy (OptimizerV2)"));
  }
  Optimizer::UseKerasLayout(layout);
}

Variable& Adam::Hyper(Variable* hyper, const char* what) const {
  if (hyper == nullptr) {
    throw FailedPreconditionError(StrCat("Adam '", name(), "': ", what,
                                         " is a Keras hyper-parameter variable; a TF1-compatible",
                                         " Adam holds it as a constant"));
  }
  return *hyper;
}

Variable& Adam::learning_rate() const { return Hyper(learning_rate_, "learning_rate"); }
Variable& Adam::beta_1() const { return Hyper(beta_1_, "beta_1"); }
Variable& Adam::beta_2() const { return Hyper(beta_2_, "beta_2"); }
Variable& Adam::decay() const { return Hyper(decay_, "decay"); }

void Adam::CreateSlots(const Variable& variable) {
  const std::string var_name(variable.shared_name());
  if (tf1_) {
    // slot_creator scopes each slot under "<var>/<optimizer name>", made
    // unique (a variable scope's default name, eagerly too), so the second
    // is "<var>/Adam_1". Where variable names are made unique that happens
    // anyway; else (TF2's eager names) ask here.
    const std::string slot_scope = var_name + "/";
    for (const char* slot : {"m", "v"}) {
      const std::string unique = VariableNamesAreUnique()
                                     ? std::string(name())
                                     : DefaultNames()
                                           .UniqueName(slot_scope + std::string(name()))
                                           .substr(slot_scope.size());
      AddSlot(variable, slot, slot_scope, unique);
    }
  } else {
    AddSlot(variable, "m", scope(), var_name + "/m");
    AddSlot(variable, "v", scope(), var_name + "/v");
    if (amsgrad_) AddSlot(variable, "vhat", scope(), var_name + "/vhat");
  }
}

void Adam::CreatePowers() {
  if (beta1_power_ != nullptr) return;
  // Created on the first step in the caller's current name scope, as TF1's
  // _create_non_slot_variable.
  beta1_power_ =
      &AddOwnedVariable("beta1_power", Tensor(static_cast<float>(beta_1_value_)), "beta1_power");
  beta2_power_ =
      &AddOwnedVariable("beta2_power", Tensor(static_cast<float>(beta_2_value_)), "beta2_power");
}

void Adam::PrepareStep() {
  if (tf1_) {
    CreatePowers();
    // TF1 converts the Python floats to float32 tensors once (_prepare).
    lr_ = static_cast<float>(lr_value_);
    beta1_32_ = static_cast<float>(beta_1_value_);
    beta2_32_ = static_cast<float>(beta_2_value_);
    beta1_power32_ = beta1_power_->value().scalar<float>();
    beta2_power32_ = beta2_power_->value().scalar<float>();
  } else {
    lr_ = ScalarValue(*learning_rate_);
    beta1_32_ = beta_1_->value().scalar<float>();
    beta2_32_ = beta_2_->value().scalar<float>();
    step_ = iterations();
  }
}

void Adam::ApplyDense(const Tensor& grad, Variable& variable) { Update(grad, nullptr, variable); }

void Adam::ApplyDenseWithSquares(const Tensor& grad, const Tensor& grad_squares,
                                 Variable& variable) {
  Update(grad, &grad_squares, variable);
}

void Adam::Update(const Tensor& grad, const Tensor* squares, Variable& variable) {
  VisitFloatDType(variable.dtype(), "Adam", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T lr = static_cast<T>(lr_);
    // Keras 3 and tf_keras 2.11+ keep the betas as Python floats: the powers
    // cast them to T (tf.cast(self.beta_1, dtype)), and 1 - beta is taken in
    // double and rounded to T after (1 - self.beta_2 times a T tensor).
    // OptimizerV2 and TF1 use float32 tensors and subtract in T.
    const bool python_betas = !tf1_ && keras_layout() != KerasLayout::kKeras2Legacy;
    const T beta1 = python_betas ? static_cast<T>(beta_1_value_) : static_cast<T>(beta1_32_);
    const T beta2 = python_betas ? static_cast<T>(beta_2_value_) : static_cast<T>(beta2_32_);
    const T one_minus_beta1 = python_betas ? static_cast<T>(1.0 - beta_1_value_) : T(1) - beta1;
    const T one_minus_beta2 = python_betas ? static_cast<T>(1.0 - beta_2_value_) : T(1) - beta2;
    T beta1_power, beta2_power, epsilon;
    if (tf1_) {
      beta1_power = static_cast<T>(beta1_power32_);
      beta2_power = static_cast<T>(beta2_power32_);
      epsilon = static_cast<T>(static_cast<float>(epsilon_));  // a float32 tensor, cast
    } else {
      // Keras _prepare_local: local_step = cast(iterations + 1), powers by pow.
      if (use_decay_) {
        const T decay = static_cast<T>(decay_->value().scalar<float>());
        lr = lr / (T(1) + decay * static_cast<T>(step_));
      }
      const T local_step = static_cast<T>(step_ + 1);
      beta1_power = std::pow(beta1, local_step);
      beta2_power = std::pow(beta2, local_step);
      epsilon = static_cast<T>(epsilon_);  // convert_to_tensor(epsilon, var_dtype)
    }
    if (weight_decay_) {
      // Keras's _apply_weight_decay, before the update: var - var * wd * lr,
      // lr the learning-rate variable (not decayed), all in T.
      const auto hold = internal::LockVariable(variable);
      Tensor decayed = internal::WritableValue(variable);
      T* __restrict x = internal::MutableData<T>(decayed);
      const T wd = static_cast<T>(*weight_decay_);
      const T lr_t = static_cast<T>(lr_);
      const auto n = static_cast<size_t>(decayed.num_elements());
      for (size_t i = 0; i < n; ++i) x[i] = x[i] - (x[i] * wd) * lr_t;
      variable.Assign(decayed);
    }
    Variable& m_slot = *GetSlot(variable, "m");
    Variable& v_slot = *GetSlot(variable, "v");
    if (amsgrad_ || squares != nullptr) {
      ApplyAdamElementwise<T>(grad, squares, variable, m_slot, v_slot,
                              amsgrad_ ? GetSlot(variable, "vhat") : nullptr, lr, one_minus_beta1,
                              one_minus_beta2, beta1_power, beta2_power, epsilon);
      return;
    }
    // Held until the three Assigns: a save on another thread sees each of
    // them before or after this step, never half-written (WritableValue).
    const auto hold_value = internal::LockVariable(variable);
    const auto hold_m = internal::LockVariable(m_slot);
    const auto hold_v = internal::LockVariable(v_slot);
    internal::UpdateTarget value = internal::UpdateTargetOf(variable);
    internal::UpdateTarget m = internal::UpdateTargetOf(m_slot);
    internal::UpdateTarget v = internal::UpdateTargetOf(v_slot);
    const auto n = static_cast<size_t>(value.in.num_elements());
    if (value.in_place() && m.in_place() && v.in_place()) {
      internal::ApplyAdamKernel<T>(n, grad.data<T>().data(), internal::MutableData<T>(value.out),
                                   internal::MutableData<T>(m.out), internal::MutableData<T>(v.out),
                                   lr, one_minus_beta1, one_minus_beta2, beta1_power, beta2_power,
                                   epsilon);
    } else {
      // Someone (a save in progress) still holds a value: write all three
      // into new buffers in one pass (fresh ones for any that were not).
      for (internal::UpdateTarget* target : {&value, &m, &v}) {
        if (target->in_place())
          target->out = internal::NewTensor(target->in.shape(), target->in.dtype());
      }
      internal::ApplyAdamKernelTo<T>(
          n, grad.data<T>().data(), value.in.data<T>().data(), m.in.data<T>().data(),
          v.in.data<T>().data(), internal::MutableData<T>(value.out),
          internal::MutableData<T>(m.out), internal::MutableData<T>(v.out), lr, one_minus_beta1,
          one_minus_beta2, beta1_power, beta2_power, epsilon);
    }
    m_slot.Assign(m.out);
    v_slot.Assign(v.out);
    variable.Assign(value.out);
  });
}

void Adam::FinishStep() {
  if (!tf1_) return;
  // float32 products, denormals and all (FORMAT.md 7.2).
  beta1_power_->Assign(Tensor(beta1_power32_ * beta1_32_));
  beta2_power_->Assign(Tensor(beta2_power32_ * beta2_32_));
}

}  // namespace eager
