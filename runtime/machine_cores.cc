#include "runtime/machine_cores.h"

#include <sched.h>

#include <thread>

namespace eager::internal {
namespace {

int CountCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace

int MachineCores() {
  static const int cores = CountCores();
  return cores;
}

}  // namespace eager::internal
