#include "autodiff/optimizer.h"

#include <algorithm>
#include <cmath>

#include "autodiff/gradient_tape.h"
#include "autodiff/graph_gradients.h"
#include "autodiff/internal/trackable_list.h"
#include "ops/fp_contract_off.h"
#include "runtime/flush_denormal.h"
#include "runtime/graph.h"
#include "runtime/names.h"

namespace eager {

Optimizer::Optimizer(std::string_view name, std::vector<std::string> slot_names,
                     bool keras_variables)
    : name_(name),
      slot_names_(std::move(slot_names)),
      slots_(slot_names_.size()),
      variables_list_(std::make_unique<internal::TrackableList>()),
      trainable_list_(std::make_unique<internal::TrackableList>()) {
  EAGER_CHECK(!name.empty(), "Optimizer: the name must not be empty");
  for (size_t i = 0; i < slot_names_.size(); ++i) {
    slot_lists_.push_back(std::make_unique<internal::TrackableList>());
  }
  if (!keras_variables) return;
  // Keras OptimizerV2 creates its variables under name_scope(self._name),
  // which the graph makes unique: "Adam", then "Adam_1".
  {
    NameScope scope(name);
    scope_ = scope.prefix();
  }
  name_ = scope_.substr(0, scope_.size() - 1);
  NameScope scope(scope_);
  iter_ = &AddOwnedVariable("iter", Tensor(int64_t{0}), "iter");
  variables_list_->Append(*iter_);
}

Optimizer::~Optimizer() = default;

Variable& Optimizer::AddHyper(std::string_view hyper_name, double value, DType dtype) {
  EAGER_CHECK(dtype == DType::kFloat32 || dtype == DType::kFloat64, "Optimizer '", name_,
              "': hyper-parameter '", hyper_name, "' must be float32 or float64, got ", dtype);
  NameScope scope(scope_);
  return AddOwnedVariable(
      hyper_name, dtype == DType::kFloat64 ? Tensor(value) : Tensor(static_cast<float>(value)),
      hyper_name);
}

double Optimizer::ScalarValue(const Variable& variable) {
  const Tensor value = variable.value();
  return value.dtype() == DType::kFloat64 ? value.scalar<double>()
                                          : static_cast<double>(value.scalar<float>());
}

Variable& Optimizer::AddOwnedVariable(std::string_view local_name, const Tensor& initial_value,
                                      std::string_view variable_name, bool trainable) {
  for (const Child& c : children_) {
    EAGER_INTERNAL_CHECK(c.name != local_name);
  }
  return CreateVariable(local_name, initial_value, variable_name, trainable,
                        [&](std::unique_ptr<Variable> variable) {
                          children_.push_back({std::string(local_name), variable.get()});
                          owned_.push_back(std::move(variable));
                        });
}

Variable& Optimizer::AddSlot(const Variable& variable, std::string_view slot_name,
                             const std::string& scope_prefix, std::string_view variable_name,
                             std::optional<double> fill) {
  auto it = std::find(slot_names_.begin(), slot_names_.end(), slot_name);
  EAGER_INTERNAL_CHECK(it != slot_names_.end());
  const size_t index = static_cast<size_t>(it - slot_names_.begin());
  std::vector<Variable*>& slots = slot_of_[&variable];
  EAGER_INTERNAL_CHECK(slots.size() == index);  // created in slot_names_ order

  NameScope scope(scope_prefix);
  Variable& created = CreateSlot(
      variable, slot_name, variable_name,
      [&](std::unique_ptr<Variable> slot) {
        slots_[index].push_back({&variable, slot.get()});
        slots.push_back(slot.get());
        owned_.push_back(std::move(slot));
      },
      fill ? std::function<Tensor()>([&] {
        return VisitFloatDType(variable.dtype(), "an optimizer slot", [&](auto tag) {
          using T = typename decltype(tag)::type;
          return Tensor::FromVector<T>(
              std::vector<T>(static_cast<size_t>(variable.shape().num_elements()),
                             static_cast<T>(*fill)),
              variable.shape());
        });
      })
           : std::function<Tensor()>());
  // The newer layouts' lists; appending reports the edges to a restoration
  // waiting for them. The model variable is listed, not changed: the const
  // is dropped only because a Trackable child is non-const.
  if (index == 0) {
    auto& original =
        const_cast<Variable&>(variable);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
    slotted_.push_back(&original);
    trainable_list_->Append(original);
  }
  if (index < slot_lists_.size()) slot_lists_[index]->Append(created);
  // "_variables" is rebuilt once a batch of slots exists (EnsureSlots'
  // callers): its indices depend on every variable's slots when grouped.
  return created;
}

Variable& Optimizer::AddKerasStateVariable(std::string_view local_name, const Tensor& initial_value,
                                           std::string_view variable_name,
                                           bool in_keras3_variables) {
  // Listed before it is created, so the children a restoration is told of
  // (NotifyChildAdded, in AddOwnedVariable) include it.
  keras_state_.push_back({std::string(local_name), nullptr, in_keras3_variables});
  NameScope scope(scope_);
  Variable& created = AddOwnedVariable(local_name, initial_value, variable_name);
  keras_state_.back().variable = &created;
  // "_variables" gets it when the batch of slots it comes with is listed.
  return created;
}

void Optimizer::SetSlotGroups(std::vector<size_t> sizes) {
  size_t total = 0;
  for (const size_t size : sizes) total += size;
  EAGER_INTERNAL_CHECK(sizes.empty() || total == slot_names_.size());
  slot_groups_ = std::move(sizes);
}

void Optimizer::SetSlotListNames(std::vector<std::string> names) {
  EAGER_INTERNAL_CHECK(names.size() == slot_names_.size());
  slot_list_names_ = std::move(names);
}

void Optimizer::RebuildVariablesList() {
  // tf_keras: [iterations, then each variable's slots]; Keras 3 puts the
  // learning rate second.
  variables_list_->Clear();
  variables_list_->Append(*iter_);
  if (layout_ == KerasLayout::kKeras3 && schedule_ == nullptr) {
    if (Variable* lr = LearningRateVariable()) variables_list_->Append(*lr);
  }
  const std::vector<size_t> groups =
      slot_groups_.empty() ? std::vector<size_t>{slot_names_.size()} : slot_groups_;
  size_t begin = 0;
  for (const size_t size : groups) {
    for (Variable* v : slotted_) {
      const std::vector<Variable*>& slots = slot_of_.at(v);
      for (size_t kind = begin; kind < begin + size && kind < slots.size(); ++kind) {
        variables_list_->Append(*slots[kind]);
      }
    }
    begin += size;
  }
  if (layout_ != KerasLayout::kKeras3) return;
  for (const KerasState& state : keras_state_) {
    if (state.in_keras3_variables && state.variable != nullptr)
      variables_list_->Append(*state.variable);
  }
}

bool Optimizer::EnsureSlots(Variable& variable) {
  if (slot_of_.contains(&variable)) return false;
  CreateSlots(variable);
  slot_of_[&variable];  // also for slot-less optimizers: CreateSlots runs once
  return true;
}

void Optimizer::Build(const std::vector<Variable*>& vars) {
  for (const Variable* variable : vars) {
    EAGER_CHECK(variable != nullptr, "Optimizer '", name_, "'.Build: got a null variable");
    CheckDType(*variable);
  }
  bool created = false;
  for (Variable* variable : vars) created = EnsureSlots(*variable) || created;
  if (created && iter_ != nullptr) RebuildVariablesList();
}

Variable* Optimizer::LearningRateVariable() const {
  for (const Child& c : children_) {
    if (c.name == "learning_rate") return dynamic_cast<Variable*>(c.object);
  }
  return nullptr;
}

void Optimizer::SetLearningRateSchedule(std::shared_ptr<const LearningRateSchedule> schedule) {
  EAGER_CHECK(schedule == nullptr || LearningRateVariable() != nullptr, "Optimizer '", name_,
              "': a learning-rate schedule needs a Keras optimizer with a learning-rate "
              "variable (not a TF1-compatible one)");
  if (schedule != nullptr && layout_ == KerasLayout::kKeras2Legacy) {
    throw UnimplementedError(StrCat("Optimizer '", name_,
                                    "': learning-rate schedules are supported in the keras3 and "
                                    "keras2 layouts, not keras2_legacy (OptimizerV2)"));
  }
  schedule_ = std::move(schedule);
  if (schedule_ != nullptr) ApplySchedule();
  RebuildVariablesList();
}

void Optimizer::ApplySchedule() {
  Variable& lr = *LearningRateVariable();
  const float value = (*schedule_)(iterations());
  lr.Assign(lr.dtype() == DType::kFloat64 ? Tensor(static_cast<double>(value)) : Tensor(value));
}

void Optimizer::UseKerasLayout(KerasLayout layout) {
  if (iter_ == nullptr || layout == layout_) return;
  if (schedule_ != nullptr && layout == KerasLayout::kKeras2Legacy) {
    throw UnimplementedError(StrCat("Optimizer '", name_,
                                    "': has a learning-rate schedule, which the keras2_legacy "
                                    "(OptimizerV2) layout is not supported with"));
  }
  for (const Child& c : children_) {
    const auto* hyper = dynamic_cast<const Variable*>(c.object);
    if (layout == KerasLayout::kKeras2Legacy && c.name == "learning_rate" &&
        hyper->dtype() != DType::kFloat32) {
      throw UnimplementedError(
          StrCat("Optimizer '", name_, "': its learning rate is ", hyper->dtype(),
                 " (floatx); the keras2_legacy (OptimizerV2) layout keeps every "
                 "hyper-parameter float32, use keras3 or keras2"));
    }
  }
  layout_ = layout;
  RebuildVariablesList();
}

bool Optimizer::CreateSlotsForRestore(const Variable& original, std::string_view slot_name) {
  if (slot_of_.contains(&original) ||
      std::find(slot_names_.begin(), slot_names_.end(), slot_name) == slot_names_.end()) {
    return false;
  }
  try {
    CheckDType(original);
  } catch (const InvalidArgumentError&) {
    return false;  // left to ApplyGradients, which says why
  }
  CreateSlots(original);
  slot_of_[&original];  // as EnsureSlots: CreateSlots runs once
  if (iter_ != nullptr) RebuildVariablesList();
  return true;
}

void Optimizer::CheckDType(const Variable& variable) const {
  EAGER_CHECK(IsFloating(variable.dtype()), "Optimizer '", name_, "': variable '",
              variable.shared_name(), "' has dtype ", variable.dtype(),
              "; only float32 and float64 variables can be optimized");
}

void Optimizer::ApplyGradients(const std::vector<GradientAndVariable>& grads_and_vars) {
  ApplyChecked(grads_and_vars, {});
}

void Optimizer::ApplyChecked(const std::vector<GradientAndVariable>& grads_and_vars,
                             std::span<const std::optional<Tensor>> squares) {
  // Everything is checked before anything changes, so a bad pair cannot
  // leave half the model updated.
  bool any = false;
  for (const auto& [grad, variable] : grads_and_vars) {
    EAGER_CHECK(variable != nullptr, "Optimizer '", name_, "'.ApplyGradients: got a null variable");
    if (!grad) continue;
    any = true;
    CheckDType(*variable);
    EAGER_CHECK(grad->dtype() == variable->dtype() && grad->shape() == variable->shape(),
                "Optimizer '", name_, "'.ApplyGradients: the gradient for variable '",
                variable->shared_name(), "' is ", grad->dtype(), " of shape ", grad->shape(),
                ", expected ", variable->dtype(), " of shape ", variable->shape());
  }
  if (!any) {
    std::string names;
    for (const auto& pair : grads_and_vars) {
      names += (names.empty() ? "" : ", ") + std::string(pair.second->shared_name());
    }
    throw InvalidArgumentError(
        StrCat("Optimizer '", name_, "': No gradients provided for any variable: [", names, "]"));
  }
  if (clipping_.clipnorm || clipping_.clipvalue || clipping_.global_clipnorm) {
    return ApplyValidated(Clip(grads_and_vars), {});
  }
  ApplyValidated(grads_and_vars, squares);
}

void Optimizer::ApplyValidated(const std::vector<GradientAndVariable>& grads_and_vars,
                               std::span<const std::optional<Tensor>> squares) {
  bool created = false;
  for (const auto& [grad, variable] : grads_and_vars) {
    if (grad) created = EnsureSlots(*variable) || created;
  }
  if (created && iter_ != nullptr) RebuildVariablesList();
  if (schedule_ != nullptr) ApplySchedule();
  PrepareStep();
  {
    // The updates are TF's Apply* kernels: denormals flushed (Adam's m for
    // an input that is always zero decays into them), round to nearest.
    // FinishStep is not: TF1 Adam's powers are kept denormal (FORMAT.md 7.2).
    const internal::ScopedFlushDenormal flush;
    for (size_t i = 0; i < grads_and_vars.size(); ++i) {
      const auto& [grad, variable] = grads_and_vars[i];
      if (!grad) continue;
      if (i < squares.size() && squares[i].has_value()) {
        ApplyDenseWithSquares(*grad, *squares[i], *variable);
      } else {
        ApplyDense(*grad, *variable);
      }
    }
  }
  FinishStep();
  if (iter_ != nullptr) {
    iter_->Assign(Tensor(iter_->value().scalar<int64_t>() + 1));
  } else {
    ++steps_;
  }
}

void Optimizer::ApplyGradients(std::span<const std::optional<Tensor>> grads,
                               std::span<Variable* const> vars) {
  EAGER_CHECK(grads.size() == vars.size(), "Optimizer '", name_, "'.ApplyGradients: got ",
              grads.size(), " gradients for ", vars.size(), " variables");
  std::vector<GradientAndVariable> pairs;
  pairs.reserve(vars.size());
  for (size_t i = 0; i < vars.size(); ++i) pairs.emplace_back(grads[i], vars[i]);
  ApplyGradients(pairs);
}

void Optimizer::ApplyGradients(std::span<const std::optional<GradientValue>> grads,
                               std::span<Variable* const> vars) {
  EAGER_CHECK(grads.size() == vars.size(), "Optimizer '", name_, "'.ApplyGradients: got ",
              grads.size(), " gradients for ", vars.size(), " variables");
  std::vector<GradientAndVariable> pairs;
  std::vector<std::optional<Tensor>> squares(vars.size());
  pairs.reserve(vars.size());
  for (size_t i = 0; i < vars.size(); ++i) {
    const auto* slices = grads[i].has_value() ? std::get_if<IndexedSlices>(&*grads[i]) : nullptr;
    if (slices == nullptr) {
      pairs.emplace_back(
          grads[i].has_value() ? std::optional<Tensor>(std::get<Tensor>(*grads[i])) : std::nullopt,
          vars[i]);
      continue;
    }
    Variable* variable = vars[i];
    EAGER_CHECK(variable != nullptr, "Optimizer '", name_, "'.ApplyGradients: got a null variable");
    CheckSlices(*slices, *variable);
    // Densified here, before anything changes: an index out of range throws
    // now. Keras 3 squares each row before the rows of one index are summed
    // (ops.square keeps the slices, its scatter sums them); every other
    // line sums repeated rows first (_deduplicate_sparse_grad, TF1's
    // _apply_sparse_duplicate_indices), which is the dense update.
    pairs.emplace_back(slices->ToDense(), variable);
    if (layout_ == KerasLayout::kKeras3) squares[i] = slices->SquaresToDense();
  }
  ApplyChecked(pairs, squares);
}

void Optimizer::CheckSlices(const IndexedSlices& slices, const Variable& variable) const {
  const Shape& shape = variable.shape();
  bool rows_fit = slices.values.rank() == shape.rank() && shape.rank() >= 1 &&
                  slices.indices.rank() == 1 &&
                  slices.values.shape().dim(0) == slices.indices.num_elements();
  for (int d = 1; rows_fit && d < shape.rank(); ++d) {
    rows_fit = slices.values.shape().dim(d) == shape.dim(d);
  }
  EAGER_CHECK(
      slices.values.dtype() == variable.dtype() && slices.dense_shape == shape && rows_fit &&
          (slices.indices.dtype() == DType::kInt32 || slices.indices.dtype() == DType::kInt64),
      "Optimizer '", name_, "'.ApplyGradients: the IndexedSlices gradient for variable '",
      variable.shared_name(), "' has values ", slices.values.dtype(), " of shape ",
      slices.values.shape(), ", indices ", slices.indices.dtype(), " of shape ",
      slices.indices.shape(), " and dense shape ", slices.dense_shape, "; expected ",
      variable.dtype(), " rows of ", shape,
      " with one int32/int64 index per row and that dense shape");
}

Tensor Optimizer::Minimize(const std::function<Tensor()>& loss_fn,
                           const std::vector<Variable*>& var_list) {
  GradientTape tape;
  for (const Variable* v : var_list) {
    EAGER_CHECK(v != nullptr, "Optimizer '", name_, "'.Minimize: got a null variable");
    tape.Watch(*v);
  }
  Tensor loss = loss_fn();
  // Keeping slices lets Keras 3's optimizers treat an Embedding's rows as
  // Keras 3's fit does.
  ApplyGradients(tape.GradientKeepingSlices(loss, var_list), var_list);
  return loss;
}

void Optimizer::SetGradientClipping(const GradientClipping& clipping) {
  EAGER_CHECK(!(clipping.clipnorm && clipping.global_clipnorm), "Optimizer '", name_,
              "': Cannot accept both `clipnorm` and `global_clipnorm` (got clipnorm ",
              *clipping.clipnorm, ", global_clipnorm ", clipping.global_clipnorm.value_or(0), ")");
  for (const auto& [what, value] :
       {std::pair{"clipnorm", clipping.clipnorm}, std::pair{"clipvalue", clipping.clipvalue},
        std::pair{"global_clipnorm", clipping.global_clipnorm}}) {
    EAGER_CHECK(!value || *value >= 0.0, "Optimizer '", name_, "': ", what, " must be >= 0, got ",
                value.value_or(0));
  }
  clipping_ = clipping;
}

std::vector<Optimizer::GradientAndVariable> Optimizer::Clip(
    const std::vector<GradientAndVariable>& grads_and_vars) const {
  std::vector<GradientAndVariable> out = grads_and_vars;
  // Each in TF's operation order, elementwise in the gradient's dtype.
  auto transform = [&](auto&& fn) {
    for (GradientAndVariable& pair : out) {
      // A named reference, not a structured binding: lambdas capture it.
      std::optional<Tensor>& grad = pair.first;
      if (!grad) continue;
      grad = VisitFloatDType(grad->dtype(), "gradient clipping", [&](auto tag) {
        using T = typename decltype(tag)::type;
        std::vector<T> g = grad->template ToVector<T>();
        fn(g);
        return Tensor::FromVector<T>(g, grad->shape());
      });
    }
  };
  if (clipping_.clipvalue) {
    // clip_by_value: maximum(minimum(g, c), -c).
    const double c = *clipping_.clipvalue;
    transform([&](auto& g) {
      using T = typename std::remove_reference_t<decltype(g)>::value_type;
      const T hi = static_cast<T>(c), lo = static_cast<T>(-c);
      for (T& x : g) x = std::max(std::min(x, hi), lo);
    });
  }
  if (clipping_.clipnorm) {
    // clip_by_norm: l2norm = sqrt(sum(g * g)) (0 when the sum is 0), then
    // (g * c) / maximum(l2norm, c).
    const double c = *clipping_.clipnorm;
    transform([&](auto& g) {
      using T = typename std::remove_reference_t<decltype(g)>::value_type;
      const T clip = static_cast<T>(c);
      T l2sum = 0;
      for (T x : g) l2sum += x * x;
      const T l2norm = l2sum > 0 ? std::sqrt(l2sum) : l2sum;
      const T denominator = std::max(l2norm, clip);
      for (T& x : g) x = (x * clip) / denominator;
    });
  }
  if (clipping_.global_clipnorm) {
    // clip_by_global_norm: norm = sqrt(sum_i l2_loss(g_i) * 2), l2_loss =
    // sum(g * g * 0.5); scale = c * minimum(1 / norm, 1 / c) + (norm - norm).
    DType dtype = DType::kFloat32;
    bool first = true;
    for (const auto& [grad, variable] : out) {
      if (!grad) continue;
      EAGER_CHECK(first || grad->dtype() == dtype, "Optimizer '", name_,
                  "': global_clipnorm needs gradients of one dtype, got ", dtype, " and ",
                  grad->dtype(), " (for '", variable->shared_name(), "')");
      dtype = grad->dtype();
      first = false;
    }
    VisitFloatDType(dtype, "global_clipnorm", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T half_squared = 0;
      for (const auto& [grad, variable] : out) {
        if (!grad) continue;
        T l2_loss = 0;
        for (T x : grad->template data<T>()) l2_loss += x * x * T(0.5);
        half_squared += l2_loss;
      }
      const T norm = std::sqrt(half_squared * T(2));
      const T clip = static_cast<T>(*clipping_.global_clipnorm);
      const T scale = clip * std::min(T(1) / norm, T(1) / clip) + (norm - norm);
      transform([&](auto& g) {
        for (auto& x : g) x = x * static_cast<std::remove_reference_t<decltype(x)>>(scale);
      });
    });
  }
  return out;
}

