#pragma once

// Optimizer: the base of SGD and Adam, as Keras OptimizerV2 (TF 2.0-2.10),
// and of RMSprop, Adagrad and Nadam, which exist only in the newer Keras
// layouts below (Keras 3, tf_keras 2.11+).
//
//   eager::Adam optimizer;
//   eager::Tensor loss = optimizer.Minimize([&] { return Loss(model(x), y); },
//                                           model.TrainableVariables());
//   // or, with a tape of your own:
//   std::vector<eager::Variable*> vars = model.TrainableVariables();
//   optimizer.ApplyGradients(tape.Gradient(loss, vars), vars);
//
// An optimizer is a Trackable. Its children are its own variables ("iter",
// an int64 step count, then the float32 hyper-parameters in sorted name
// order, as FORMAT.md 4.4; in the newer layouts the learning rate has
// Keras's floatx, float32 or float64, set by each optimizer's options), named "<optimizer
// name>/<child>" ("Adam/iter"). Its slots (per-variable state such as Adam's "m" and "v") are
// created for a variable on the first step that gives it a gradient, named
// "<optimizer name>/<variable name>/<slot>" ("Adam/dense/kernel/m"),
// non-trainable, and listed by Slots() all of the first slot name, then all
// of the next, each in creation order.
//
// After a Checkpoint restore that holds saved slots, the slots of a variable
// are created with their saved values as soon as the optimizer and the
// variable both exist (TF's deferred slot restoration), so GetSlot gives
// them before the first step.
//
// Checkpoint layout (KerasLayout, runtime/trackable.h): kKeras2Legacy by
// default, as above; in kKeras2 / kKeras3 (SetKerasLayout) the children are
// those of tf_keras 2.11+ / Keras 3 optimizers ("_iterations",
// "_learning_rate", "_variables/N", the slot lists such as Adam's
// "_momentums/N" and "_velocities/N"; Keras 3 also "_trainable_variables/N")
// and Slots() is empty. The state is the same in every layout: a layout can
// change at any time, and a Keras 3 checkpoint restores into an eager Adam
// set to kKeras3 before or after its first step. The extra float32
// hyper-parameter variables of OptimizerV2 ("beta_1", "decay", ...) are not
// in the newer layouts, as Keras keeps those as Python floats there.
//
// Slots are keyed by the model variable's address: a variable passed to an
// optimizer must outlive it. Not thread-safe.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "autodiff/indexed_slices.h"
#include "autodiff/learning_rate_schedule.h"
#include "runtime/tensor.h"
#include "runtime/trackable.h"
#include "runtime/variable.h"

namespace eager {
namespace internal {
class TrackableList;  // autodiff/internal/trackable_list.h
}  // namespace internal

// Keras's gradient clipping options (OptimizerV2 kwargs), applied to the
// gradients ApplyGradients receives, in this order, before any update:
//  - clipvalue c: each element to [-c, c] (tf.clip_by_value);
//  - clipnorm c: each gradient g to g * c / max(||g||, c) (tf.clip_by_norm,
//    ||g|| = sqrt(sum(g * g)), 0 for an all-zero g);
//  - global_clipnorm c: every gradient g to g * c * min(1 / N, 1 / c),
//    N = sqrt(2 * sum over gradients of sum(g * g) / 2)
//    (tf.clip_by_global_norm; a NaN or infinite N makes every gradient NaN).
// Arithmetic in the gradients' dtype, c converted to it. Gradients that are
// nullopt are left out, as Keras filters them first.
struct GradientClipping {
  std::optional<double> clipnorm = std::nullopt;
  std::optional<double> clipvalue = std::nullopt;
  std::optional<double> global_clipnorm = std::nullopt;
};

class Optimizer : public Trackable {
 public:
  // A gradient (nullopt: the variable got none and is skipped) and the
  // variable it is for.
  using GradientAndVariable = std::pair<std::optional<Tensor>, Variable*>;

  ~Optimizer() override;

