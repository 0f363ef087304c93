#pragma once

// Execute: the only way an op runs.
//
// Checks the number of inputs, runs the op's shape rule (whose
// InvalidArgumentError is prefixed with the op type, e.g. "AddV2: Incompatible
// shapes [2,3] and [4]"), runs the kernel, and reports the call to the
// recorders on this thread. The returned tensor has a fresh id.

#include <initializer_list>
#include <span>

#include "ops/attrs.h"
#include "ops/op_def.h"

namespace eager {

Tensor Execute(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs = {});
inline Tensor Execute(const OpDef& op, std::initializer_list<Tensor> inputs,
                      const Attrs& attrs = {}) {
  return Execute(op, std::span<const Tensor>(inputs.begin(), inputs.size()), attrs);
}

}  // namespace eager
