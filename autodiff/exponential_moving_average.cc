#include "autodiff/exponential_moving_average.h"

#include <algorithm>

#include "autodiff/internal/writable_value.h"
#include "ops/array_ops.h"
#include "ops/graph_ops.h"
#include "ops/operators.h"
#include "ops/parallel.h"
#include "runtime/flush_denormal.h"
#include "runtime/live_variables.h"
#include "runtime/names.h"
#include "runtime/tensor_access.h"

namespace eager {

ExponentialMovingAverage::ExponentialMovingAverage(double decay, std::optional<int64_t> num_updates,
                                                   bool zero_debias, std::string_view name)
    : decay_(decay), num_updates_(num_updates), zero_debias_(zero_debias), name_(name) {
  EAGER_CHECK(decay >= 0.0 && decay <= 1.0, "ExponentialMovingAverage '", name_,
              "': decay must be in [0, 1], got ", decay);
  EAGER_CHECK(!name_.empty(), "ExponentialMovingAverage: the name must not be empty");
}

ExponentialMovingAverage::~ExponentialMovingAverage() = default;

std::string ExponentialMovingAverage::AverageName(const Variable& variable) const {
  return std::string(variable.shared_name()) + "/" + name_;
}

Operation ExponentialMovingAverage::Apply(const std::vector<Variable*>& var_list) {
  CreateAverages(var_list);
  if (Graph* graph = Graph::Current()) {
    std::vector<size_t> entries;
    entries.reserve(var_list.size());
    for (Variable* v : var_list) entries.push_back(index_.at(v));
    return UpdateOp(*graph, entries);
  }
  const float one_minus = EffectiveOneMinusDecay();
  for (Variable* v : var_list) Update(entries_[index_.at(v)], one_minus);
  return Operation();
}

Operation ExponentialMovingAverage::UpdateOp(Graph& graph, const std::vector<size_t>& entries) {
  // TF's assign_moving_average: shadow -= (shadow - value) * (1 - decay),
  // with 1 - decay a float32 constant cast to the variable's dtype.
  // TF: `with name_scope(name) as scope: ... group(*updates, name=scope)`,
  // so the op is exactly the scope's name ("ExponentialMovingAverage").
  auto scope = std::make_unique<NameScope>(name_);
  const std::string group_name = scope->prefix();
  const Tensor one_minus = Tensor(EffectiveOneMinusDecay());
  std::vector<Operation> updates;
  for (size_t i : entries) {
    const Entry& e = entries_[i];
    EAGER_CHECK(graph.FindVariable(e.original) != nullptr, "ExponentialMovingAverage '", name_,
                "'.Apply: variable '", e.original->shared_name(),
                "' does not belong to the default graph");
    const Tensor decay = e.shadow->dtype() == DType::kFloat32
                             ? one_minus
                             : Cast(Constant(one_minus), e.shadow->dtype());
    const Tensor delta = (e.shadow->value() - e.original->value()) * decay;
    updates.push_back(OperationOf(AssignSub(*e.shadow, delta)));
  }
  scope.reset();
  return Group(updates, group_name);
}

void ExponentialMovingAverage::CreateAverages(const std::vector<Variable*>& var_list) {
  for (const Variable* v : var_list) {
    EAGER_CHECK(v != nullptr, "ExponentialMovingAverage '", name_, "'.Apply: null variable");
    EAGER_CHECK(IsFloating(v->dtype()), "ExponentialMovingAverage '", name_, "'.Apply: variable '",
                v->shared_name(), "' has dtype ", v->dtype(),
                "; the moving average supports only float32 and float64 variables");
  }
  for (Variable* v : var_list) {
    if (index_.contains(v)) continue;
    // slot_creator: scope "<var op name>/", the shadow named after the EMA
    // and made unique ("v/ExponentialMovingAverage_1" if taken).
    NameScope scope(std::string(v->shared_name()) + "/");
    auto initial_value = [&] {
      Graph* graph = Graph::Current();
      if (graph == nullptr) return v->value();
      // TF's initialized_value(): the variable's initial value, which is its
      // value once the initializer has run.
      const GraphVariable* record = graph->FindVariable(v);
      EAGER_CHECK(record != nullptr, "ExponentialMovingAverage '", name_, "'.Apply: variable '",
                  v->shared_name(), "' does not belong to the default graph");
      Tensor initial =
          record->initial_value.empty() ? v->value() : graph->TensorByName(record->initial_value);
      graph->AddToCollection(Graph::kMovingAverageVariables, v);
      return initial;
    };
    CreateVariable(AverageName(*v), v->dtype(), v->shape(), initial_value, name_,
                   /*trainable=*/false, [&](std::unique_ptr<Variable> shadow) {
                     index_[v] = entries_.size();
                     entries_.push_back({v, std::move(shadow)});
                   });
  }
}

Operation ExponentialMovingAverage::Apply() {
  if (Graph* graph = Graph::Current()) {
    std::vector<size_t> entries;
    for (size_t i = 0; i < entries_.size(); ++i) entries.push_back(i);
    return UpdateOp(*graph, entries);
  }
  const float one_minus = EffectiveOneMinusDecay();
  for (const Entry& e : entries_) Update(e, one_minus);
  return Operation();
}

float ExponentialMovingAverage::EffectiveOneMinusDecay() const {
  // All in float32, as TF: decay is converted to a float32 tensor first.
  float d = static_cast<float>(decay_);
  if (num_updates_) {
    const float n = static_cast<float>(*num_updates_);
    d = std::min(d, (1.0f + n) / (10.0f + n));
  }
  return 1.0f - d;
}

void ExponentialMovingAverage::Update(const Entry& entry, float one_minus_decay) {
  Variable& shadow = *entry.shadow;
  const Tensor value = entry.original->value();
  VisitFloatDType(shadow.dtype(), "ExponentialMovingAverage", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T c = static_cast<T>(one_minus_decay);  // the float32 1 - d, cast
    // In place when the shadow alone holds its buffer, else from the held
    // value into a new one (UpdateTargetOf); locked until the Assign, for a
    // save on another thread.
    const auto hold_shadow = internal::LockVariable(shadow);
    // TF's update is an AssignSub kernel: denormals flushed (a shadow whose
    // weight sits at 0 decays geometrically into them), round to nearest.
    const internal::ScopedFlushDenormal flush;
    internal::UpdateTarget target = internal::UpdateTargetOf(shadow);
    const T* xp = value.data<T>().data();
    const size_t n = static_cast<size_t>(target.out.num_elements());
    T* sp = internal::MutableData<T>(target.out);
    // Large shadows over the pool, as TF's AssignSub (an elementwise kernel):
    // each element from its own inputs, so the same bits on any thread count.
    const T* old_values = target.in_place() ? sp : target.in.data<T>().data();
    internal::ParallelFor(static_cast<int64_t>(n), internal::kElementwiseGrain,
                          internal::kParallelElementwiseMin, [&](int64_t begin, int64_t end) {
                            const auto b = static_cast<size_t>(begin);
                            const auto count = static_cast<size_t>(end - begin);
                            if (target.in_place()) {
                              T* __restrict shadow_values = sp + b;
                              const T* __restrict x = xp + b;
                              for (size_t i = 0; i < count; ++i) {
                                shadow_values[i] = shadow_values[i] - (shadow_values[i] - x[i]) * c;
                              }
                            } else {
                              const T* __restrict in = old_values + b;
                              const T* __restrict x = xp + b;
                              T* __restrict out = sp + b;
                              for (size_t i = 0; i < count; ++i)
                                out[i] = in[i] - (in[i] - x[i]) * c;
                            }
                          });
    shadow.Assign(target.out);
  });
}

