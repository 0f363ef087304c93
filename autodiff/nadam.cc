#include "autodiff/nadam.h"

#include <cmath>
#include <string>

#include "autodiff/internal/held_update.h"
#include "ops/fp_contract_off.h"

namespace eager {

Nadam::Nadam(const NadamOptions& options) : Optimizer(options.name, {"m", "v"}), options_(options) {
  EAGER_CHECK(options.learning_rate >= 0.0, "Nadam '", name(),
              "': learning_rate must be >= 0, got ", options.learning_rate);
  EAGER_CHECK(options.beta_1 >= 0.0 && options.beta_1 < 1.0, "Nadam '", name(),
              "': beta_1 must be in [0, 1), got ", options.beta_1);
  EAGER_CHECK(options.beta_2 >= 0.0 && options.beta_2 < 1.0, "Nadam '", name(),
              "': beta_2 must be in [0, 1), got ", options.beta_2);
  EAGER_CHECK(options.epsilon >= 0.0, "Nadam '", name(), "': epsilon must be >= 0, got ",
              options.epsilon);
  SetGradientClipping(options.clipping);
  SetSlotListNames({"_momentums", "_velocities"});
  learning_rate_ = &AddHyper("learning_rate", options.learning_rate, options.floatx);
  UseKerasLayout(options.layout);
}

Nadam::~Nadam() = default;

void Nadam::UseKerasLayout(KerasLayout layout) {
  if (layout == KerasLayout::kKeras2Legacy) {
    throw UnimplementedError(StrCat("Nadam '", name(),
                                    "': the keras2_legacy (OptimizerV2) checkpoint layout is not "
                                    "supported; use keras3 or keras2"));
  }
  Optimizer::UseKerasLayout(layout);
}

void Nadam::CreateSlots(const Variable& variable) {
  const std::string var_name(variable.shared_name());
  AddSlot(variable, "m", scope(), var_name + "/m");
  AddSlot(variable, "v", scope(), var_name + "/v");
  if (u_product_ == nullptr) {
    // Keras's build: 1.0 in the dtype of the first variable.
    const Tensor one = variable.dtype() == DType::kFloat64 ? Tensor(1.0) : Tensor(1.0f);
    u_product_ = &AddKerasStateVariable("_u_product", one, "u_product",
                                        /*in_keras3_variables=*/true);
    tf_keras_counter_ = 1;
  }
}

void Nadam::PrepareStep() {
  step_ = iterations();
  if (keras_layout() != KerasLayout::kKeras3) return;
  // Keras 3's _backend_update_step, in u_product's dtype U.
  VisitFloatDType(u_product_->dtype(), "Nadam u_product", [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U u = u_product_->value().scalar<U>();
    const U schedule = U(1) - U(0.5) * std::pow(static_cast<U>(0.96), static_cast<U>(step_ + 1));
    u_product_->Assign(Tensor((u * static_cast<U>(options_.beta_1)) * schedule));
  });
}

void Nadam::ApplyDense(const Tensor& grad, Variable& variable) { Update(grad, nullptr, variable); }

void Nadam::ApplyDenseWithSquares(const Tensor& grad, const Tensor& grad_squares,
                                  Variable& variable) {
  Update(grad, &grad_squares, variable);
}

void Nadam::Update(const Tensor& grad, const Tensor* squares, Variable& variable) {
  VisitFloatDType(variable.dtype(), "Nadam", [&](auto tag) {
    using T = typename decltype(tag)::type;
    EAGER_CHECK(u_product_->dtype() == variable.dtype(), "Nadam '", name(), "': variable '",
                variable.shared_name(), "' is ", variable.dtype(), " but u_product is ",
                u_product_->dtype(), " (Keras makes it in the first variable's dtype)");
    const T lr = static_cast<T>(ScalarValue(*learning_rate_));
    const T local_step = static_cast<T>(step_ + 1);
    const T next_step = static_cast<T>(step_ + 2);
    const T decay = static_cast<T>(0.96);
    const T beta_1 = static_cast<T>(options_.beta_1);
    const T beta_2 = static_cast<T>(options_.beta_2);
    const T epsilon = static_cast<T>(options_.epsilon);
    const T u_t = beta_1 * (T(1) - T(0.5) * std::pow(decay, local_step));
    const T u_t_1 = beta_1 * (T(1) - T(0.5) * std::pow(decay, next_step));
    T u_product_t = u_product_->value().scalar<T>();
    if (keras_layout() == KerasLayout::kKeras2 && tf_keras_counter_ != step_ + 2) {
      u_product_t = u_product_t * u_t;
      u_product_->Assign(Tensor(u_product_t));
      ++tf_keras_counter_;
    }
    const T u_product_t_1 = u_product_t * u_t_1;
    const T beta_2_power = std::pow(beta_2, local_step);
    internal::HeldUpdate held;
    T* __restrict m = held.Hold<T>(*GetSlot(variable, "m"));
    T* __restrict v = held.Hold<T>(*GetSlot(variable, "v"));
    T* __restrict x = held.Hold<T>(variable);
    const T* __restrict g = grad.data<T>().data();
    const T* __restrict g2 = squares != nullptr ? squares->data<T>().data() : nullptr;
    const auto n = static_cast<size_t>(grad.num_elements());
    for (size_t i = 0; i < n; ++i) {
      m[i] = m[i] + (g[i] - m[i]) * (T(1) - beta_1);
      v[i] = v[i] + ((g2 != nullptr ? g2[i] : g[i] * g[i]) - v[i]) * (T(1) - beta_2);
      const T m_hat =
          (u_t_1 * m[i]) / (T(1) - u_product_t_1) + ((T(1) - u_t) * g[i]) / (T(1) - u_product_t);
      const T v_hat = v[i] / (T(1) - beta_2_power);
      x[i] = x[i] - (m_hat * lr) / (std::sqrt(v_hat) + epsilon);
    }
    held.Commit();
  });
}

}  // namespace eager
