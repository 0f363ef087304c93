#pragma once

// ParallelFor: eager's intra-op loop over the process-wide pool
// (limited by eager::SetNumThreads, runtime/threads.h). For ops/ and autodiff/ (the optimizers' and
// the EMA's updates run on the same pool); not installed (cmake/package.cmake): not user API.
//
// Work is cut into fixed blocks of `grain` items whatever the thread count,
// and the caller and the pool's workers take blocks until none is left. A
// kernel that writes each item from its own inputs therefore gives
// identical results on any number of threads. The pool runs one job at a
// time: a ParallelFor that finds it busy (another thread's op, or a nested
// call) runs its blocks inline.

#include <algorithm>
#include <cstdint>

#include "runtime/machine_cores.h"
#include "runtime/threads.h"

namespace eager::internal {

// Below this many elements an elementwise op runs inline: waking workers
// costs more than a few microseconds of vector arithmetic.
inline constexpr int64_t kParallelElementwiseMin = int64_t{1} << 17;
inline constexpr int64_t kElementwiseGrain = int64_t{1} << 15;

using BlockFn = void (*)(void* context, int64_t begin, int64_t end);

// MachineCores() (runtime/machine_cores.h) is GetNumThreads'
// default. Work split by it, unlike by GetNumThreads, is the same for any
// thread limit.

// Runs fn(context, b * grain, min(n, (b + 1) * grain)) for every block b on
// up to GetNumThreads() threads; returns when all are done. fn must not throw.
void RunBlocks(int64_t n, int64_t grain, BlockFn fn, void* context);

// fn(begin, end) over [0, n) in blocks of `grain`; on the calling thread alone
// when n < min_parallel or one thread is allowed. fn must not throw.
template <typename F>
void ParallelFor(int64_t n, int64_t grain, int64_t min_parallel, F&& fn) {
  if (n < min_parallel || n <= grain || GetNumThreads() <= 1) {
    for (int64_t b = 0; b < n; b += grain) fn(b, std::min(n, b + grain));
    return;
  }
  using Fn = std::remove_reference_t<F>;
  RunBlocks(
      n, grain,
      [](void* context, int64_t begin, int64_t end) { (*static_cast<Fn*>(context))(begin, end); },
      const_cast<void*>(static_cast<const void*>(&fn)));
}

// OpenBLAS must never start threads of its own (eager splits GEMMs itself,
// so that results do not depend on the thread count): call before a BLAS call.
// The first call in the process also repairs OpenBLAS's core type
// (ops/internal/blas_core.h).
void KeepBlasSingleThreaded();

}  // namespace eager::internal
