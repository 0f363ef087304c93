#pragma once

// ParallelFor: eager's intra-op loop over the process-wide pool
// (ops/threads.h). Private to ops/.
//
// The pool is the OpenMP runtime's, which OpenBLAS (its OpenMP build) also
// uses for GEMM: one set of worker threads for everything, no two pools
// fighting over the cores. Work is cut into fixed blocks of `grain` items
// whatever the thread count, so a kernel that writes each item from its own
// inputs gives identical results on any number of threads.

#include <algorithm>
#include <cstdint>

#include "ops/threads.h"

namespace eager::internal {

// Below this many elements an elementwise op runs inline: waking workers
// costs more than a few microseconds of vector arithmetic.
inline constexpr int64_t kParallelElementwiseMin = int64_t{1} << 17;
inline constexpr int64_t kElementwiseGrain = int64_t{1} << 15;

// Makes this thread's OpenMP and OpenBLAS limits match GetNumThreads(): an
// OpenMP thread count is per calling thread, SetNumThreads is per process.
void UseEagerThreadCount();

// fn(begin, end) over [0, n) in blocks of `grain`; on the calling thread alone
// when n < min_parallel or one thread is allowed. fn must not throw.
template <typename F>
void ParallelFor(int64_t n, int64_t grain, int64_t min_parallel, F&& fn) {
  const int threads = GetNumThreads();
  if (n < min_parallel || threads <= 1 || n <= grain) {
    if (n > 0) fn(int64_t{0}, n);
    return;
  }
  UseEagerThreadCount();
  const int64_t blocks = (n + grain - 1) / grain;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t b = 0; b < blocks; ++b) {
    fn(b * grain, std::min(n, (b + 1) * grain));
  }
}

}  // namespace eager::internal
