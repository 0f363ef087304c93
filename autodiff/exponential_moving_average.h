#pragma once

// ExponentialMovingAverage: shadow copies of variables that follow them
// slowly, tf.train.ExponentialMovingAverage with TensorFlow's exact rounding
// (FORMAT.md 5.4).
//
//   eager::Variable v(0.1f, "v");
//   eager::ExponentialMovingAverage ema(0.999);
//   ema.Apply({&v});                 // shadow "v/ExponentialMovingAverage" = 0.1
//   v.Assign(10.0f);
//   ema.Apply();                     // shadow is now float32 0.10989987
//
// Each Apply computes, in this order: d = float32(decay); with num_updates n,
// d = min(d, (1 + n) / (10 + n)) in float32; one_minus = 1 - d in float32,
// then cast to the variable's dtype; for each shadow
//   shadow -= (shadow - value) * one_minus
// in the variable's dtype. Only float32 and float64 variables.
//
// Averages of plain tensors (graph mode only, as TF: eager tensors have no
// identity across steps): Apply(var_list, tensors) gives each tensor a
// shadow "<tensor op name>/<name>" ("add/ExponentialMovingAverage") that
// starts at zeros; with zero_debias each is debiased as TF's _zero_debias
// (AssignMovingAverage below, state "<shadow>/biased" and
// "<shadow>/local_step"). zero_debias does not touch averages of variables,
// which start at the variable's value (TF: "zero debias moving-averages
// that are initialized with tensors").
//
// Graph mode (runtime/graph.h): inside Graph::AsDefault, Apply(var_list)
// creates the shadows as graph variables (uninitialized until the graph's
// initializer runs; initialised from each variable's initial value, as TF's
// initialized_value()), adds the averaged variables to the graph's
// "moving_average_variables" collection (as TF1 does; the shadows are global,
// non-trainable variables), and returns the update op: a NoOp named after the
// EMA ("ExponentialMovingAverage") depending on one AssignSub per shadow,
// shadow -= (shadow - value) * (1 - decay), with the decay fixed when the op
// is built. As TF's apply(), which creates the shadows in init_scope(), the
// shadows' nodes never wait for control dependencies open around Apply:
// under Graph::ControlDependencies(graph, {train_op}) only the update op
// waits for train_op, and the shadows initialize from the initial values. Average(v) is then the
// shadow's symbolic read tensor. In eager mode Apply updates at once and returns a none Operation.
//
// The EMA is a Trackable whose children are the shadows, each under its
// average name ("v/ExponentialMovingAverage"). It keeps pointers to the
// averaged variables: they must outlive it. Not thread-safe.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/graph.h"
#include "runtime/trackable.h"
#include "runtime/variable.h"

namespace eager {

// What TF's _zero_debias keeps for one debiased moving average: "biased",
// the average started at zeros, and "local_step", its update count (both of
// the average's dtype and non-trainable).
struct ZeroDebiasState {
  std::unique_ptr<Variable> biased;
  std::unique_ptr<Variable> local_step;
};

// Creates the state for averaging into `unbiased`: zeros named
// "<unbiased op name>/biased" and ".../local_step" (made unique), in the
// default graph when there is one, free of open control dependencies.
ZeroDebiasState MakeZeroDebiasState(const Variable& unbiased);

// tf.__internal__.train.assign_moving_average(variable, value, decay):
//   variable -= (variable - value) * (1 - decay)
// with 1 - decay computed in double and rounded to float32 (TF converts the
// Python float 1.0 - decay), then cast to the variable's dtype. With
// `zero_debias` (TF's default zero_debias=True, for a variable that started
// at 0) instead, as _zero_debias:
//   biased -= (biased - value) * (1 - decay);  local_step += 1
//   variable = biased / (1 - (1 - (1 - decay)) ^ local_step)
// Eager: updates at once and returns the new value. Graph mode: adds the ops
// (AssignSub, and AssignAdd, Pow, RealDiv, Assign for zero_debias) and
// returns the tensor that performs the update when run. Throws
// InvalidArgumentError for a non-float variable, a `value` of another dtype
// or shape, or a decay outside [0, 1].
Tensor AssignMovingAverage(Variable& variable, const Tensor& value, double decay,
                           ZeroDebiasState* zero_debias = nullptr);

class ExponentialMovingAverage final : public Trackable {
 public:
  // `num_updates`, if given, lowers the decay early in training to
  // (1 + n) / (10 + n). Throws InvalidArgumentError unless 0 <= decay <= 1.
  explicit ExponentialMovingAverage(double decay, std::optional<int64_t> num_updates = std::nullopt,
                                    bool zero_debias = false,
                                    std::string_view name = "ExponentialMovingAverage");
  ~ExponentialMovingAverage() override;

