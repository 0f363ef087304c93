#include "autodiff/sgd.h"

#include <string>

#include "autodiff/internal/writable_value.h"
#include "ops/fp_contract_off.h"
#include "ops/training_ops.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

SGDOptions MakeOptions(double learning_rate, double momentum, bool nesterov) {
  SGDOptions o;
  o.learning_rate = learning_rate;
  o.momentum = momentum;
  o.nesterov = nesterov;
  return o;
}

// TF1 optimizers are named for their algorithm.
std::string_view NameOf(const SGDOptions& o) {
  if (!o.tf1_compatible || o.name != "SGD") return o.name;
  return o.momentum != 0.0 ? "Momentum" : "GradientDescent";
}

}  // namespace

SGD::SGD(double learning_rate, double momentum, bool nesterov)
    : SGD(MakeOptions(learning_rate, momentum, nesterov)) {}

SGD::SGD(const SGDOptions& options)
    : Optimizer(NameOf(options), {"momentum"}, /*keras_variables=*/!options.tf1_compatible),
      tf1_(options.tf1_compatible),
      lr_value_(options.learning_rate),
      momentum_value_(options.momentum),
      use_momentum_(options.momentum != 0.0),
      nesterov_(options.nesterov),
      use_decay_(options.decay > 0.0) {
  EAGER_CHECK(options.momentum >= 0.0 && options.momentum <= 1.0, "SGD '", name(),
              "': momentum must be in [0, 1], got ", options.momentum);
  EAGER_CHECK(options.learning_rate >= 0.0, "SGD '", name(), "': learning_rate must be >= 0, got ",
              options.learning_rate);
  EAGER_CHECK(options.decay >= 0.0, "SGD '", name(), "': decay must be >= 0, got ", options.decay);
  EAGER_CHECK(!tf1_ || options.decay == 0.0, "SGD '", name(),
              "': decay is a Keras option; TF1 optimizers have none (got ", options.decay, ")");
  if (tf1_) return;
  SetSlotListNames({"momentums"});  // Keras 3 and tf_keras 2.11+: `self.momentums`
  // Sorted order, as Keras lists hyper-parameters in the object graph.
  decay_ = &AddHyper("decay", options.decay);
  learning_rate_ = &AddHyper("learning_rate", options.learning_rate, options.floatx);
  momentum_ = &AddHyper("momentum", options.momentum);
  if (options.floatx != DType::kFloat32) UseKerasLayout(KerasLayout::kKeras3);
}

SGD::~SGD() = default;

void SGD::CreateSlots(const Variable& variable) {
  if (use_momentum_ && tf1_) {
    // slot_creator: "<var>/<optimizer name>", made unique.
    AddSlot(variable, "momentum", std::string(variable.shared_name()) + "/", name());
  } else if (use_momentum_ || keras_layout() == KerasLayout::kKeras2) {
    // tf_keras 2.11+ makes the "m" slot with momentum 0 too.
    AddSlot(variable, "momentum", scope(), std::string(variable.shared_name()) + "/momentum");
  }
}

void SGD::ApplyTf1(const Tensor& grad, Variable& variable) {
  // TF1 _apply_dense: the float hyper-parameters cast to the variable's dtype.
  const auto scalar = [&](double v) {
    return variable.dtype() == DType::kFloat64 ? Tensor(v) : Tensor(static_cast<float>(v));
  };
  if (!use_momentum_) {
    ApplyGradientDescent(variable, scalar(lr_value_), grad);
    return;
  }
  ApplyMomentum(variable, *GetSlot(variable, "momentum"), scalar(lr_value_), grad,
                scalar(momentum_value_), nesterov_);
}

void SGD::ApplyDense(const Tensor& grad, Variable& variable) {
  if (tf1_) {
    ApplyTf1(grad, variable);
    return;
  }
  VisitFloatDType(variable.dtype(), "SGD", [&](auto tag) {
    using T = typename decltype(tag)::type;
    // Hyper-parameters are float32 variables cast to the variable's dtype.
    T lr = static_cast<T>(ScalarValue(*learning_rate_));
    if (use_decay_) {
      const T decay = static_cast<T>(decay_->value().scalar<float>());
      lr = lr / (T(1) + decay * static_cast<T>(iterations()));
    }
    // In place when the variable alone holds its buffer (WritableValue);
    // the buffers are then distinct from the gradient's. Locked until the
    // Assigns, for a save on another thread.
    const auto hold_value = internal::LockVariable(variable);
    Tensor new_value = internal::WritableValue(variable);
    const T* __restrict g = grad.data<T>().data();
    T* __restrict x = internal::MutableData<T>(new_value);
    const size_t n = static_cast<size_t>(new_value.num_elements());
    Variable* accum_slot = GetSlot(variable, "momentum");
    if (accum_slot == nullptr) {
      for (size_t i = 0; i < n; ++i) x[i] = x[i] - g[i] * lr;
      variable.Assign(new_value);
      return;
    }
    // The newer Keras lines keep momentum a Python float (cast to T); with
    // momentum 0 tf_keras still runs this update (its slot then holds
    // -grad * lr, and var moves by exactly grad * lr).
    const T momentum = keras_layout() == KerasLayout::kKeras2Legacy
                           ? static_cast<T>(momentum_->value().scalar<float>())
                           : static_cast<T>(momentum_value_);
    Variable& accum_variable = *accum_slot;
    const auto hold_accum = internal::LockVariable(accum_variable);
    Tensor new_accum = internal::WritableValue(accum_variable);
    T* __restrict a = internal::MutableData<T>(new_accum);
    for (size_t i = 0; i < n; ++i) {
      a[i] = a[i] * momentum - g[i] * lr;
      x[i] = nesterov_ ? x[i] + (a[i] * momentum - g[i] * lr) : x[i] + a[i];
    }
    accum_variable.Assign(new_accum);
    variable.Assign(new_value);
  });
}

}  // namespace eager