  // "Adam", "SGD" (or the name given); made unique as a name scope, so a
  // second Adam's variables are "Adam_1/...".
  const std::string& name() const { return name_; }
  // The scope prefix of this optimizer's variables, e.g. "Adam/".
  const std::string& scope() const { return scope_; }

  // One optimization step: updates every variable that has a gradient, then
  // counts the step. Slots are created first for variables that have none.
  // Throws InvalidArgumentError when a variable is null, a gradient's dtype
  // or shape differs from its variable's (naming both), a variable has a
  // dtype the optimizer does not support, or no pair has a gradient at all
  // ("No gradients provided for any variable: ..."). Validation happens
  // before any variable changes.
  void ApplyGradients(const std::vector<GradientAndVariable>& grads_and_vars);
  // The same for parallel lists, as GradientTape::Gradient returns them:
  // grads[i] is for vars[i]. Throws InvalidArgumentError, before anything
  // changes, when the two differ in length.
  void ApplyGradients(std::span<const std::optional<Tensor>> grads,
                      std::span<Variable* const> vars);
  // The same for gradients in TF's forms (GradientTape::GradientKeepingSlices):
  // IndexedSlices update as TF's line of this optimizer does. Keras 3
  // (kKeras3) squares each row before the rows of a repeated index sum, so
  // Adam's and Nadam's v, RMSprop's velocity and Adagrad's accumulator get
  // the sum of the squares; the other layouts sum repeated rows first, as
  // tf_keras, OptimizerV2 and TF1 do, which is the dense update. With
  // clipping set the slices are densified before clipping (Keras 3 clips
  // the rows themselves). Every row updates its variable's slots densely, as
  // all these lines do (no lazy Adam). Throws InvalidArgumentError, before
  // anything changes, for slices that do not fit their variable (naming it,
  // the values', indices' and dense shapes) or an index out of range.
  void ApplyGradients(std::span<const std::optional<GradientValue>> grads,
                      std::span<Variable* const> vars);

  // Runs loss_fn under a GradientTape watching `var_list`, differentiates
  // the (scalar) loss it returns and applies the gradients; returns the
  // loss. Errors as ApplyGradients, plus the tape's.
  Tensor Minimize(const std::function<Tensor()>& loss_fn, const std::vector<Variable*>& var_list);

  // Sets the clipping later ApplyGradients calls use. Throws
  // InvalidArgumentError, changing nothing, when both clipnorm and
  // global_clipnorm are set (Keras: "Cannot accept both `clipnorm` and
  // `global_clipnorm`") or a value is negative or NaN.
  void SetGradientClipping(const GradientClipping& clipping);
  const GradientClipping& gradient_clipping() const { return clipping_; }

  // Keras's build(var_list): creates now the slots of every variable in
  // `vars` that has none (in `vars` order, as Keras lists them), so a
  // checkpoint restored before the first step gives them their values and
  // GetSlot finds them. ApplyGradients does the same for the variables it
  // gets. Throws InvalidArgumentError, creating nothing, when a variable is
  // null or has a dtype the optimizer does not support.
  void Build(const std::vector<Variable*>& vars);

  // A learning-rate schedule (autodiff/learning_rate_schedule.h; nullptr:
  // none): before each step the learning-rate variable is set to
  // schedule(iterations), which the update then reads, as tf_keras 2.11+
  // keeps its "_current_learning_rate". Checkpoint: kKeras2 saves that
  // variable as "_current_learning_rate" (not "_learning_rate"); kKeras3
  // saves no learning rate at all ("_variables" has the slots from index 1),
  // as Keras 3 evaluates the schedule each step. Throws UnimplementedError
  // in the kKeras2Legacy layout (OptimizerV2 saves schedules otherwise), and
  // UseKerasLayout(kKeras2Legacy) throws while a schedule is set.
  void SetLearningRateSchedule(std::shared_ptr<const LearningRateSchedule> schedule);
  const LearningRateSchedule* learning_rate_schedule() const { return schedule_.get(); }

  // Steps completed (the "iter" variable's value).
  int64_t iterations() const;

