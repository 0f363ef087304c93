#pragma once

// What TF1's apply ops (ApplyAdam, ApplyGradientDescent, ApplyMomentum:
// ops/training_ops.h) share: the checks of their
// arguments, the copy of a variable a kernel updates, and the graph node
// with reference inputs. Written once so that their error texts stay alike.
// Private to ops/.

#include <span>
#include <string>
#include <string_view>

#include "runtime/attrs.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"
#include "runtime/variable.h"

namespace eager::internal {

// Throws InvalidArgumentError "<op> on variable '<var>': ..." unless var is
// float32 or float64, every slot has var's dtype and shape (named
// "<slot_label> '<slot>'"), and tensors[grad_index] is of var's dtype and a
// shape compatible with var's while the other tensors are scalars of var's
// dtype (any shape of one element, or not fully known); `names` are TF's
// input names of `tensors`, in order.
void CheckApplyArguments(std::string_view op, const Variable& var,
                         std::span<const Variable* const> slots, std::string_view slot_label,
                         std::span<const Tensor> tensors, std::span<const char* const> names,
                         size_t grad_index);

// A copy of the variable's value for a kernel to update in place, or
// FailedPreconditionError "Attempting to use uninitialized value <name>".
Tensor CopyOfVariable(const Variable& variable);

// The node input naming the variable's node in `graph`, or
// InvalidArgumentError "<op>: variable '<v>' does not belong to the default
// graph".
std::string RefInput(std::string_view op, Graph& graph, const Variable& variable);

// Adds the node `op` to the default graph: `refs` (var first) as reference
// inputs, then `tensors`; TF's attributes T (var's dtype), _class
// ("loc:@<var node>"), use_locking false, then `attrs`. Its output is var's
// new value, of var's dtype and shape. REQUIRES: a default graph.
Tensor AddApplyNode(std::string_view op, std::span<Variable* const> refs,
                    std::span<const Tensor> tensors, const Attrs& attrs);

// The same for TF's resource form (ResourceApplyAdam, ...): `refs` must be
// resource variables of the default graph (InvalidArgumentError "<op>:
// variable '<v>' is not a resource variable" otherwise), passed as their
// VarHandleOp nodes; attrs T and use_locking false, then `attrs`. The node
// has no output. REQUIRES: a default graph.
Operation AddResourceApplyNode(std::string_view op, std::span<Variable* const> refs,
                               std::span<const Tensor> tensors, const Attrs& attrs);

}  // namespace eager::internal