Variable* ExponentialMovingAverage::AverageVariable(const Variable& variable) const {
  auto it = index_.find(&variable);
  return it == index_.end() ? nullptr : entries_[it->second].shadow.get();
}

Tensor ExponentialMovingAverage::Average(const Variable& variable) const {
  const Variable* shadow = AverageVariable(variable);
  if (shadow == nullptr) {
    throw NotFoundError(StrCat("ExponentialMovingAverage '", name_, "': variable '",
                               variable.shared_name(), "' has no moving average (Apply it first)"));
  }
  return shadow->value();
}

std::vector<Variable*> ExponentialMovingAverage::AveragedVariables() const {
  std::vector<Variable*> out;
  for (const Entry& e : entries_) out.push_back(e.original);
  return out;
}

std::map<std::string, Variable*> ExponentialMovingAverage::VariablesToRestore() const {
  return VariablesToRestore(LiveVariables());
}

std::map<std::string, Variable*> ExponentialMovingAverage::VariablesToRestore(
    const std::vector<Variable*>& global_variables,
    const std::optional<std::vector<Variable*>>& moving_avg_variables) const {
  std::vector<Variable*> averaged;
  if (moving_avg_variables) {
    averaged = *moving_avg_variables;
  } else {
    for (Variable* v : global_variables) {
      if (v != nullptr && v->trainable()) averaged.push_back(v);
    }
    for (Variable* v : AveragedVariables()) {
      if (std::find(averaged.begin(), averaged.end(), v) == averaged.end()) averaged.push_back(v);
    }
  }
  std::map<std::string, Variable*> out;
  for (Variable* v : averaged) {
    if (v == nullptr) continue;
    out.emplace(AverageName(*v), v);
  }
  for (Variable* v : global_variables) {
    if (v == nullptr) continue;
    if (std::find(averaged.begin(), averaged.end(), v) != averaged.end()) continue;
    out.emplace(std::string(v->shared_name()), v);
  }
  return out;
}

std::vector<Trackable::Child> ExponentialMovingAverage::Children() {
  std::vector<Child> out;
  for (const Entry& e : entries_) out.push_back({AverageName(*e.original), e.shadow.get()});
  return out;
}

}  // namespace eager
