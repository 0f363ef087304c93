#pragma once

// Execute: the only way an op runs, eagerly or into a graph.
//
// RunKernel checks the number of inputs, runs the op's shape rule (whose
// InvalidArgumentError is prefixed with the op type, e.g. "AddV2: Incompatible
// shapes [2,3] and [4]") and the kernel. The returned tensor has a fresh id.
//
// Execute, in eager mode, is RunKernel plus reporting the call to the
// recorders on this thread (GradientTape). While a Graph is the default on
// this thread (runtime/graph.h) it instead adds a node for the call and
// returns the node's symbolic output; a Session later runs that node with
// RunKernel. Eager mode pays one thread-local load for this.

#include <initializer_list>
#include <span>

#include "ops/op_def.h"
#include "runtime/attrs.h"

namespace eager {

Tensor RunKernel(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs = kNoAttrs);
Tensor Execute(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs = kNoAttrs);
inline Tensor Execute(const OpDef& op, std::initializer_list<Tensor> inputs,
                      const Attrs& attrs = kNoAttrs) {
  return Execute(op, std::span<const Tensor>(inputs.begin(), inputs.size()), attrs);
}
// The same for one or two inputs, without copying them (the per-op path of
// every unary and binary op): in eager mode the kernel reads the caller's
// tensors in place, through views that touch no reference count.
Tensor Execute(const OpDef& op, const Tensor& x, const Attrs& attrs = kNoAttrs);
Tensor Execute(const OpDef& op, const Tensor& x, const Tensor& y, const Attrs& attrs = kNoAttrs);

}  // namespace eager
