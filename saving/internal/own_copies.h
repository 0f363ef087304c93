#pragma once

// OwnCopiesOfHeldValues: the first thing an asynchronous save does on its
// writer thread. Not part of the public API.
//
// A save's snapshot is the Tensors themselves (immutable), so a variable's
// value that the save still holds when the optimizer reaches it is updated
// into new buffers (autodiff/internal/writable_value.h): the training step
// pays for every value the writer has not yet let go of. Writing a value
// (its CRC and the write(2) copy into the page cache, ~200 us per 800 KB
// here) is slower than copying it, and the writer also opens the files and
// reads the old index before the first byte: the main job's 2.4 MB of
// values were still held when Adam ran, ~0.5 ms into a step
// (benchmarks/README.md). So the writer first copies each value that its
// variable still holds into a buffer of its own, largest first, and drops
// the variable's; the files are then written from the copies.
//
// The copies cost memory, so at most `budget_bytes` are copied per save
// (kOwnCopyBudgetBytes by default); bigger values, and any beyond the
// budget, stay held until written, as before. Strings are never copied.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "runtime/tensor.h"

namespace eager::internal {

inline constexpr size_t kOwnCopyBudgetBytes = size_t{64} << 20;  // 64 MiB

// Replaces each numeric tensor of `tensors` whose buffer someone else still
// holds (use_count > 1: its variable) by a copy in a new buffer of this
// thread's, largest first, while the bytes copied stay within
// `budget_bytes`. Returns, for each tensor, whether it was replaced. The
// values (and their order in `tensors`) do not change.
std::vector<bool> OwnCopiesOfHeldValues(std::vector<std::pair<std::string, Tensor>>& tensors,
                                        size_t budget_bytes = kOwnCopyBudgetBytes);

}  // namespace eager::internal