  // Creates shadows for the variables of `var_list` that have none
  // (initialised to the variable's current value, non-trainable, named
  // AverageName(v) made unique), then updates the shadows of `var_list`.
  // Throws InvalidArgumentError naming the variable and its dtype for a
  // non-float variable (before creating anything), or for a null pointer.
  // Returns the update op in graph mode (see above), else a none Operation.
  Operation Apply(const std::vector<Variable*>& var_list);
  // Graph mode: the same for variables and plain tensors at once (TF's
  // apply([v, tensor])): one update op for both. Tensors get zero-started
  // shadows (debiased with zero_debias). Throws FailedPreconditionError for
  // tensors in eager mode (as TF), InvalidArgumentError for a non-float or
  // another graph's tensor.
  Operation Apply(const std::vector<Variable*>& var_list, const std::vector<Tensor>& tensors);
  // Updates every shadow created so far (graph mode: returns the op that does).
  Operation Apply();
  // Only the first half of Apply(var_list): creates the missing shadows
  // (with a checkpointed value when a restore is pending) and updates
  // nothing. Errors as Apply.
  void CreateAverages(const std::vector<Variable*>& var_list);

  // The shadow's value (tf's average(var)): a value in eager mode, the
  // shadow's symbolic read tensor in graph mode. Throws NotFoundError naming
  // the variable when it has no shadow.
  Tensor Average(const Variable& variable) const;
  // The shadow Variable of `variable`, or nullptr when it has none.
  Variable* AverageVariable(const Variable& variable) const;
  // The shadow of a plain graph tensor ("add:0"), or nullptr.
  Variable* AverageVariable(const Tensor& tensor) const;
  // TF's average_name: the shadow's name once Apply made it (under a
  // VariableScope("s"): "s/v/ExponentialMovingAverage", ops/variable_scope.h;
  // "..._1" when the name was taken), else "<name scope><variable op
  // name>/<name>", e.g. "v/ExponentialMovingAverage".
  std::string AverageName(const Variable& variable) const;
  // "<tensor op name>/<name>" ("add/ExponentialMovingAverage").
  std::string AverageName(const Tensor& tensor) const;

  // What a name-based Saver should restore for evaluation with averaged
  // weights (TF's variables_to_restore()): AverageName(v) -> v for every
  // trainable live variable and every averaged one, then op name -> itself
  // for every other live variable (LiveVariables()) whose name is not a key
  // yet, so shadows themselves are normally not restored. Plugs into Saver:
  //   eager::Saver(ema.VariablesToRestore()).Restore(path);
  std::map<std::string, Variable*> VariablesToRestore() const;
  // The same over `global_variables` instead of the live variables; the
  // averaged set is `moving_avg_variables` when given, else the trainable
  // ones of `global_variables` plus every variable with a shadow.
  std::map<std::string, Variable*> VariablesToRestore(
      const std::vector<Variable*>& global_variables,
      const std::optional<std::vector<Variable*>>& moving_avg_variables = std::nullopt) const;

  // Averaged variables, in the order their shadows were created.
  std::vector<Variable*> AveragedVariables() const;

  // Changes the num_updates used by later Apply calls (e.g. the step count).
  void set_num_updates(std::optional<int64_t> num_updates) { num_updates_ = num_updates; }
  double decay() const { return decay_; }
  const std::string& name() const { return name_; }
  bool zero_debias() const { return zero_debias_; }

  // Trackable: the shadows under their average names, in creation order.
  std::vector<Child> Children() override;

 private:
  // The checkpoint edge of a variable's shadow: "<variable op
  // name>/<name>", whatever the shadow's own (possibly scoped) name.
  std::string ShadowEdge(const Variable& variable) const;
  struct Entry {
    Variable* original;
    std::unique_ptr<Variable> shadow;
  };

  struct TensorEntry {
    Tensor tensor;
    std::unique_ptr<Variable> shadow;
    ZeroDebiasState debias;  // empty unless zero_debias
  };

  float EffectiveOneMinusDecay() const;
  void Update(const Entry& entry, float one_minus_decay);
  // Graph mode: the op updating `entries` (indices into entries_).
  Operation UpdateOp(Graph& graph, const std::vector<size_t>& entries,
                     const std::vector<size_t>& tensor_entries = {});
  // Graph mode: creates the missing shadows of `tensors`; returns their
  // indices into tensor_entries_.
  std::vector<size_t> CreateTensorAverages(Graph& graph, const std::vector<Tensor>& tensors);

  double decay_;
  std::optional<int64_t> num_updates_;
  bool zero_debias_;
  std::string name_;
  std::vector<Entry> entries_;
  std::unordered_map<const Variable*, size_t> index_;
  std::vector<TensorEntry> tensor_entries_;
  std::unordered_map<std::string, size_t> tensor_index_;  // by tensor name
};

}  // namespace eager
