#include "autodiff/rmsprop.h"

#include <cmath>
#include <string>
#include <vector>

#include "autodiff/internal/held_update.h"
#include "ops/fp_contract_off.h"

namespace eager {
namespace {

std::vector<std::string> Pick(const RMSpropOptions& o, const char* velocity, const char* momentum,
                              const char* average) {
  std::vector<std::string> out{velocity};
  if (o.momentum > 0) out.emplace_back(momentum);
  if (o.centered) out.emplace_back(average);
  return out;
}

}  // namespace

RMSprop::RMSprop(const RMSpropOptions& options)
    : Optimizer(options.name, Pick(options, "velocity", "momentum", "average_gradient")),
      options_(options) {
  EAGER_CHECK(options.learning_rate >= 0.0, "RMSprop '", name(),
              "': learning_rate must be >= 0, got ", options.learning_rate);
  EAGER_CHECK(options.rho >= 0.0 && options.rho <= 1.0, "RMSprop '", name(),
              "': rho must be in [0, 1], got ", options.rho);
  EAGER_CHECK(options.momentum >= 0.0, "RMSprop '", name(), "': momentum must be >= 0, got ",
              options.momentum);
  EAGER_CHECK(options.epsilon >= 0.0, "RMSprop '", name(), "': epsilon must be >= 0, got ",
              options.epsilon);
  SetGradientClipping(options.clipping);
  SetSlotListNames(Pick(options, "_velocities", "_momentums", "_average_gradients"));
  SetSlotsGroupedByKind(true);
  learning_rate_ = &AddHyper("learning_rate", options.learning_rate, options.floatx);
  UseKerasLayout(options.layout);
}

RMSprop::~RMSprop() = default;

void RMSprop::UseKerasLayout(KerasLayout layout) {
  if (layout == KerasLayout::kKeras2Legacy) {
    throw UnimplementedError(StrCat("RMSprop '", name(),
                                    "': the keras2_legacy (OptimizerV2) checkpoint layout is not "
                                    "supported; use keras3 or keras2"));
  }
  Optimizer::UseKerasLayout(layout);
}

void RMSprop::CreateSlots(const Variable& variable) {
  const std::string var_name(variable.shared_name());
  for (const std::string& slot : slot_names())
    AddSlot(variable, slot, scope(), StrCat(var_name, "/", slot));
}

void RMSprop::ApplyDense(const Tensor& grad, Variable& variable) {
  Update(grad, nullptr, variable);
}

void RMSprop::ApplyDenseWithSquares(const Tensor& grad, const Tensor& grad_squares,
                                    Variable& variable) {
  Update(grad, &grad_squares, variable);
}

void RMSprop::Update(const Tensor& grad, const Tensor* squares, Variable& variable) {
  VisitFloatDType(variable.dtype(), "RMSprop", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T lr = static_cast<T>(ScalarValue(*learning_rate_));
    const T rho = static_cast<T>(options_.rho);
    const T one_minus_rho = static_cast<T>(1.0 - options_.rho);
    const T momentum = static_cast<T>(options_.momentum);
    const T epsilon = static_cast<T>(options_.epsilon);
    const bool use_momentum = options_.momentum > 0;
    const bool keras3 = keras_layout() == KerasLayout::kKeras3;
    internal::HeldUpdate held;
    T* __restrict velocity = held.Hold<T>(*GetSlot(variable, "velocity"));
    T* __restrict mom = use_momentum ? held.Hold<T>(*GetSlot(variable, "momentum")) : nullptr;
    T* __restrict average =
        options_.centered ? held.Hold<T>(*GetSlot(variable, "average_gradient")) : nullptr;
    T* __restrict x = held.Hold<T>(variable);
    const T* __restrict g = grad.data<T>().data();
    const T* __restrict g2 = squares != nullptr ? squares->data<T>().data() : nullptr;
    const auto n = static_cast<size_t>(grad.num_elements());
    for (size_t i = 0; i < n; ++i) {
      velocity[i] = rho * velocity[i] + one_minus_rho * (g2 != nullptr ? g2[i] : g[i] * g[i]);
      T denominator;
      if (average != nullptr) {
        average[i] = rho * average[i] + one_minus_rho * g[i];
        denominator = velocity[i] - average[i] * average[i] + epsilon;
      } else {
        denominator = velocity[i] + epsilon;
      }
      const T increment = keras3 ? (lr * g[i]) / std::sqrt(denominator)
                                 : (lr * g[i]) * (T(1) / std::sqrt(denominator));
      if (mom != nullptr) {
        mom[i] = momentum * mom[i] + increment;
        x[i] = x[i] - mom[i];
      } else {
        x[i] = x[i] - increment;
      }
    }
    held.Commit();
  });
}

}  // namespace eager
