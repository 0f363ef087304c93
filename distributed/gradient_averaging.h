#pragma once

// AverageAcrossRanks: the element-wise mean over every rank of a list of
// tensors (gradients), in a few large collectives instead of one per tensor.
//
//   std::vector<std::optional<eager::Tensor>> grads = tape.Gradient(loss, vars);
//   grads = eager::distributed::AverageAcrossRanks(world, grads);
//
// The tensors are packed, in the order given, into flat buckets of at most
// `bucket_bytes` (one per dtype being filled at a time; a tensor larger than
// that is a bucket of its own); each bucket is one MPI_Allreduce (sum), then
// divided by the rank count. The order, the bucket boundaries and so the
// collectives depend on the dtypes and shapes alone, never on timing, so the
// same inputs give the same bits in every run, on every rank.
//
// REQUIRES: every rank passes the same list: the same length, and at each
// position the same dtype and shape, or nullopt everywhere (nullopt stays
// nullopt and takes part in nothing). float32 and float64 only
// (UnimplementedError naming the position otherwise).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "distributed/world.h"
#include "runtime/tensor.h"

namespace eager::distributed {

inline constexpr size_t kDefaultBucketBytes = size_t{4} << 20;

struct AveragingStats {
  int64_t allreduce_calls = 0;  // buckets reduced (MPI_Allreduce calls)
  int64_t bytes = 0;            // tensor bytes reduced
};

std::vector<std::optional<Tensor>> AverageAcrossRanks(
    const World& world, std::span<const std::optional<Tensor>> tensors,
    size_t bucket_bytes = kDefaultBucketBytes, AveragingStats* stats = nullptr);

}  // namespace eager::distributed
