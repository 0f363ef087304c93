#include "autodiff/exponential_moving_average.h"

#include <algorithm>

#include "autodiff/internal/writable_value.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/fp_contract_off.h"
#include "ops/graph_ops.h"
#include "ops/operators.h"
#include "ops/parallel.h"
#include "ops/variable_scope.h"
#include "runtime/flush_denormal.h"
#include "runtime/live_variables.h"
#include "runtime/names.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

// `one_minus` (the float32 1 - decay) as a scalar of `dtype`: TF casts the
// float32 tensor to the variable's dtype.
Tensor OneMinusDecay(float one_minus, DType dtype) {
  const Tensor f = Tensor(one_minus);
  return dtype == DType::kFloat32 ? f : Cast(Constant(f), dtype);
}

// assign_moving_average with `one_minus` already the float32 1 - decay,
// in the caller's name scope.
Tensor AssignMovingAverageWith(Variable& variable, const Tensor& value, float one_minus,
                               ZeroDebiasState* zero_debias) {
  const DType dtype = variable.dtype();
  const Tensor decay = OneMinusDecay(one_minus, dtype);
  if (zero_debias == nullptr) return AssignSub(variable, (variable.value() - value) * decay);
  EAGER_CHECK(zero_debias->biased != nullptr && zero_debias->local_step != nullptr,
              "AssignMovingAverage: the zero_debias state of '", variable.shared_name(),
              "' is empty (make it with MakeZeroDebiasState)");
  Variable& biased = *zero_debias->biased;
  Variable& local_step = *zero_debias->local_step;
  // TF's _zero_debias, op for op: the biased average, the step count, then
  // bias_factor = 1 - pow(1 - (1 - decay), step) and the division.
  const Tensor update_biased = AssignSub(biased, (biased.value() - value) * decay);
  const Tensor one = Cast(Constant(Tensor(1.0f)), dtype);
  const Tensor update_local_step = AssignAdd(local_step, one);
  const Tensor bias_factor = one - Pow(one - decay, update_local_step);
  return Assign(variable, update_biased / bias_factor);
}

}  // namespace

ZeroDebiasState MakeZeroDebiasState(const Variable& unbiased) {
  EAGER_CHECK(IsFloating(unbiased.dtype()), "MakeZeroDebiasState: variable '",
              unbiased.shared_name(), "' has dtype ", unbiased.dtype(),
              "; moving averages are float32 or float64");
  std::optional<Graph::InitScope> init_scope;
  if (Graph* graph = Graph::Current()) init_scope.emplace(*graph);
  NameScope scope(std::string(unbiased.shared_name()) + "/");
  ZeroDebiasState state;
  state.biased = std::make_unique<Variable>(Tensor::Zeros(unbiased.shape(), unbiased.dtype()),
                                            "biased", /*trainable=*/false);
  state.local_step = std::make_unique<Variable>(Tensor::Zeros(Shape{}, unbiased.dtype()),
                                                "local_step", /*trainable=*/false);
  return state;
}

Tensor AssignMovingAverage(Variable& variable, const Tensor& value, double decay,
                           ZeroDebiasState* zero_debias) {
  EAGER_CHECK(IsFloating(variable.dtype()), "AssignMovingAverage: variable '",
              variable.shared_name(), "' has dtype ", variable.dtype(),
              "; moving averages are float32 or float64");
  EAGER_CHECK(value.dtype() == variable.dtype() && value.shape() == variable.shape(),
              "AssignMovingAverage: the value for '", variable.shared_name(), "' is ",
              value.dtype(), " of shape ", value.shape(), ", expected ", variable.dtype(),
              " of shape ", variable.shape());
  EAGER_CHECK(decay >= 0.0 && decay <= 1.0, "AssignMovingAverage: decay must be in [0, 1], got ",
              decay);
  NameScope scope("AssignMovingAvg");
  // convert_to_tensor(1.0 - decay): the subtraction in Python's double.
  return AssignMovingAverageWith(variable, value, static_cast<float>(1.0 - decay), zero_debias);
}

ExponentialMovingAverage::ExponentialMovingAverage(double decay, std::optional<int64_t> num_updates,
                                                   bool zero_debias, std::string_view name)
    : decay_(decay), num_updates_(num_updates), zero_debias_(zero_debias), name_(name) {
  EAGER_CHECK(decay >= 0.0 && decay <= 1.0, "ExponentialMovingAverage '", name_,
              "': decay must be in [0, 1], got ", decay);
  EAGER_CHECK(!name_.empty(), "ExponentialMovingAverage: the name must not be empty");
}

ExponentialMovingAverage::~ExponentialMovingAverage() = default;

std::string ExponentialMovingAverage::AverageName(const Variable& variable) const {
  // TF's average_name: the shadow's name once it exists, else the name the
  // current name scope would give it.
  if (const Variable* shadow = AverageVariable(variable)) return std::string(shadow->shared_name());
  return NameScope::Current() + ShadowEdge(variable);
}

std::string ExponentialMovingAverage::ShadowEdge(const Variable& variable) const {
  return std::string(variable.shared_name()) + "/" + name_;
}

