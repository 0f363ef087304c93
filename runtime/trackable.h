#pragma once

// Trackable: anything an object-based Checkpoint can save and restore.
//
// A Trackable names its children (the edges of the object graph) and may own
// tensors directly (a Variable's value, saved as the attribute
// "VARIABLE_VALUE"). Optimizers also report slot variables (Adam's "m" and "v"
// per model variable). Checkpoint walks these edges breadth-first from a root
// and keys every tensor by the path of local names that reaches it, e.g.
// "model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE". Local names ARE the
// checkpoint format: renaming an edge breaks every checkpoint already written.
//
// The four virtuals below must not create objects or variables.
//
// Deferred restoration (TensorFlow's restore-on-create, FORMAT.md 4.5): a
// checkpoint may hold values for objects that do not exist yet (a Dense that
// builds on its first call, Adam's slots made on the first step). The
// restoring code registers a DeferredRestoration on the live parent; the
// parent then
//   1. asks InitialValue() / InitialSlotValue() before it creates a simple
//      variable, so the variable starts with the saved value (no double
//      assignment), and
//   2. reports every child or slot it adds with NotifyChildAdded() /
//      NotifySlotAdded(), so the restoration can match deeper objects.
// Trackables that never add children later need not do anything; those that
// do create their variables with CreateVariable() / CreateSlot(), which do
// both steps, so no creator can forget one. The mechanism is std-only and
// knows nothing about file formats.

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/tensor.h"

namespace eager {

class Variable;

// The object layout one Keras line gives a tf.train.Checkpoint of a model and
// its optimizer. The same state, under different edges:
//   kKeras2Legacy: tf.keras 2.0-2.10 (OptimizerV2; tf_keras.optimizers.legacy):
//     optimizer children "iter", "beta_1", "beta_2", "decay",
//     "learning_rate"; slots as ".OPTIMIZER_SLOT/optimizer/m". Dense:
//     "kernel", "bias". eager's default.
//   kKeras2: tf_keras (the Keras 2 line) 2.11+ optimizers: "_iterations",
//     "_learning_rate", "_variables/N" (iterations, then m and v per
//     variable), "_momentums/N", "_velocities/N"; no slot references.
//   kKeras3: Keras 3 (tf.keras of TF 2.16+): as kKeras2, plus
//     "_trainable_variables/N" (the model's variables) and the learning rate
//     as "_variables/1"; a Dense's kernel edge is "_kernel".
enum class KerasLayout { kKeras2Legacy, kKeras2, kKeras3 };
// "keras2_legacy", "keras2", "keras3".
std::string_view KerasLayoutName(KerasLayout layout);

class Trackable {
 public:
  struct Child {
    std::string name;
    Trackable* object;  // not owned
  };
  // Optimizer state for one variable, e.g. Adam's "m" for a Dense kernel.
  struct Slot {
    const Variable* original;  // not owned
    std::string name;          // "m"
    Variable* slot;            // not owned
  };

  // A pending restoration queued on a Trackable (see the file comment). All
  // hooks have no-op defaults; implementations override what they need. The
  // hooks run synchronously inside the owner's Add* call; they may assign
  // values and register further restorations on `child`, but must not
  // destroy the owner.
  class DeferredRestoration {
   public:
    virtual ~DeferredRestoration() = default;
    // The saved value for the child variable `name` that `owner` is about to
    // create with `dtype` and `shape`, or nullopt to keep the initializer.
    // A returned tensor must have that dtype and shape (Trackable checks and
    // throws InvalidArgumentError naming the variable otherwise).
    virtual std::optional<Tensor> InitialValue(const Trackable& owner, std::string_view name,
                                               DType dtype, const Shape& shape) {
      (void)owner, (void)name, (void)dtype, (void)shape;
      return std::nullopt;
    }
    // The same for slot `slot_name` of `original`, which optimizer `owner`
    // is about to create.
    virtual std::optional<Tensor> InitialSlotValue(const Trackable& owner, const Variable& original,
                                                   std::string_view slot_name, DType dtype,
                                                   const Shape& shape) {
      (void)owner, (void)original, (void)slot_name, (void)dtype, (void)shape;
      return std::nullopt;
    }
    // `owner` now has the child `child` under local name `name`.
    virtual void ChildAdded(Trackable& owner, std::string_view name, Trackable& child) {
      (void)owner, (void)name, (void)child;
    }
    // Optimizer `owner` now has `slot`.
    virtual void SlotAdded(Trackable& owner, const Slot& slot) { (void)owner, (void)slot; }
  };

  Trackable() = default;
  Trackable(const Trackable&) = delete;
  Trackable& operator=(const Trackable&) = delete;
  virtual ~Trackable() = default;

