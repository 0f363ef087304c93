#include "autodiff/adagrad.h"

#include <cmath>
#include <string>

#include "autodiff/internal/held_update.h"
#include "ops/fp_contract_off.h"

namespace eager {

Adagrad::Adagrad(const AdagradOptions& options)
    : Optimizer(options.name, {"accumulator"}), options_(options) {
  EAGER_CHECK(options.learning_rate >= 0.0, "Adagrad '", name(),
              "': learning_rate must be >= 0, got ", options.learning_rate);
  EAGER_CHECK(options.initial_accumulator_value >= 0.0, "Adagrad '", name(),
              "': initial_accumulator_value must be >= 0, got ", options.initial_accumulator_value);
  EAGER_CHECK(options.epsilon >= 0.0, "Adagrad '", name(), "': epsilon must be >= 0, got ",
              options.epsilon);
  SetGradientClipping(options.clipping);
  SetSlotListNames({"_accumulators"});
  learning_rate_ = &AddHyper("learning_rate", options.learning_rate, options.floatx);
  UseKerasLayout(options.layout);
}

Adagrad::~Adagrad() = default;

void Adagrad::UseKerasLayout(KerasLayout layout) {
  if (layout == KerasLayout::kKeras2Legacy) {
    throw UnimplementedError(StrCat("Adagrad '", name(),
                                    "': the keras2_legacy (OptimizerV2) checkpoint layout is not "
                                    "supported; use keras3 or keras2"));
  }
  Optimizer::UseKerasLayout(layout);
}

void Adagrad::CreateSlots(const Variable& variable) {
  AddSlot(variable, "accumulator", scope(), std::string(variable.shared_name()) + "/accumulator",
          options_.initial_accumulator_value);
}

void Adagrad::ApplyDense(const Tensor& grad, Variable& variable) {
  Update(grad, nullptr, variable);
}

void Adagrad::ApplyDenseWithSquares(const Tensor& grad, const Tensor& grad_squares,
                                    Variable& variable) {
  Update(grad, &grad_squares, variable);
}

void Adagrad::Update(const Tensor& grad, const Tensor* squares, Variable& variable) {
  VisitFloatDType(variable.dtype(), "Adagrad", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T lr = static_cast<T>(ScalarValue(*learning_rate_));
    const T epsilon = static_cast<T>(options_.epsilon);
    internal::HeldUpdate held;
    T* __restrict accumulator = held.Hold<T>(*GetSlot(variable, "accumulator"));
    T* __restrict x = held.Hold<T>(variable);
    const T* __restrict g = grad.data<T>().data();
    const T* __restrict g2 = squares != nullptr ? squares->data<T>().data() : nullptr;
    const auto n = static_cast<size_t>(grad.num_elements());
    for (size_t i = 0; i < n; ++i) {
      accumulator[i] = accumulator[i] + (g2 != nullptr ? g2[i] : g[i] * g[i]);
      x[i] = x[i] - (lr * g[i]) / std::sqrt(accumulator[i] + epsilon);
    }
    held.Commit();
  });
}

}  // namespace eager
