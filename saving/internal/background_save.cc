#include "saving/internal/background_save.h"

#include <cstdio>
#include <new>

namespace eager::internal {

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