  // The slot `slot_name` of `variable`, or nullptr when not created yet.
  Variable* GetSlot(const Variable& variable, std::string_view slot_name) const;
  const std::vector<std::string>& slot_names() const { return slot_names_; }

  KerasLayout keras_layout() const { return layout_; }

  // Trackable.
  std::vector<Child> Children() override;
  std::vector<Slot> Slots() override;
  // Creates every slot of `original` (CreateSlots) when a restore has a
  // saved value for its `slot_name`, unless it has them already or its
  // dtype is not one this optimizer supports.
  bool CreateSlotsForRestore(const Variable& original, std::string_view slot_name) override;
  // TF1-compatible optimizers (no "iter") have one layout and ignore this.
  void UseKerasLayout(KerasLayout layout) override;

 protected:
  // With `keras_variables`, opens the unique name scope `name` (whose prefix
  // becomes scope()) and creates the "iter" variable (int64 0); without, the
  // optimizer has no variables of its own yet and counts steps itself, as
  // TF1 optimizers do. `slot_names` fixes the order Slots() reports.
  Optimizer(std::string_view name, std::vector<std::string> slot_names,
            bool keras_variables = true);

  // A scalar hyper-parameter variable "<scope><hyper_name>" of `dtype`
  // (float32, or float64 for a learning rate under Keras's floatx float64),
  // tracked as a child; call in the order children should be listed.
  Variable& AddHyper(std::string_view hyper_name, double value, DType dtype = DType::kFloat32);
  // The value of a float32 or float64 scalar variable, exactly.
  static double ScalarValue(const Variable& variable);
  // A variable owned by this optimizer, tracked as child `local_name`, named
  // `variable_name` in the current name scope (the caller opens one).
  // Restore-on-create applies as for Module::AddVariable.
  Variable& AddOwnedVariable(std::string_view local_name, const Tensor& initial_value,
                             std::string_view variable_name, bool trainable = false);
  // Creates slot `slot_name` (one of slot_names()) of `variable`, zeros of
  // its dtype and shape unless a deferred restoration supplies the value,
  // non-trainable, named `variable_name` inside the scope `scope_prefix`
  // (entered exactly, e.g. "Adam/"). Call in slot_names() order.
  // `fill`: the value every element starts at instead of zero (Adagrad's
  // initial_accumulator_value), converted to the variable's dtype.
  Variable& AddSlot(const Variable& variable, std::string_view slot_name,
                    const std::string& scope_prefix, std::string_view variable_name,
                    std::optional<double> fill = std::nullopt);

  // A variable of the newer layouts beside the slots (Nadam's "_u_product"):
  // the child `local_name` there (restored on creation), named
  // "<scope><variable_name>", and in Keras 3 also the last item of
  // "_variables" when `in_keras3_variables`. Call once per name.
  Variable& AddKerasStateVariable(std::string_view local_name, const Tensor& initial_value,
                                  std::string_view variable_name, bool in_keras3_variables);

  // The list edges of the newer Keras layouts for each slot name, in
  // slot_names() order (Adam: "_momentums", "_velocities").
  void SetSlotListNames(std::vector<std::string> names);
  // How the newer layouts' "_variables" list orders slots: one group per
  // Keras add_optimizer_variables call (or build loop), `sizes` slot kinds
  // each, in slot_names() order; within a group each variable's slots
  // together, groups one after another. Default: one group of all (Adam's
  // m and v); RMSprop: one per kind; amsgrad Adam: {m, v} then {vhat}.
  void SetSlotGroups(std::vector<size_t> sizes);
  void SetSlotsGroupedByKind(bool grouped) {
    SetSlotGroups(grouped ? std::vector<size_t>(slot_names_.size(), 1) : std::vector<size_t>{});
  }

