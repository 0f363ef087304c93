#include "ops/parallel.h"

#include <omp.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "ops/internal/blas_core.h"
#include "runtime/errors.h"
#include "runtime/flush_denormal.h"
#include "runtime/threads.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace eager {
namespace {

// How long a thread polls before it sleeps on a futex: an idle worker
// polling for the next job, and a caller waiting for the helpers still
// running blocks of its job. Waking a sleeping thread costs tens of
// microseconds on this machine's KVM guest (the host must reschedule the
// vCPU), about as long as a 256 x 256 GEMM block takes. With the earlier
// short poll (4,000 loads, a few microseconds) the caller had usually done
// every block itself by the time the worker woke: two threads ran a 256 GEMM
// only 1.17x faster than one (1.68x with a worker poll of 400,000 loads); and
// a caller that finished first slept, so the job ended only when it woke.
// A polling thread reacts within a microsecond. 100 us covers the gap between
// two parallel ops of a training step (the small ops between them take
// microseconds), so a burst of parallel ops hands off without a wake. The
// cost: each worker burns up to 100 us of a core after the last parallel op
// of a burst (benchmarks/README.md measures it). Polling never delays the
// caller: a worker descheduled while polling just does not claim a helper
// slot, and the caller withdraws the unclaimed slots when it runs out of
// blocks; it polls only for helpers that are running its blocks.
constexpr std::chrono::microseconds kIdleSpin{100};

// One polling step: a pause (tens to ~140 cycles) keeps the spin from
// starving a sibling hyperthread and from flooding the core with loads.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// The pool. Workers poll `generation` for kIdleSpin after their last job,
// then sleep on it (a futex through C++20 atomic::wait), so idle workers cost
// nothing once eager stops running parallel ops. Unlike an OpenMP team, whose
// barrier waits for every thread (libgomp's workers also spin 300,000 times
// before sleeping), a job here never waits for a worker that is not running:
// on a shared machine OpenMP's hand-offs waited for descheduled threads.
class Pool {
 public:
  static Pool& Get() {
    static Pool* pool = new Pool();  // never destroyed: workers may outlive statics
    return *pool;
  }

  // False when another job runs (the caller then works alone).
  bool Run(int64_t n, int64_t grain, internal::BlockFn fn, void* context, int threads) {
    std::unique_lock<std::mutex> busy(run_mutex_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    EnsureWorkers(threads - 1);
    n_ = n;
    grain_ = grain;
    blocks_ = (n + grain - 1) / grain;
    fn_ = fn;
    context_ = context;
    // Block 0 is the caller's, whoever would win the race for it: with one
    // block per thread (a GEMM) each thread then keeps its block, and the
    // rows of A and C that block reads and writes stay in its core's cache,
    // from one job to the next. When a polling worker won block 0 (a third
    // of 256 GEMMs on two threads), both blocks first pulled their lines
    // from the other core: ~20 us of a ~120 us block (benchmarks/README.md).
    next_.store(1, std::memory_order_relaxed);
    const int helpers = static_cast<int>(std::min<int64_t>(threads - 1, blocks_ - 1));
    active_.store(helpers, std::memory_order_relaxed);
    helpers_.store(helpers, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    fn_(context_, 0, std::min(n_, grain_));
    Work();
    // Helpers that have not woken up yet are not waited for: their slots are
    // withdrawn, and only the ones already working are awaited.
    int unclaimed = helpers_.exchange(0, std::memory_order_acq_rel);
    if (unclaimed > 0) active_.fetch_sub(unclaimed, std::memory_order_acq_rel);
    // They are running, so poll for them as an idle worker polls for jobs:
    // sleeping here would make their last block's end wait for this thread's
    // wake (tens of microseconds), a sizeable part of a 256 GEMM.
    if (PollFor([this] { return active_.load(std::memory_order_acquire) == 0; })) return true;
    for (int left; (left = active_.load(std::memory_order_acquire)) != 0;) {
      active_.wait(left, std::memory_order_acquire);
    }
    return true;
  }

 private:
  void Work() {
    for (;;) {
      const int64_t b = next_.fetch_add(1, std::memory_order_relaxed);
      if (b >= blocks_) return;
      fn_(context_, b * grain_, std::min(n_, (b + 1) * grain_));
    }
  }

  void EnsureWorkers(int count) {
    while (static_cast<int>(workers_.size()) < count) {
      workers_.emplace_back([this, seen = generation_.load()]() mutable {
        // Workers run nothing but kernel blocks: kernel mode for life, as
        // TF's pool threads (the caller's blocks run under RunKernel's scope).
        internal::EnterKernelModeForThisThread();
        Loop(seen);
      });
      workers_.back().detach();
    }
  }

  void Loop(uint64_t seen) {
    for (;;) {
      if (!PollFor([&] { return generation_.load(std::memory_order_acquire) != seen; })) {
        generation_.wait(seen, std::memory_order_acquire);
        continue;
      }
      seen = generation_.load(std::memory_order_acquire);
      // Join only as one of the job's helpers (the rest of the pool idles).
      int h = helpers_.load(std::memory_order_acquire);
      while (h > 0 && !helpers_.compare_exchange_weak(h, h - 1, std::memory_order_acq_rel)) {
      }
      if (h <= 0) continue;
      Work();
      if (active_.fetch_sub(1, std::memory_order_acq_rel) == 1) active_.notify_all();
    }
  }

  // Polls `done` (with a pause between polls) until it holds or kIdleSpin
  // has passed; returns its last value. The clock is read once per 16 polls
  // (~1 us), not on every poll.
  template <typename Done>
  static bool PollFor(Done done) {
    const auto deadline = std::chrono::steady_clock::now() + kIdleSpin;
    for (;;) {
      for (int i = 0; i < 16; ++i) {
        if (done()) return true;
        CpuRelax();
      }
      if (std::chrono::steady_clock::now() >= deadline) return done();
    }
  }

  std::mutex run_mutex_;
  std::vector<std::thread> workers_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int64_t> next_{0};
  std::atomic<int> active_{0};
  std::atomic<int> helpers_{0};
  int64_t n_ = 0, grain_ = 1, blocks_ = 0;
  internal::BlockFn fn_ = nullptr;
  void* context_ = nullptr;
};

}  // namespace

namespace internal {

void RunBlocks(int64_t n, int64_t grain, BlockFn fn, void* context) {
  const int threads = GetNumThreads();
  if (threads > 1 && n > grain && Pool::Get().Run(n, grain, fn, context, threads)) return;
  for (int64_t b = 0; b < n; b += grain) fn(context, b, std::min(n, b + grain));
}

void KeepBlasSingleThreaded() {
  // OpenBLAS's OpenMP build follows the calling thread's OpenMP limit.
  thread_local bool done = false;
  if (done) return;
  EnsureBlasCore();  // the process's first call repairs OpenBLAS's core
  omp_set_num_threads(1);
  openblas_set_num_threads(1);
  done = true;
}

}  // namespace internal
}  // namespace eager
