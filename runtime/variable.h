#pragma once

// Variable: mutable state with identity, TensorFlow's tf.Variable.
//
// A Variable has a fixed dtype and shape, chosen at creation, and a unique
// name made by TensorFlow's rules in the current NameScope: "v:0", "v_1:0",
// "dense/kernel:0". Its value is an immutable Tensor replaced by Assign*; the
// only mutation in eager is through a Variable, so a Tensor read earlier never
// changes under anyone.
//
// A Variable may be created uninitialized (dtype and shape only); reading it
// then throws FailedPreconditionError "Attempting to use uninitialized value
// NAME", as TensorFlow does after a partial restore.
//
// Variables are non-copyable and non-movable: layers and optimizers own them by
// value and everyone else refers to them by pointer, which stays valid for the
// owner's lifetime. Not thread-safe for concurrent Assign and read.

#include <string>
#include <string_view>

#include "runtime/shape.h"
#include "runtime/tensor.h"
#include "runtime/trackable.h"

namespace eager {

class Variable final : public Trackable {
 public:
  // The attribute under which Checkpoint saves the value.
  static constexpr const char* kValueAttribute = "VARIABLE_VALUE";

  // Initialized with `initial_value` (its dtype and shape become the
  // variable's). `name` is made unique in the current scope.
  explicit Variable(Tensor initial_value, std::string_view name = "Variable",
                    bool trainable = true);
  // Uninitialized, with a fixed dtype and shape.
  Variable(DType dtype, const Shape& shape, std::string_view name = "Variable",
           bool trainable = true);
  ~Variable() override;

  // "scope/name:0", as tf.Variable.name.
  const std::string& name() const { return name_; }
  // The name without ":0": the op name, and the key the name-based Saver uses.
  std::string_view shared_name() const {
    return std::string_view(name_).substr(0, name_.size() - 2);
  }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  bool trainable() const { return trainable_; }
  bool is_initialized() const { return initialized_; }

  // The current value. Throws FailedPreconditionError when uninitialized.
  // Reads are reported to any GradientTape recording on this thread.
  Tensor value() const;
  Tensor ReadValue() const { return value(); }

  // Replace the value. Throws InvalidArgumentError (naming this variable) when
  // the dtype or shape differs from the variable's.
  void Assign(const Tensor& value);
  // value += delta / value -= delta elementwise (numeric dtypes; same shape).
  // REQUIRES: initialized (else FailedPreconditionError).
  void AssignAdd(const Tensor& delta);
  void AssignSub(const Tensor& delta);

  // Trackable: one attribute, VARIABLE_VALUE.
  std::map<std::string, Tensor> SerializeToTensors() const override;
  void RestoreFromTensors(const std::map<std::string, Tensor>& tensors) override;

 private:
  void CheckCompatible(const Tensor& value, const char* op) const;
  void RequireInitialized(const char* op) const;

  std::string name_;
  DType dtype_;
  Shape shape_;
  bool trainable_;
  bool initialized_ = false;
  Tensor value_;
};

namespace internal {
// Told about every Variable::value() on the thread it is registered on, while
// registered. GradientTape uses this to watch trainable variables.
class VariableReadObserver {
 public:
  virtual void OnVariableRead(const Variable& variable, const Tensor& value) = 0;

 protected:
  ~VariableReadObserver() = default;
};
void AddVariableReadObserver(VariableReadObserver* observer);
// REQUIRES: observer was added on this thread.
void RemoveVariableReadObserver(VariableReadObserver* observer);
}  // namespace internal

}  // namespace eager
