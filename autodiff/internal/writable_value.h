#pragma once

// WritableValue: in-place updates of variables for optimizers and EMA.
//
// Tensors are immutable by contract. An optimizer step would therefore
// allocate a new buffer per variable and slot every step (three 800 KB
// buffers for a 784x256 kernel under Adam), and large allocations cost page
// faults. When a variable is the only holder of its value's buffer, nobody
// can observe a change to it, so it may be updated in place; otherwise we
// work on a fresh copy. Either way the caller Assign()s the result, which
// gives the value a new tensor id, so a GradientTape never confuses the old
// and the new value.

#include "runtime/variable.h"

namespace eager::internal {

// A tensor holding `variable`'s current value that the caller may write
// through MutableData<T>() and then Assign() back to `variable`: the
// variable's own buffer when nobody else holds it, else a fresh copy.
// The result never shares its buffer with anything but `variable`.
// REQUIRES: variable is initialized, numeric, and the caller holds
// internal::LockVariable(variable) from this call until it has Assign()ed
// the result: otherwise a reader on another thread (a save) could take the
// buffer between the check and the write and see it half updated.
Tensor WritableValue(const Variable& variable);

}  // namespace eager::internal