  // Creates the slots of `variable`; called once per variable, before its
  // first update.
  virtual void CreateSlots(const Variable& variable) = 0;
  // Throws InvalidArgumentError when `variable`'s dtype is not supported.
  virtual void CheckDType(const Variable& variable) const;
  // Graph mode's compute_gradients, the first half of every TF1 optimizer's
  // Minimize(loss): the default graph's trainable variables when `var_list`
  // is empty, their gradients of `loss`, and the (gradient, variable) pairs
  // that have one, each variable's dtype checked. `kind` names the optimizer
  // class in errors ("Adam", "SGD"). Throws FailedPreconditionError without
  // a default graph, InvalidArgumentError (TF's words) when no variable has
  // a gradient.
  std::vector<std::pair<Tensor, Variable*>> GraphGradients(std::string_view kind,
                                                           const Tensor& loss,
                                                           std::vector<Variable*> var_list) const;
  // Called once per step before any update (e.g. to read hyper-parameters).
  virtual void PrepareStep() {}
  // Updates `variable` with `grad` (same dtype and shape).
  virtual void ApplyDense(const Tensor& grad, Variable& variable) = 0;
  // ApplyDense where the update's square of the gradient is `grad_squares`
  // (the summed squares of an IndexedSlices' rows, Keras 3) instead of
  // grad * grad. Optimizers that square the gradient override it; the
  // default, for those that do not, is ApplyDense.
  virtual void ApplyDenseWithSquares(const Tensor& grad, const Tensor& grad_squares,
                                     Variable& variable) {
    (void)grad_squares;
    ApplyDense(grad, variable);
  }
  // Called once per step after all updates (e.g. TF1 Adam's powers).
  virtual void FinishStep() {}

  Variable* iter() const { return iter_; }

 private:
  // Creates the slots of `variable` unless done already; true if it did.
  bool EnsureSlots(Variable& variable);
  // ApplyGradients with `squares` (empty, or one per pair: see
  // ApplyDenseWithSquares), validated and clipped (clipping drops squares).
  void ApplyChecked(const std::vector<GradientAndVariable>& grads_and_vars,
                    std::span<const std::optional<Tensor>> squares);
  // ApplyChecked after validation (and clipping).
  void ApplyValidated(const std::vector<GradientAndVariable>& grads_and_vars,
                      std::span<const std::optional<Tensor>> squares);
  // Throws InvalidArgumentError unless `slices` fit `variable`.
  void CheckSlices(const IndexedSlices& slices, const Variable& variable) const;
  // Applies clipping_ to the gradients of `grads_and_vars`.
  std::vector<GradientAndVariable> Clip(
      const std::vector<GradientAndVariable>& grads_and_vars) const;

  struct SlotEntry {
    const Variable* original;
    Variable* slot;
  };

  std::string name_;
  std::string scope_;
  GradientClipping clipping_;
  std::vector<std::string> slot_names_;
  Variable* iter_ = nullptr;
  int64_t steps_ = 0;  // used when there is no iter variable
  std::vector<Child> children_;
  std::vector<std::unique_ptr<Variable>> owned_;
  std::vector<std::vector<SlotEntry>> slots_;  // per slot name, in creation order
  // Per original variable, its slots in slot_names() order.
  std::unordered_map<const Variable*, std::vector<Variable*>> slot_of_;
  // The newer Keras layouts' lists (kept in every layout, so a layout can
  // change at any time). `slotted_`: variables with slots, in creation order.
  void RebuildVariablesList();
  KerasLayout layout_ = KerasLayout::kKeras2Legacy;
  std::vector<std::string> slot_list_names_;
  std::vector<Variable*> slotted_;
  std::vector<size_t> slot_groups_;  // empty: one group of all
  std::shared_ptr<const LearningRateSchedule> schedule_;
  // Sets the learning-rate variable to schedule_(iterations()).
  void ApplySchedule();
  Variable* LearningRateVariable() const;
  struct KerasState {
    std::string name;
    Variable* variable;
    bool in_keras3_variables;
  };
  std::vector<KerasState> keras_state_;
  std::unique_ptr<internal::TrackableList> variables_list_;  // "_variables"
  std::unique_ptr<internal::TrackableList> trainable_list_;  // "_trainable_variables"
  std::vector<std::unique_ptr<internal::TrackableList>> slot_lists_;
};

}  // namespace eager
