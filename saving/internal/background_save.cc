#include "saving/internal/background_save.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <new>

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
  if (failure_) std::fprintf(stderr, "eager: %s\n", failure_->second.c_str());
}

void BackgroundSave::Start(std::string prefix, std::function<void()> save) {
  EAGER_INTERNAL_CHECK(!thread_.joinable());
  prefix_ = std::move(prefix);
  error_ = nullptr;
  save_ = std::move(save);
  thread_ = std::thread([this] {
    LowerThisThreadsPriority();
    try {
      save_();
    } catch (...) {
      error_ = std::current_exception();
    }
  });
}

void BackgroundSave::Wait() noexcept {
  if (!thread_.joinable()) return;
  thread_.join();
  // The snapshot's tensors are released on this thread, so their buffers go
  // back to this thread's buffer cache (runtime/internal/buffer_cache.h),
  // where the optimizer's next copy-on-write finds them, instead of to a
  // thread about to exit.
  save_ = nullptr;
  if (error_ == nullptr) return;
  const std::string head = "Asynchronous save of " + prefix_ + " failed: ";
  try {
    std::rethrow_exception(error_);
  } catch (const Error& e) {
    failure_.emplace(e.code(), head + e.what());
  } catch (const std::bad_alloc&) {
    failure_.emplace(ErrorCode::kResourceExhausted, head + "out of memory");
  } catch (const std::exception& e) {
    failure_.emplace(ErrorCode::kInternal, head + e.what());
  } catch (...) {
    failure_.emplace(ErrorCode::kInternal, head + "unknown exception");
  }
  error_ = nullptr;
}

void BackgroundSave::Sync() {
  Wait();
  if (!failure_) return;
  const auto [code, message] = std::move(*failure_);
  failure_.reset();
  ThrowError(code, message);
}

}  // namespace eager::internal
