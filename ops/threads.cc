#include "ops/threads.h"

#include <omp.h>
#include <sched.h>

#include <atomic>
#include <thread>

#include "ops/internal/parallel.h"
#include "runtime/errors.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace eager {
namespace {

int MachineThreads() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

std::atomic<int>& Limit() {
  static std::atomic<int> limit{MachineThreads()};
  return limit;
}

}  // namespace

void SetNumThreads(int num_threads) {
  if (num_threads < 1) {
    throw InvalidArgumentError(
        StrCat("SetNumThreads: num_threads must be at least 1, got ", num_threads));
  }
  Limit().store(num_threads, std::memory_order_relaxed);
}

int GetNumThreads() { return Limit().load(std::memory_order_relaxed); }

namespace internal {

void UseEagerThreadCount() {
  thread_local int applied = 0;
  const int limit = GetNumThreads();
  if (applied == limit) return;
  omp_set_num_threads(limit);
  openblas_set_num_threads(limit);
  applied = limit;
}

}  // namespace internal
}  // namespace eager