  // Children in a stable order: it fixes node ids in the file.
  virtual std::vector<Child> Children() { return {}; }
  // Slot variables, for optimizers; in slot-name order, then variable order.
  virtual std::vector<Slot> Slots() { return {}; }
  // Objects whose edges differ between Keras lines (Dense, optimizers)
  // switch to `layout` (see KerasLayout); the default ignores it. May add
  // restorations' matches (NotifyChildAdded) but creates no variables.
  virtual void UseKerasLayout(KerasLayout layout) { (void)layout; }
  // A restore is binding this object to a saved object whose child edges are
  // `saved_edges`: returns why this object cannot take that structure (e.g.
  // the edges of another Keras layout than the one set), or "" to go on.
  // The restore then throws InvalidArgumentError naming the checkpoint and
  // the object, with this text, before assigning anything. Default: "".
  virtual std::string SavedStructureMismatch(const std::vector<std::string_view>& saved_edges) {
    (void)saved_edges;
    return {};
  }
  // Tensors saved under "<object path>/.ATTRIBUTES/<key>".
  virtual std::map<std::string, Tensor> SerializeToTensors() const { return {}; }
  // Receives the tensors saved by SerializeToTensors, keyed alike.
  virtual void RestoreFromTensors(const std::map<std::string, Tensor>& tensors) { (void)tensors; }
  // Optimizers: create the slots of `original` now, slot `slot_name` among
  // them, asking the deferred restorations for their values as CreateSlot
  // does; called by a restore that holds a saved value for that slot once
  // both this optimizer and `original` are matched (TF's eager
  // _create_or_restore_slot_variable), so the restored slots exist before
  // the first step. Returns false, creating nothing, when the slots exist
  // already or `slot_name` is not one of this object's. Default: false.
  virtual bool CreateSlotsForRestore(const Variable& original, std::string_view slot_name) {
    (void)original, (void)slot_name;
    return false;
  }

  // Queues `restoration` on this object; it is kept (shared) until removed
  // or this object is destroyed.
  void AddDeferredRestoration(std::shared_ptr<DeferredRestoration> restoration) {
    deferred_.push_back(std::move(restoration));
  }
  // Drops `restoration` if queued here (e.g. once fully consumed).
  void RemoveDeferredRestoration(const DeferredRestoration* restoration) {
    std::erase_if(deferred_, [&](const auto& r) { return r.get() == restoration; });
  }
  bool has_deferred_restorations() const { return !deferred_.empty(); }

 protected:
  // Receives a variable created by CreateVariable or CreateSlot and makes it
  // this object's: reachable through Children() (or Slots()) from now on.
  using StoreVariable = std::function<void(std::unique_ptr<Variable>)>;

  // Restore-on-create, the way to add a variable child after construction (a
  // layer's kernel when it builds, an optimizer's iter, an EMA's shadow): a
  // Variable named `variable_name` in the current name scope holding the
  // checkpointed value for `local_name` when a deferred restoration has one,
  // else `initial_value()` (called only then); handed to `store`, which must
  // make it the child `local_name`; then the restorations are told of the
  // new child. Throws InvalidArgumentError when the checkpointed value is
  // not `dtype` of `shape`.
  Variable& CreateVariable(std::string_view local_name, DType dtype, const Shape& shape,
                           const std::function<Tensor()>& initial_value,
                           std::string_view variable_name, bool trainable,
                           const StoreVariable& store);
  // The same with the initial value at hand (its dtype and shape).
  Variable& CreateVariable(std::string_view local_name, const Tensor& initial_value,
                           std::string_view variable_name, bool trainable,
                           const StoreVariable& store);
  // The same for an optimizer's slot `slot_name` of `original`: unless
  // restored, `initial_value()` (which must be like `original`; when null,
  // zeros like it, as most slots start), not trainable; `store` must make it
  // one of Slots(); then the restorations are told of the new slot.
  Variable& CreateSlot(const Variable& original, std::string_view slot_name,
                       std::string_view variable_name, const StoreVariable& store,
                       const std::function<Tensor()>& initial_value = nullptr);

  // The steps CreateVariable and CreateSlot take, for a child that is not a
  // variable: call the first two right before creating a variable (the
  // first non-empty answer wins) and the last two right after adding the
  // object. The first two throw InvalidArgumentError when a restoration
  // offers a value of another dtype or shape than the variable being created.
  std::optional<Tensor> DeferredInitialValue(std::string_view name, DType dtype,
                                             const Shape& shape) const {
    for (const auto& r : Snapshot()) {
      if (auto value = r->InitialValue(*this, name, dtype, shape)) {
        CheckDeferredValue(*value, StrCat("variable '", name, "'"), dtype, shape);
        return value;
      }
    }
    return std::nullopt;
  }
  std::optional<Tensor> DeferredInitialSlotValue(const Variable& original,
                                                 std::string_view slot_name, DType dtype,
                                                 const Shape& shape) const {
    for (const auto& r : Snapshot()) {
      if (auto value = r->InitialSlotValue(*this, original, slot_name, dtype, shape)) {
        CheckDeferredValue(*value, StrCat("slot '", slot_name, "' of a variable"), dtype, shape);
        return value;
      }
    }
    return std::nullopt;
  }
  void NotifyChildAdded(std::string_view name, Trackable& child) {
    for (const auto& r : Snapshot()) r->ChildAdded(*this, name, child);
  }
  void NotifySlotAdded(const Slot& slot) {
    for (const auto& r : Snapshot()) r->SlotAdded(*this, slot);
  }

 private:
  static void CheckDeferredValue(const Tensor& value, const std::string& what, DType dtype,
                                 const Shape& shape) {
    if (value.dtype() != dtype || value.shape() != shape) {
      throw InvalidArgumentError(StrCat("the checkpointed value for ", what, " is ", value.dtype(),
                                        " of shape ", value.shape(), ", but it is created as ",
                                        dtype, " of shape ", shape));
    }
  }

  // A copy, so that a hook may add or remove restorations while we iterate.
  std::vector<std::shared_ptr<DeferredRestoration>> Snapshot() const { return deferred_; }

  std::vector<std::shared_ptr<DeferredRestoration>> deferred_;
};

// Calls UseKerasLayout(layout) on `root` and every object reachable from it
// (each once, parents before their children).
void SetKerasLayout(Trackable& root, KerasLayout layout);
}  // namespace eager
