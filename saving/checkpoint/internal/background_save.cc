#include "saving/checkpoint/internal/background_save.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <new>

#include "runtime/buffer_cache.h"
#include "saving/checkpoint/internal/own_copies.h"

namespace eager::internal {
namespace {

// The writer yields the CPU to the training threads and the intra-op pool
// (nice 19: a share of ~1.5% against each busy thread of normal priority, a
// whole core when one is idle). Threads it starts (a sharded save's) inherit
// it. Best effort: an error leaves the priority as it was.
void LowerThisThreadsPriority() {
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);
}

}  // namespace

BackgroundSave::~BackgroundSave() {
  Wait();
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    to_writer_.notify_one();
    thread_.join();
  }
  if (failure_) std::fprintf(stderr, "eager: %s\n", failure_->second.c_str());
}

void BackgroundSave::WriterLoop() {
  LowerThisThreadsPriority();
  cpu_set_t cores;
  CPU_ZERO(&cores);
  if (sched_getaffinity(0, sizeof(cores), &cores) != 0) CPU_ZERO(&cores);
  {
    std::lock_guard<std::mutex> lock(mu_);
    cores_ = cores;
    writer_tid_ = static_cast<int>(gettid());
    started_ = true;
  }
  to_owner_.notify_one();
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    to_writer_.wait(lock, [this] { return posted_ || stop_; });
    if (!posted_) return;  // stop_
    lock.unlock();
    std::exception_ptr error;
    try {
      save_();
    } catch (...) {
      error = std::current_exception();
    }
    // Blocks freed here (say of a tensor whose last reference the save
    // dropped here after its variable let go of it) wait in this thread's
    // buffer cache; a save's copies of held values (internal/own_copies.h)
    // are made and freed on the owner's thread, so beyond the copy budget
    // such blocks would never be allocated again: give them back.
    if (GetBufferCacheStats().cached_bytes > kOwnCopyBudgetBytes) ReleaseCachedBuffers();
    lock.lock();
    error_ = error;
    posted_ = false;
    to_owner_.notify_one();
  }
}

void BackgroundSave::Start(std::string prefix, std::function<void()> save) {
  EAGER_INTERNAL_CHECK(!pending_);
  prefix_ = std::move(prefix);
  save_ = std::move(save);
  if (!thread_.joinable()) {
    try {
      thread_ = std::thread([this] { WriterLoop(); });
    } catch (...) {
      save_ = nullptr;
      throw;
    }
    // Return only once the writer runs at nice 19 and sleeps: until then it
    // has its creator's priority and may hold this thread's core.
    std::unique_lock<std::mutex> lock(mu_);
    to_owner_.wait(lock, [this] { return started_; });
  }
  KeepWriterOffThisCore();  // before the wake-up, which picks the writer's core
  {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = nullptr;
    posted_ = true;
  }
  pending_ = true;
  to_writer_.notify_one();
}

void BackgroundSave::KeepWriterOffThisCore() {
  const int core = sched_getcpu();
  if (CPU_COUNT(&cores_) < 2 || core < 0 || core >= CPU_SETSIZE || !CPU_ISSET(core, &cores_)) {
    GiveWriterEveryCore();  // nothing to keep it off (or the caller is elsewhere)
    return;
  }
  cpu_set_t others = cores_;
  CPU_CLR(core, &others);
  kept_off_ = sched_setaffinity(writer_tid_, sizeof(others), &others) == 0;
}

void BackgroundSave::GiveWriterEveryCore() {
  if (!kept_off_) return;
  kept_off_ = false;
  (void)sched_setaffinity(writer_tid_, sizeof(cores_), &cores_);
}

void BackgroundSave::Wait() noexcept {
  if (!pending_) return;
  GiveWriterEveryCore();  // this thread's core idles while it waits
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mu_);
    to_owner_.wait(lock, [this] { return !posted_; });
    error = std::move(error_);
    error_ = nullptr;
  }
  pending_ = false;
  // The snapshot's tensors are released on this thread, so their buffers go
  // back to this thread's buffer cache (runtime/buffer_cache.h),
  // where the optimizer's next copy-on-write finds them.
  save_ = nullptr;
  if (error == nullptr) return;
  const std::string head = "Asynchronous save of " + prefix_ + " failed: ";
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    failure_.emplace(e.code(), head + e.what());
  } catch (const std::bad_alloc&) {
    failure_.emplace(ErrorCode::kResourceExhausted, head + "out of memory");
  } catch (const std::exception& e) {
    failure_.emplace(ErrorCode::kInternal, head + e.what());
  } catch (...) {
    failure_.emplace(ErrorCode::kInternal, head + "unknown exception");
  }
}

void BackgroundSave::Sync() {
  Wait();
  if (!failure_) return;
  const auto [code, message] = std::move(*failure_);
  failure_.reset();
  ThrowError(code, message);
}

}  // namespace eager::internal
