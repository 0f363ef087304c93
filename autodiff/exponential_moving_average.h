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
// zero_debias is accepted for API parity: TensorFlow applies it only to
// averages of plain tensors, which start at 0; averages of Variables (all
// this class supports) start at the variable's value and are unaffected.
//
// Graph mode (runtime/graph.h): inside Graph::AsDefault, Apply(var_list)
// creates the shadows as graph variables (uninitialized until the graph's
// initializer runs; initialised from each variable's initial value, as TF's
// initialized_value()), adds the averaged variables to the graph's
// "moving_average_variables" collection (as TF1 does; the shadows are global,
// non-trainable variables), and returns the update op: a NoOp named after the
// EMA ("ExponentialMovingAverage") depending on one AssignSub per shadow,
// shadow -= (shadow - value) * (1 - decay), with the decay fixed when the op
// is built. Average(v) is then the shadow's symbolic read tensor. In eager
// mode Apply updates at once and returns a none Operation.
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
  // "<variable op name>/<name>", e.g. "v/ExponentialMovingAverage", whether
  // or not a shadow exists (tf's average_name).
  std::string AverageName(const Variable& variable) const;

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
  struct Entry {
    Variable* original;
    std::unique_ptr<Variable> shadow;
  };

  float EffectiveOneMinusDecay() const;
  void Update(const Entry& entry, float one_minus_decay);
  // Graph mode: the op updating `entries` (indices into entries_).
  Operation UpdateOp(Graph& graph, const std::vector<size_t>& entries);

  double decay_;
  std::optional<int64_t> num_updates_;
  bool zero_debias_;
  std::string name_;
  std::vector<Entry> entries_;
  std::unordered_map<const Variable*, size_t> index_;
};

}  // namespace eager
