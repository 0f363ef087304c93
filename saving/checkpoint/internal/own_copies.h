#pragma once

// OwnCopiesOfHeldValues: the snapshot of an asynchronous save, taken by
// Checkpoint on the calling thread before the writer starts. Not part of the
// public API.
//
// A save's snapshot is the Tensors themselves (immutable), so a variable's
// value that the save still holds when the optimizer reaches it is updated
// into new buffers (autodiff/internal/writable_value.h): the training step
// pays for every value the save has not yet let go of. Writing a value (its
// CRC and the write(2) copy into the page cache, ~200 us per 800 KB here) is
// much slower than copying it, so each value that its variable still holds
// is first copied into a buffer of the save's own, largest first, and the
// variable's is let go of; the files are written from the copies.
//
// Where the copy runs matters (benchmarks/README.md, issue 11): when the
// writer thread copied, it read the values while they were modified lines
// in the training thread's cache, and the step during the save ran ~0.1 ms
// slower at batch 64 (coherence traffic, then the optimizer's stores had to
// take the lines back). Copied by the training thread itself with streaming
// stores (CopyBypassingCaches), the copy leaves that thread's cache as it was
// and the writer reads only memory nobody else writes.
//
// The copies cost memory, so at most `budget_bytes` are copied per save
// (kOwnCopyBudgetBytes by default); bigger values, and any beyond the
// budget, stay held until written. Strings are never copied.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "runtime/tensor.h"

namespace eager::internal {

inline constexpr size_t kOwnCopyBudgetBytes = size_t{64} << 20;  // 64 MiB

// memcpy's result with streaming (non-temporal) stores where the machine has
// them, followed by a store fence.
void CopyBypassingCaches(void* destination, const void* source, size_t bytes);

// Replaces each numeric tensor of `tensors` whose buffer someone else still
// holds (use_count > 1: its variable) by a copy in a new buffer of this
// thread's, largest first, while the bytes copied stay within
// `budget_bytes`. The copies are written by CopyBypassingCaches. Returns, for each tensor, whether
// it was replaced. The values (and their order in `tensors`) do not change.
std::vector<bool> OwnCopiesOfHeldValues(std::vector<std::pair<std::string, Tensor>>& tensors,
                                        size_t budget_bytes = kOwnCopyBudgetBytes);

}  // namespace eager::internal
