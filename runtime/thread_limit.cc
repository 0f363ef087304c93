#include "runtime/thread_limit.h"

#include <atomic>

#include "runtime/machine_cores.h"

namespace eager::internal {
namespace {

// A function-local static, so that a caller in another file's static
// initializer still sees the default.
std::atomic<int>& Limit() {
  static std::atomic<int> limit{MachineCores()};
  return limit;
}

}  // namespace

int ThreadLimit() { return Limit().load(std::memory_order_relaxed); }

void SetThreadLimit(int limit) { Limit().store(limit, std::memory_order_relaxed); }

}  // namespace eager::internal
