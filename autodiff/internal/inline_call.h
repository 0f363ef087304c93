#pragma once

// How eager::Gradients (autodiff/graph_gradients.h) differentiates a
// function call (PartitionedCall, StatefulPartitionedCall; an If's branches
// alike, behind Switches): it copies the
// called function's body into the calling graph, as TF's function inlining
// does, and differentiates the copy with the same backward pass as any other
// nodes. The copy recomputes the function's forward values when the
// gradient runs (TF's forward/backward function pair keeps them instead);
// in exchange no gradient function is written and the Session plans the
// copy once with the rest of the graph. Nested calls are copied as call
// nodes and inlined in turn when the backward pass reaches them.
//
// Not part of the public API.

#include <string>
#include <vector>

#include "runtime/graph.h"

namespace eager::internal {

struct InlinedCall {
  // Per call input, the node of `graph` that stands for the function's
  // argument in the copy: an Identity of the input, or for a resource
  // input (a variable handle) the node producing the handle itself, so
  // that the copy's ReadVariableOps read the caller's variable and their
  // gradients reach its VarHandleOp.
  std::vector<int> args;
  // The node whose output 0 is the function's output 0 (an Identity).
  int output = -1;
};

// Copies the body of the function that call node `call` of `graph` runs
// (attr "f") into `graph`, named under `prefix` ("gradients/f_grad/inlined/"),
// without control inputs. Throws NotFoundError for a function missing from
// the graph's library, InvalidArgumentError naming the node when its inputs
// do not match the function's arguments, and UnimplementedError naming the
// node for a function with other than one output, one that assigns
// variables (the copy would assign them again), or two resource inputs
// from one node.
InlinedCall InlineCall(Graph& graph, int call, const std::string& prefix);

// The same for function `function` of the graph's library called by `node`
// (a call, or an If for one of its branches) on `inputs` (node input
// strings, one per argument).
InlinedCall InlineFunction(Graph& graph, const Node& node, const std::string& function,
                           const std::vector<std::string>& inputs, const std::string& prefix);

// Whether `op` is a call InlineCall copies.
bool IsInlinableCall(const std::string& op);
// Whether `op` is If or StatelessIf.
bool IsIf(const std::string& op);

}  // namespace eager::internal
