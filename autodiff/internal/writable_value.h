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

// Where an update of `variable` reads from and writes to, without the copy
// WritableValue makes when the value is shared: `in` is the current value;
// `out` is that same tensor when nobody else holds its buffer (update in
// place), else a fresh uninitialized one that the update fills from `in`
// (one pass that reads the old buffer and writes the new, instead of a copy
// followed by the update: what an asynchronous save that still holds the
// value costs the training step). Either way the caller Assign()s `out`.
// REQUIRES: as WritableValue.
struct UpdateTarget {
  Tensor in;
  Tensor out;
  bool in_place() const;
};
UpdateTarget UpdateTargetOf(const Variable& variable);

}  // namespace eager::internal
