#pragma once

// TF1's variable sharing in graphs: tf.compat.v1.variable_scope and
// get_variable, as TF 1.x programs name and share their weights.
//
//   eager::Graph graph;
//   eager::Graph::AsDefault in(graph);
//   {
//     eager::VariableScope scope("layer");                  // "layer/"
//     eager::Variable& w = eager::GetVariable("w", eager::Shape{3, 2});  // "layer/w:0"
//   }
//   {
//     eager::VariableScope scope("layer", eager::VariableReuse::kReuse);
//     eager::Variable& same = eager::GetVariable("w", eager::Shape{3, 2});  // the same w
//   }
//
// A VariableScope names variables and ops apart, as TF's does: GetVariable's
// variables are "<scope>/<name>" exactly, however often the scope is entered,
// while the scope also opens a NameScope of its name, made unique like any
// ("layer", then "layer_1"), for the ops and plain Variables made inside.
// Scopes nest ("outer/inner"). Reuse, as TF's:
//  - kInherit (TF's reuse=None or False): the enclosing scope's; at the top
//    level none;
//  - kReuse (reuse=True): GetVariable returns the stored variable of that
//    name and never creates one; inner scopes inherit it;
//  - kAutoReuse (tf.AUTO_REUSE): returns it if stored, else creates it.
// Errors are TF's ValueErrors as InvalidArgumentError, in TF's words:
// "Variable layer/w already exists, disallowed. Did you mean to set
// reuse=True or reuse=tf.AUTO_REUSE in VarScope?" (creating without
// reuse), "Variable layer/w does not exist, or was not created with
// tf.get_variable(). ..." (reusing), "Trying to share variable layer/w, but
// specified shape (3,) and found shape (2,)." (and the same for dtypes).
//
// ExponentialMovingAverage (autodiff/exponential_moving_average.h) creates
// its shadows inside the current VariableScope, as TF's slot creator does:
// under VariableScope("scope2") the average of "scope1/v0" is
// "scope2/scope1/v0/ExponentialMovingAverage".
//
// Scopes are per thread. GetVariable needs a default Graph (TF1's variable
// store lives in the graph: Graph::StoredVariable); eagerly it throws
// FailedPreconditionError.

#include <optional>
#include <string>
#include <string_view>

#include "runtime/names.h"
#include "runtime/tensor.h"
#include "runtime/variable.h"

namespace eager {

enum class VariableReuse { kInherit, kReuse, kAutoReuse };

class VariableScope {
 public:
  // `with tf.compat.v1.variable_scope(name, reuse=...)`. REQUIRES: `name` not
  // empty and without '/' at either end (else InvalidArgumentError).
  explicit VariableScope(std::string_view name, VariableReuse reuse = VariableReuse::kInherit);
  ~VariableScope();
  VariableScope(const VariableScope&) = delete;
  VariableScope& operator=(const VariableScope&) = delete;

  // The current thread's variable scope: "outer/inner", "" at the top level.
  static const std::string& CurrentName();
  // With a trailing "/" ("outer/inner/"), or "" at the top level.
  static std::string CurrentPrefix();
  // The reuse in effect: kInherit at the top level and in scopes that never
  // set one (no reuse), else kReuse or kAutoReuse.
  static VariableReuse CurrentReuse();

 private:
  std::string previous_name_;
  VariableReuse previous_reuse_;
  NameScope name_scope_;
};

struct GetVariableOptions {
  DType dtype = DType::kFloat32;
  // The new variable's value (of `dtype` and the shape given, if any);
  // default: TF's glorot_uniform_initializer for a float dtype (uniform in
  // [-l, l], l = sqrt(6 / (fan_in + fan_out)), seeded by the variable's full
  // name so a program makes the same values each run), zeros otherwise.
  std::optional<Tensor> initial_value = std::nullopt;
  bool trainable = true;
};

// tf.compat.v1.get_variable(name, shape, dtype, initializer, trainable): the
// stored variable "<current scope>/<name>" or a new one, by the scope's
// reuse (above). `shape` may be omitted when options.initial_value gives it
// (else InvalidArgumentError: "Variable w did not get an initializer, so its
// `shape` argument must be specified."). A new variable is a Variable of
// the graph (TF1's VariableV2, its initializer in "variables"; trainable ones
// in "trainable_variables"), owned by the graph.
Variable& GetVariable(std::string_view name, std::optional<Shape> shape = std::nullopt,
                      const GetVariableOptions& options = {});

}  // namespace eager
