#pragma once

// Switch and Merge: the primitives TF1's tf.cond is built from, in graph
// mode (a Session runs them; tf.layers.batch_normalization's `training`
// flag is a tf.cond, so every TF1 graph with batch norm has them).
//
//   auto [if_false, if_true] = eager::Switch(x, pred);     // one of them is dead
//   auto [value, index] = eager::Merge({Neg(if_false), Exp(if_true)});
//   sess.Run(value, {{pred, eager::Tensor(true)}});        // exp(x); index 1
//
// Dead tensors, as TF's executor: Switch forwards `data` to output_true when
// `pred` is true and to output_false otherwise; the other output is dead. A
// node with a dead input (data or control) is dead and does not run, so its
// kernel, an op eager lacks, or an Assign on the untaken branch never runs.
// Merge is the exception: it outputs its first live input and that input's
// index (int32), and is dead only when all its inputs are. Fetching a dead
// tensor throws InvalidArgumentError naming it. (RefSwitch, TF1's Switch of a
// variable reference, runs like Switch.)

#include <vector>

#include "runtime/tensor.h"

namespace eager {

struct OpDef;
// Graph-only, run by the Session itself (OpDef::flow).
extern const OpDef kSwitchOp;     // "Switch"
extern const OpDef kRefSwitchOp;  // "RefSwitch": Switch of a variable reference
extern const OpDef kMergeOp;      // "Merge"

struct SwitchOutputs {
  Tensor output_false;
  Tensor output_true;
};
// REQUIRES: a default graph; `pred` a bool scalar. Throws
// FailedPreconditionError in eager mode, InvalidArgumentError for a `pred`
// that is not bool or not a scalar.
SwitchOutputs Switch(const Tensor& data, const Tensor& pred);  // "Switch"

struct MergeOutputs {
  Tensor output;
  Tensor value_index;  // int32 scalar
};
// REQUIRES: a default graph; one or more inputs of one dtype. The output's
// static shape is the inputs' when they agree, else known where they agree.
MergeOutputs Merge(const std::vector<Tensor>& inputs);  // "Merge"

}  // namespace eager