std::string ExponentialMovingAverage::AverageName(const Tensor& tensor) const {
  // tensor.op.name: "add:0" -> "add".
  const std::string& name = tensor.name();
  return name.substr(0, name.rfind(':')) + "/" + name_;
}

Operation ExponentialMovingAverage::Apply(const std::vector<Variable*>& var_list,
                                          const std::vector<Tensor>& tensors) {
  Graph* graph = Graph::Current();
  if (graph == nullptr) {
    if (!tensors.empty()) {
      throw FailedPreconditionError(
          StrCat("ExponentialMovingAverage '", name_,
                 "' does not support non-Variable tensors when eager execution is enabled"));
    }
    return Apply(var_list);
  }
  CreateAverages(var_list);
  const std::vector<size_t> tensor_entries = CreateTensorAverages(*graph, tensors);
  std::vector<size_t> entries;
  entries.reserve(var_list.size());
  for (Variable* v : var_list) entries.push_back(index_.at(v));
  return UpdateOp(*graph, entries, tensor_entries);
}

std::vector<size_t> ExponentialMovingAverage::CreateTensorAverages(
    Graph& graph, const std::vector<Tensor>& tensors) {
  for (const Tensor& t : tensors) {
    // Throws for an eager tensor or another graph's.
    (void)graph.OperationOf(t);
    EAGER_CHECK(IsFloating(t.dtype()), "ExponentialMovingAverage '", name_, "'.Apply: tensor '",
                t.name(), "' has dtype ", t.dtype(),
                "; the moving average supports only float32 and float64");
    EAGER_CHECK(t.shape().IsFullyDefined(), "ExponentialMovingAverage '", name_,
                "'.Apply: tensor '", t.name(), "' has the partial shape ", t.shape(),
                "; its average needs a fully defined one");
  }
  std::vector<size_t> out;
  const Graph::InitScope init_scope(graph);
  for (const Tensor& t : tensors) {
    auto it = tensor_index_.find(t.name());
    if (it == tensor_index_.end()) {
      // slot_creator.create_zeros_slot: "<op name>/<ema name>", zeros.
      const std::string op_name = graph.OperationOf(t).name();
      TensorEntry entry{t, nullptr, {}};
      {
        NameScope scope(VariableScope::CurrentPrefix() + op_name + "/");
        entry.shadow = std::make_unique<Variable>(Tensor::Zeros(t.shape(), t.dtype()), name_,
                                                  /*trainable=*/false);
      }
      if (zero_debias_) entry.debias = MakeZeroDebiasState(*entry.shadow);
      it = tensor_index_.emplace(t.name(), tensor_entries_.size()).first;
      tensor_entries_.push_back(std::move(entry));
    }
    out.push_back(it->second);
  }
  return out;
}

Variable* ExponentialMovingAverage::AverageVariable(const Tensor& tensor) const {
  if (!tensor.is_symbolic()) return nullptr;
  auto it = tensor_index_.find(tensor.name());
  return it == tensor_index_.end() ? nullptr : tensor_entries_[it->second].shadow.get();
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

Operation ExponentialMovingAverage::UpdateOp(Graph& graph, const std::vector<size_t>& entries,
                                             const std::vector<size_t>& tensor_entries) {
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
  for (size_t i : tensor_entries) {
    TensorEntry& e = tensor_entries_[i];
    NameScope assign_scope("AssignMovingAvg");
    updates.push_back(OperationOf(AssignMovingAverageWith(
        *e.shadow, e.tensor, EffectiveOneMinusDecay(), zero_debias_ ? &e.debias : nullptr)));
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
  // TF's apply() creates the shadows inside init_scope(): no control
  // dependencies open around Apply reach their nodes.
  std::optional<Graph::InitScope> init_scope;
  if (Graph* graph = Graph::Current()) init_scope.emplace(*graph);
  for (Variable* v : var_list) {
    if (index_.contains(v)) continue;
    // slot_creator: scope "<variable scope>/<var op name>/" (not the name
    // scope), the shadow named after the EMA and made unique
    // ("v/ExponentialMovingAverage_1" if taken).
    NameScope scope(VariableScope::CurrentPrefix() + std::string(v->shared_name()) + "/");
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
    CreateVariable(ShadowEdge(*v), v->dtype(), v->shape(), initial_value, name_,
                   /*trainable=*/false, [&](std::unique_ptr<Variable> shadow) {
                     index_[v] = entries_.size();
                     entries_.push_back({v, std::move(shadow)});
                   });
  }
}

Operation ExponentialMovingAverage::Apply() {
  if (Graph* graph = Graph::Current()) {
    std::vector<size_t> entries, tensor_entries;
    for (size_t i = 0; i < entries_.size(); ++i) entries.push_back(i);
    for (size_t i = 0; i < tensor_entries_.size(); ++i) tensor_entries.push_back(i);
    return UpdateOp(*graph, entries, tensor_entries);
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
  for (const Entry& e : entries_) out.push_back({ShadowEdge(*e.original), e.shadow.get()});
  return out;
}

}  // namespace eager
