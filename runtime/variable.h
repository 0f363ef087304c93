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
// Graph mode (runtime/graph.h): a Variable created while a Graph is the
// default is that graph's VariableV2 node, with TF1's `NAME/initial_value`,
// `NAME/Assign` (its initializer) and `NAME/read` nodes, and starts
// uninitialized whatever its initial value; value() is the symbolic
// `NAME/read:0`. Under Graph::UseResourceVariables it is a resource
// variable instead: a VarHandleOp with `NAME/Assign` (AssignVariableOp) and
// value() `NAME/Read/ReadVariableOp:0`. Its state still lives here: a Session's VariableV2 node
// reads stored_value(), its Assign nodes call Assign(), and a Saver restores by calling Assign()
// too. Assign*() take values, never symbolic tensors (use the graph op eager::Assign(variable,
// tensor) from ops/graph_ops.h).
//
// Variables are non-copyable and non-movable: layers and optimizers own them by
// value and everyone else refers to them by pointer, which stays valid for the
// owner's lifetime.
//
// Thread safety: the value is guarded by a per-variable lock. value(),
// stored_value(), Assign*(), SerializeToTensors() and RestoreFromTensors()
// may run on several threads at once; each reads or replaces the whole value
// at one moment, never a mix of two values. Optimizers hold the lock across
// their in-place updates (internal::LockVariable below), so a Checkpoint or
// Saver saving on one thread while another trains writes every variable as
// of one moment: a per-variable snapshot, TensorFlow's own guarantee (its
// save reads each variable once; different variables may come from different
// steps). Creating variables (a layer's first call, an optimizer's first
// step creating slots) is not synchronized with a save.

#include <mutex>
#include <string>
#include <string_view>

#include "runtime/resource.h"
#include "runtime/shape.h"
#include "runtime/tensor.h"
#include "runtime/trackable.h"

namespace eager {

class Graph;
struct GraphVariable;
class Variable;

namespace internal {
// Holds `variable`'s lock until the result is destroyed: other threads can
// neither read nor assign it meanwhile; this thread still can. An in-place
// update (autodiff/internal/writable_value.h) holds it from reading the value
// to Assign()ing the result, so a save never sees a half-written buffer.
// Lock several variables in one fixed order (a variable, then its slots).
std::unique_lock<std::recursive_mutex> LockVariable(const Variable& variable);
// Drops the value: the variable is uninitialized again, as after
// TensorFlow's DestroyResourceOp on a resource variable's handle.
void UninitializeVariable(Variable& variable);
}  // namespace internal

// A Variable is also the Resource a resource variable's handle stands for.
class Variable final : public Trackable, public Resource {
 public:
  // The attribute under which Checkpoint saves the value.
  static constexpr const char* kValueAttribute = "VARIABLE_VALUE";

  // Initialized with `initial_value` (its dtype and shape become the
  // variable's). `name` is made unique in the current scope.
  explicit Variable(const Tensor& initial_value, std::string_view name = "Variable",
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
  bool is_initialized() const;
  // Resource: "variable", and shared_name().
  std::string_view resource_kind() const override { return "variable"; }
  std::string_view resource_name() const override { return shared_name(); }

  // The current value. Throws FailedPreconditionError when uninitialized.
  // Reads are reported to any GradientTape recording on this thread.
  // For a graph variable: the symbolic read tensor "NAME/read:0".
  Tensor value() const;

  // Whether this variable is a node of a graph (see above).
  bool in_graph() const { return in_graph_; }
  // The stored value, even for a graph variable (what a Session's VariableV2
  // node yields). Throws FailedPreconditionError when uninitialized.
  Tensor stored_value() const;

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
  friend class Graph;
  struct GraphNodeTag {};
  // Graph::ImportVariable: bound to an existing VariableV2 node; the name is
  // the node's, not made unique.
  Variable(GraphNodeTag, Graph& graph, GraphVariable& record, DType dtype, const Shape& shape);
  // Graph::Capture: `graph`'s mirror of an eager variable, named exactly
  // `name` ("dense/kernel:0"; InvalidArgumentError when taken in the graph),
  // holding `value`.
  struct CaptureTag {};
  Variable(CaptureTag, Graph& graph, const std::string& name, bool trainable, const Tensor& value);
  // Adds this variable's nodes to `graph` (initial_value may be null).
  void AddToGraph(Graph& graph, const Tensor* initial_value);
  // Its resource-variable form (Graph::UseResourceVariables); `init_input`
  // is the initializer's value input ("" for none).
  void AddResourceNodes(Graph& graph, GraphVariable& record, const std::string& init_input);
  void CheckCompatible(const Tensor& value, const char* op) const;
  // REQUIRES: mu_ held.
  void RequireInitialized(const char* op) const;
  friend std::unique_lock<std::recursive_mutex> internal::LockVariable(const Variable&);
  friend void internal::UninitializeVariable(Variable&);

  // Guards initialized_ and value_ (the rest is fixed at construction).
  // Recursive: the holder of LockVariable may read and Assign.
  mutable std::recursive_mutex mu_;

  std::string name_;
  DType dtype_;
  Shape shape_;
  bool trainable_;
  bool initialized_ = false;
  Tensor value_;
  bool in_graph_ = false;
  Graph* graph_ = nullptr;  // while both live; Graph's destructor clears it
  Tensor read_;             // graph mode: the symbolic "NAME/read:0"
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
