#include "autodiff/sgd.h"

#include <string>

namespace eager {
namespace {

SGDOptions MakeOptions(double learning_rate, double momentum, bool nesterov) {
  SGDOptions o;
  o.learning_rate = learning_rate;
  o.momentum = momentum;
  o.nesterov = nesterov;
  return o;
}

}  // namespace

SGD::SGD(double learning_rate, double momentum, bool nesterov)
    : SGD(MakeOptions(learning_rate, momentum, nesterov)) {}

SGD::SGD(const SGDOptions& options)
    : Optimizer(options.name, {"momentum"}),
      use_momentum_(options.momentum != 0.0),
      nesterov_(options.nesterov),
      use_decay_(options.decay > 0.0) {
  EAGER_CHECK(options.momentum >= 0.0 && options.momentum <= 1.0, "SGD '", name(),
              "': momentum must be in [0, 1], got ", options.momentum);
  EAGER_CHECK(options.learning_rate >= 0.0, "SGD '", name(), "': learning_rate must be >= 0, got ",
              options.learning_rate);
  EAGER_CHECK(options.decay >= 0.0, "SGD '", name(), "': decay must be >= 0, got ", options.decay);
  // Sorted order, as Keras lists hyper-parameters in the object graph.
  decay_ = &AddHyper("decay", options.decay);
  learning_rate_ = &AddHyper("learning_rate", options.learning_rate);
  momentum_ = &AddHyper("momentum", options.momentum);
}

SGD::~SGD() = default;

void SGD::CreateSlots(const Variable& variable) {
  if (use_momentum_) {
    AddSlot(variable, "momentum", scope(), std::string(variable.shared_name()) + "/momentum");
  }
}

void SGD::ApplyDense(const Tensor& grad, Variable& variable) {
  VisitFloatDType(variable.dtype(), "SGD", [&](auto tag) {
    using T = typename decltype(tag)::type;
    // Hyper-parameters are float32 variables cast to the variable's dtype.
    T lr = static_cast<T>(learning_rate_->value().scalar<float>());
    if (use_decay_) {
      const T decay = static_cast<T>(decay_->value().scalar<float>());
      lr = lr / (T(1) + decay * static_cast<T>(iterations()));
    }
    const Tensor value = variable.value();
    const T* g = grad.data<T>().data();
    const T* x = value.data<T>().data();
    const size_t n = static_cast<size_t>(value.num_elements());
    Tensor new_value = internal::NewTensor(value.shape(), value.dtype());
    T* out = internal::MutableData<T>(new_value);
    if (!use_momentum_) {
      for (size_t i = 0; i < n; ++i) out[i] = x[i] - g[i] * lr;
      variable.Assign(new_value);
      return;
    }
    const T momentum = static_cast<T>(momentum_->value().scalar<float>());
    Variable& accum_variable = *GetSlot(variable, "momentum");
    const Tensor accum = accum_variable.value();
    const T* a = accum.data<T>().data();
    Tensor new_accum = internal::NewTensor(value.shape(), value.dtype());
    T* acc = internal::MutableData<T>(new_accum);
    for (size_t i = 0; i < n; ++i) {
      acc[i] = a[i] * momentum - g[i] * lr;
      out[i] = nesterov_ ? x[i] + (acc[i] * momentum - g[i] * lr) : x[i] + acc[i];
    }
    accum_variable.Assign(new_accum);
    variable.Assign(new_value);
  });
}

}  // namespace eager