int64_t Optimizer::iterations() const {
  return iter_ != nullptr ? iter_->value().scalar<int64_t>() : steps_;
}

Variable* Optimizer::GetSlot(const Variable& variable, std::string_view slot_name) const {
  auto it = slot_of_.find(&variable);
  if (it == slot_of_.end()) return nullptr;
  for (size_t i = 0; i < it->second.size(); ++i) {
    if (slot_names_[i] == slot_name) return it->second[i];
  }
  return nullptr;
}

std::vector<Trackable::Child> Optimizer::Children() {
  if (layout_ == KerasLayout::kKeras2Legacy) return children_;
  std::vector<Child> out{{"_variables", variables_list_.get()}};
  if (layout_ == KerasLayout::kKeras3)
    out.push_back({"_trainable_variables", trainable_list_.get()});
  out.push_back({"_iterations", iter_});
  if (Variable* lr = LearningRateVariable(); lr != nullptr && schedule_ == nullptr) {
    out.push_back({"_learning_rate", lr});
  } else if (lr != nullptr && layout_ == KerasLayout::kKeras2) {
    out.push_back({"_current_learning_rate", lr});
  }
  for (size_t i = 0; i < slot_list_names_.size(); ++i) {
    out.push_back({slot_list_names_[i], slot_lists_[i].get()});
  }
  for (const KerasState& state : keras_state_) {
    if (state.variable != nullptr) out.push_back({state.name, state.variable});
  }
  return out;
}

