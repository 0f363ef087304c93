#include "saving/bundle/internal/helper_thread.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <system_error>
#include <thread>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace eager::internal {
namespace {

using Clock = std::chrono::steady_clock;

// A futex wake in a KVM guest costs tens of microseconds (an idle vCPU is
// halted); restoring many tensors posts jobs back to back, so both sides
// poll for this long before sleeping.
constexpr auto kSpin = std::chrono::microseconds(200);

void Pause() {
#if defined(__x86_64__)
  _mm_pause();
#endif
}

// Waits until `word` differs from `old`: polls for kSpin, then sleeps.
uint32_t AwaitChange(const std::atomic<uint32_t>& word, uint32_t old) {
  const auto deadline = Clock::now() + kSpin;
  for (int i = 0;; ++i) {
    const uint32_t now = word.load(std::memory_order_acquire);
    if (now != old) return now;
    if ((i & 63) == 63 && Clock::now() > deadline) break;
    Pause();
  }
  for (;;) {
    word.wait(old, std::memory_order_acquire);
    const uint32_t now = word.load(std::memory_order_acquire);
    if (now != old) return now;
  }
}

class Helper {
 public:
  Helper() {
    try {
      std::thread([this] { Loop(); }).detach();
      pid_ = getpid();
    } catch (const std::system_error&) {
      // No thread: every caller works alone.
    }
  }

  // False when the thread could not be started, and in the child of a fork
  // (which has no copy of the thread).
  bool usable() const { return pid_ != 0 && pid_ == getpid(); }

  long jobs() const { return jobs_.load(std::memory_order_relaxed); }
  long offers() const { return offers_.load(std::memory_order_relaxed); }

  // Owned by one caller at a time.
  std::mutex& owner() { return owner_; }

  // REQUIRES: owner() held. Offers work(context) to the helper.
  void Offer(void (*work)(void*), void* context) {
    offers_.fetch_add(1, std::memory_order_relaxed);
    work_ = work;
    context_ = context;
    state_.store(kOffered, std::memory_order_release);
    state_.notify_one();
  }

  // REQUIRES: owner() held, after Offer. Withdraws the offer if the helper
  // has not taken it, else returns once the helper's call returned.
  void Finish() {
    uint32_t state = kOffered;
    if (state_.compare_exchange_strong(state, kIdle, std::memory_order_acq_rel)) return;
    while (state != kIdle) state = AwaitChange(state_, state);
  }

 private:
  static constexpr uint32_t kIdle = 0;
  static constexpr uint32_t kOffered = 1;
  static constexpr uint32_t kRunning = 2;

  void Loop() {
    for (uint32_t state = kIdle;;) {
      state = AwaitChange(state_, state);
      if (state != kOffered) continue;  // withdrawn before we saw it
      if (!state_.compare_exchange_strong(state, kRunning, std::memory_order_acq_rel)) {
        continue;  // withdrawn while we looked
      }
      jobs_.fetch_add(1, std::memory_order_relaxed);
      work_(context_);
      state_.store(kIdle, std::memory_order_release);
      state_.notify_one();
      state = kIdle;
    }
  }

  pid_t pid_ = 0;  // the process whose thread this is
  std::mutex owner_;
  void (*work_)(void*) = nullptr;  // written before kOffered is stored (release)
  void* context_ = nullptr;
  std::atomic<uint32_t> state_{kIdle};
  std::atomic<long> jobs_{0};
  std::atomic<long> offers_{0};
};

// Never destroyed: the thread runs until the process ends.
Helper& GetHelper() {
  static Helper* const helper = new Helper;
  return *helper;
}

}  // namespace

void RunShared(void (*work)(void*), void* context) {
  Helper& helper = GetHelper();
  std::unique_lock<std::mutex> lock(helper.owner(), std::defer_lock);
  if (!helper.usable() || !lock.try_lock()) {
    work(context);
    return;
  }
  helper.Offer(work, context);
  work(context);
  helper.Finish();
}

long HelperThreadJobs() { return GetHelper().jobs(); }

long HelperThreadOffers() { return GetHelper().offers(); }

}  // namespace eager::internal
