#pragma once

// BroadcastVariables: root's values into every rank's variables, so that
// data-parallel replicas start from the same weights (after initializing
// them differently, or after only the root restored a checkpoint).
//
//   eager::distributed::BroadcastVariables(model.Variables(), /*root=*/0);
//
// The values travel packed in flat buffers of a few MB (a handful of
// MPI_Bcast calls however many variables there are). Before any byte moves,
// every rank's list is compared with root's (count, dtype and shape at each
// position, initialized or not): a mismatch throws InvalidArgumentError on
// every rank, naming the first rank and position that differ, and assigns
// nothing. REQUIRES: a live World (FailedPreconditionError otherwise);
// numeric or bool dtypes (UnimplementedError for strings); every variable
// initialized (a lazily built layer builds on its first call: call the
// model once first).

#include <span>
#include <vector>

#include "distributed/world.h"
#include "runtime/variable.h"

namespace eager::distributed {

void BroadcastVariables(std::span<Variable* const> variables, int root = 0);
void BroadcastVariables(const World& world, std::span<Variable* const> variables, int root = 0);

}  // namespace eager::distributed
