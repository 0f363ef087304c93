#pragma once

// How many times a TensorList kernel copied its input list because another
// holder could see it (ops/list_ops.cc's Writable), since the process
// started: what tests read to check that a loop setting an item per step
// changes its list in place (O(1) a step) rather than copying it. Not part
// of the public API.

#include <cstdint>

namespace eager::internal {

int64_t TensorListCopies();

}  // namespace eager::internal
