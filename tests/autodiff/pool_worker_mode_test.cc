// The intra-op pool's workers (ops/parallel.cc) run in kernel mode from their
// start (runtime/flush_denormal.h), as TF's pool threads do.
//
// A new thread inherits its creator's floating-point mode (POSIX), and the
// pool is usually created inside a kernel, already in kernel mode; so the
// check runs in a fresh process (a death test's child) whose first pool job
// comes straight from internal::RunBlocks on a thread that is not in kernel
// mode. It lives in autodiff_tests because ops_tests' parameterized tests run
// ops while registering, so every ops_tests process starts with a pool.

#include <gtest/gtest.h>

#include <atomic>
#include <cfenv>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <thread>

#include "ops/parallel.h"
#include "runtime/threads.h"
#include "tests/testing/fp_mode.h"

namespace eager {
namespace {

using testing::Bits;
using testing::CallerControl;
using testing::CallerMode;
using testing::SmallDenormal;

struct WorkerProbe {
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> worker_ran{false};
  std::atomic<bool> worker_in_kernel_mode{false};
  bool caller_waited = false;  // only the caller touches it
};

// Exit codes: 0 the worker was in kernel mode, 1 it was not, 2 no worker
// ran a block, 3 the process already had other threads (not a fresh pool).
int ProbeAPoolWorker() {
  const auto threads = std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                                     std::filesystem::directory_iterator());
  if (threads != 1) return 3;
  CallerMode caller(/*flush=*/false, FE_UPWARD);
  SetNumThreads(2);
  WorkerProbe probe;
  internal::RunBlocks(
      64, 1,
      [](void* context, int64_t, int64_t) {
        auto& p = *static_cast<WorkerProbe*>(context);
        if (std::this_thread::get_id() != p.caller) {
          const bool flushes = Bits(testing::MultiplyHere(SmallDenormal(), 1.0f)) == 0;
          const bool nearest = (CallerControl() & internal::kRoundingControl) == 0;
          p.worker_in_kernel_mode = flushes && nearest;
          p.worker_ran = true;
          return;
        }
        // The caller holds its first block until a worker has taken one.
        if (p.caller_waited) return;
        p.caller_waited = true;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (!p.worker_ran && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::yield();
        }
      },
      &probe);
  if (!probe.worker_ran) return 2;
  return probe.worker_in_kernel_mode ? 0 : 1;
}

TEST(PoolWorkerModeTest, WorkersRunInKernelModeFromTheirStart) {
  if (!internal::kCanFlushDenormals) GTEST_SKIP() << "no flush-to-zero control on this CPU";
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: no pool yet
  EXPECT_EXIT(std::exit(ProbeAPoolWorker()), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace eager
