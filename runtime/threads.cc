#include "runtime/threads.h"

#include <atomic>

#include "runtime/errors.h"
#include "runtime/machine_cores.h"

namespace eager {
namespace {

// A function-local static, so that a caller in another file's static
// initializer still sees the default.
std::atomic<int>& Limit() {
  static std::atomic<int> limit{internal::MachineCores()};
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

}  // namespace eager
