#include "runtime/variable.h"

#include <algorithm>
#include <vector>

#include "runtime/internal/tensor_access.h"
#include "runtime/live_variables.h"
#include "runtime/names.h"

namespace eager {
namespace {

thread_local std::vector<internal::VariableReadObserver*> read_observers;

std::string MakeVariableName(std::string_view name) {
  EAGER_CHECK(!name.empty(), "Variable: a variable name must not be empty");
  return DefaultNames().UniqueName(NameScope::Current() + std::string(name)) + ":0";
}

template <typename Op>
Tensor Elementwise(const Tensor& a, const Tensor& b, std::string_view what, Op op) {
  Tensor out = internal::NewTensor(a.shape(), a.dtype());
  VisitNumericDType(a.dtype(), what, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto x = a.data<T>();
    auto y = b.data<T>();
    T* z = internal::MutableData<T>(out);
    for (size_t i = 0; i < x.size(); ++i) z[i] = op(x[i], y[i]);
  });
  return out;
}

}  // namespace

Variable::Variable(Tensor initial_value, std::string_view name, bool trainable)
    : name_(MakeVariableName(name)),
      dtype_(initial_value.dtype()),
      shape_(initial_value.shape()),
      trainable_(trainable) {
  Assign(initial_value);
  internal::RegisterLiveVariable(this, DefaultNames());
}

Variable::Variable(DType dtype, const Shape& shape, std::string_view name, bool trainable)
    : name_(MakeVariableName(name)),
      dtype_(dtype),
      shape_(shape),
      trainable_(trainable),
      value_(Tensor::Zeros(Shape{}, dtype)) {
  internal::RegisterLiveVariable(this, DefaultNames());
}

Variable::~Variable() { internal::UnregisterLiveVariable(this); }

void Variable::RequireInitialized(const char* op) const {
  if (!initialized_) [[unlikely]] {
    throw FailedPreconditionError(StrCat("Attempting to use uninitialized value ", shared_name(),
                                         " (in Variable::", op, "; the variable has dtype ", dtype_,
                                         " and shape ", shape_,
                                         " but was never assigned or restored)"));
  }
}

Tensor Variable::value() const {
  RequireInitialized("value");
  for (internal::VariableReadObserver* observer : read_observers) {
    observer->OnVariableRead(*this, value_);
  }
  return value_;
}

void Variable::CheckCompatible(const Tensor& value, const char* op) const {
  if (value.dtype() != dtype_ || value.shape() != shape_) {
    throw InvalidArgumentError(StrCat("Variable::", op, " on '", shared_name(), "': expected a ",
                                      dtype_, " tensor of shape ", shape_, ", got ", value.dtype(),
                                      " of shape ", value.shape()));
  }
}

void Variable::Assign(const Tensor& value) {
  CheckCompatible(value, "Assign");
  // A fresh id, so that no two variables (or a variable and an unrelated
  // tensor) ever share one in a GradientTape; the buffer is shared.
  value_ = internal::WithShape(value, shape_);
  initialized_ = true;
}

void Variable::AssignAdd(const Tensor& delta) {
  RequireInitialized("AssignAdd");
  CheckCompatible(delta, "AssignAdd");
  value_ = Elementwise(value_, delta, "Variable::AssignAdd", [](auto x, auto y) { return x + y; });
}

void Variable::AssignSub(const Tensor& delta) {
  RequireInitialized("AssignSub");
  CheckCompatible(delta, "AssignSub");
  value_ = Elementwise(value_, delta, "Variable::AssignSub", [](auto x, auto y) { return x - y; });
}

std::map<std::string, Tensor> Variable::SerializeToTensors() const {
  RequireInitialized("SerializeToTensors");
  return {{kValueAttribute, value_}};
}

void Variable::RestoreFromTensors(const std::map<std::string, Tensor>& tensors) {
  auto it = tensors.find(kValueAttribute);
  if (it == tensors.end()) {
    throw NotFoundError(StrCat("Variable '", shared_name(), "': no ", kValueAttribute,
                               " attribute among the restored tensors"));
  }
  CheckCompatible(it->second, "RestoreFromTensors");
  Assign(it->second);
}

namespace internal {

void AddVariableReadObserver(VariableReadObserver* observer) { read_observers.push_back(observer); }

void RemoveVariableReadObserver(VariableReadObserver* observer) {
  auto it = std::find(read_observers.begin(), read_observers.end(), observer);
  EAGER_INTERNAL_CHECK(it != read_observers.end());
  read_observers.erase(it);
}

}  // namespace internal
}  // namespace eager
