#pragma once

// Gradients in graph mode (tf.compat.v1.gradients): adds the backward pass
// of `target` to its graph and returns symbolic gradients.
//
//   eager::Graph graph;
//   eager::Graph::AsDefault in(graph);
//   ... loss built from variables w, b ...
//   std::vector<std::optional<eager::Tensor>> g = eager::Gradients(loss, {&w, &b});
//   // g[0] is "gradients/MatMul_grad/MatMul_1:0"; run it in a Session.
//
// No gradient is written twice: each node on the way back is turned into the
// OpCall a GradientTape would have recorded (ops/internal/graph_builder.h),
// and its OpDef's own gradient function runs while the graph is the default,
// so the ops it calls become nodes. As TF, the backward nodes live in a name
// scope "gradients" (made unique: "gradients_1" for a second call) with one
// sub-scope per forward node ("gradients/MatMul_grad/MatMul"); the seed is a
// Const "gradients/grad_ys_0" of ones, and two gradients reaching one tensor
// are summed with Add, in the order a GradientTape sums them, so graph and
// eager gradients are the same bits.
//
// Function calls (StatefulPartitionedCall, PartitionedCall: a tf.function
// called in a TF 2.x graph) are differentiated through: the called
// function's body is copied into the graph under "gradients/<call>_grad/
// inlined/" and the copy differentiated like any nodes, nested calls in
// turn (autodiff/internal/inline_call.h), so variables read inside the
// function through captured handles get their gradients. An If or
// StatelessIf (tf.cond of control flow v2) is differentiated as TF1's
// tf.cond would be: each branch inlined behind Switches on the predicate
// (which must be a bool scalar), so only the taken branch's copy runs, and
// each input's gradient the Merge of the branches' (zeros from a branch
// that does not use it). A call of several outputs, one whose function
// assigns variables, and a Case or While on the way back are
// UnimplementedError naming the node; calls nested deeper than 64 (a
// recursive library) InvalidArgumentError.
//
// A variable's gradient is the one reaching its VariableV2 node (through its
// "/read" Identity), or a resource variable's VarHandleOp (through every
// ReadVariableOp). Only nodes between the target and the variables are
// differentiated; inputs that do not lead to a variable are skipped (the
// first layer's input gradient is never built).

#include <initializer_list>
#include <optional>
#include <span>
#include <vector>

#include "runtime/tensor.h"
#include "runtime/variable.h"

namespace eager {

// d(target)/d(variable) for each variable, nullopt where the target does not
// depend on it. REQUIRES: a default graph holding `target` and the
// variables. Throws FailedPreconditionError without a default graph,
// InvalidArgumentError for an eager target or a variable of another graph,
// UnimplementedError naming the node for an op on the way back that eager
// does not implement or that has no gradient. Shapes need not be fully
// known: where a gradient needs a dimension unknown when the graph is built
// (a placeholder's batch dimension -1), it reads it from a Shape node when
// the graph runs, as TF's gradients do.
std::vector<std::optional<Tensor>> Gradients(const Tensor& target,
                                             std::span<Variable* const> variables);
// The same for a braced list: Gradients(loss, {&w, &b}).
inline std::vector<std::optional<Tensor>> Gradients(const Tensor& target,
                                                    std::initializer_list<Variable*> variables) {
  return Gradients(target, std::span<Variable* const>(variables.begin(), variables.size()));
}

}  // namespace eager