std::vector<Trackable::Slot> Optimizer::Slots() {
  std::vector<Slot> out;
  if (layout_ != KerasLayout::kKeras2Legacy) return out;  // the lists hold them
  for (size_t i = 0; i < slot_names_.size(); ++i) {
    for (const SlotEntry& e : slots_[i]) out.push_back({e.original, slot_names_[i], e.slot});
  }
  return out;
}

std::vector<std::pair<Tensor, Variable*>> Optimizer::GraphGradients(
    std::string_view kind, const Tensor& loss, std::vector<Variable*> var_list) const {
  Graph* graph = Graph::Current();
  if (graph == nullptr) {
    throw FailedPreconditionError(StrCat(kind, " '", name(),
                                         "': Minimize(loss tensor) needs a default graph; "
                                         "eagerly, pass a loss function"));
  }
  if (var_list.empty()) var_list = graph->TrainableVariables();
  const std::vector<std::optional<Tensor>> grads = Gradients(loss, var_list);
  std::vector<std::pair<Tensor, Variable*>> pairs;
  std::string names;
  for (size_t i = 0; i < var_list.size(); ++i) {
    names += StrCat(i ? ", " : "", var_list[i]->shared_name());
    if (grads[i].has_value()) pairs.emplace_back(*grads[i], var_list[i]);
  }
  if (pairs.empty()) {
    throw InvalidArgumentError(
        StrCat("No gradients provided for any variable, check your graph "
               "for ops that do not support gradients, between variables [",
               names, "] and loss ", loss.name(), "."));
  }
  for (const auto& [grad, var] : pairs) CheckDType(*var);
  return pairs;
}

}  // namespace eager
