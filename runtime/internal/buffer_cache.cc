#include "runtime/internal/buffer_cache.h"

#include <array>
#include <bit>
#include <new>
#include <vector>

// Under AddressSanitizer (EAGER_SANITIZE, the fuzzer), blocks waiting in the
// cache and the slack past a block's requested bytes are poisoned, so a use
// after free or an overflow into the slack is reported as it would be with
// plain malloc. Without ASan these are no-ops.
#if defined(__SANITIZE_ADDRESS__)
#define EAGER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EAGER_ASAN 1
#endif
#endif
#ifdef EAGER_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace eager::internal {
namespace {

void Poison([[maybe_unused]] void* p, [[maybe_unused]] size_t n) {
#ifdef EAGER_ASAN
  ASAN_POISON_MEMORY_REGION(p, n);
#endif
}
void Unpoison([[maybe_unused]] void* p, [[maybe_unused]] size_t n) {
#ifdef EAGER_ASAN
  ASAN_UNPOISON_MEMORY_REGION(p, n);
#endif
}

// A block of `size` bytes handed out for `bytes`: only those are usable.
void* HandOut(void* block, size_t bytes, size_t size) {
  Unpoison(block, bytes);
  Poison(static_cast<char*>(block) + bytes, size - bytes);
  return block;
}

constexpr size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Class c covers sizes up to ClassSize(c): 64, 128, 192, 256, then four
// steps per doubling (320, 384, 448, 512, 640, ...).
constexpr int kClassesPerDoubling = 4;
constexpr int kNumClasses = 128;

int ClassOf(size_t bytes) {
  if (bytes <= 256) return static_cast<int>(RoundUp(bytes == 0 ? 1 : bytes, 64) / 64) - 1;
  // bytes in (2^p, 2^(p+1)]: step 2^(p-2).
  const int p = std::bit_width(bytes - 1) - 1;  // 2^p < bytes <= 2^(p+1)
  const size_t step = size_t{1} << (p - 2);
  const size_t steps = (bytes - (size_t{1} << p) + step - 1) / step;  // 1..4
  return 3 + (p - 8) * kClassesPerDoubling + static_cast<int>(steps);
}

size_t ClassSize(int c) {
  if (c < 4) return static_cast<size_t>(c + 1) * 64;
  const int p = (c - 4) / kClassesPerDoubling + 8;
  const size_t steps = static_cast<size_t>((c - 4) % kClassesPerDoubling + 1);
  return (size_t{1} << p) + steps * (size_t{1} << (p - 2));
}

void* SystemAllocate(size_t bytes) {
  return ::operator new(bytes, std::align_val_t(kBufferCacheAlignment));
}
void SystemFree(void* block, size_t size) noexcept {
  Unpoison(block, size);  // as it was allocated; ASan poisons it again as freed
  ::operator delete(block, std::align_val_t(kBufferCacheAlignment));
}

struct ThreadCache {
  std::array<std::vector<void*>, kNumClasses> free;
  size_t cached_bytes = 0;
  int64_t hits = 0;
  int64_t misses = 0;

  void ReleaseAll() noexcept {
    for (int c = 0; c < kNumClasses; ++c) {
      for (void* block : free[c]) SystemFree(block, ClassSize(c));
      free[c].clear();
      free[c].shrink_to_fit();
    }
    cached_bytes = 0;
  }
  ~ThreadCache();
};

// Trivially destructible, so still readable while (and after) thread_local
// objects are destroyed: a Tensor freed by a later destructor (a static, or
// another thread_local) bypasses the dead cache.
thread_local bool cache_gone = false;
thread_local ThreadCache cache;

ThreadCache::~ThreadCache() {
  ReleaseAll();
  cache_gone = true;
}

}  // namespace

size_t BufferSizeClass(size_t bytes) {
  if (bytes > kMaxCachedBlock) return RoundUp(bytes, kBufferCacheAlignment);
  return ClassSize(ClassOf(bytes));
}

void* AllocateBufferBlock(size_t bytes) {
  if (bytes > kMaxCachedBlock || cache_gone) {
    const size_t size = BufferSizeClass(bytes);
    return HandOut(SystemAllocate(size), bytes, size);
  }
  const int c = ClassOf(bytes);
  ThreadCache& tc = cache;
  if (std::vector<void*>& list = tc.free[c]; !list.empty()) {
    void* block = list.back();
    list.pop_back();
    tc.cached_bytes -= ClassSize(c);
    ++tc.hits;
    return HandOut(block, bytes, ClassSize(c));
  }
  ++tc.misses;
  return HandOut(SystemAllocate(ClassSize(c)), bytes, ClassSize(c));
}

void FreeBufferBlock(void* block, size_t bytes) noexcept {
  if (block == nullptr) return;
  if (bytes > kMaxCachedBlock || cache_gone) {
    SystemFree(block, BufferSizeClass(bytes));
    return;
  }
  const int c = ClassOf(bytes);
  ThreadCache& tc = cache;
  const size_t size = ClassSize(c);
  if (tc.cached_bytes + size > kMaxCachedBytes) {
    SystemFree(block, size);
    return;
  }
  try {
    tc.free[c].push_back(block);
  } catch (...) {  // no memory for the list itself: just free the block
    SystemFree(block, size);
    return;
  }
  tc.cached_bytes += size;
  Poison(block, size);
}

BufferCacheStats GetBufferCacheStats() {
  if (cache_gone) return {};
  const ThreadCache& tc = cache;
  return {tc.hits, tc.misses, tc.cached_bytes};
}

void ReleaseCachedBuffers() {
  if (!cache_gone) cache.ReleaseAll();
}

}  // namespace eager::internal
