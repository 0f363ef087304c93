#include "runtime/buffer_cache.h"

#include <array>
#include <bit>
#include <new>

// Under AddressSanitizer (EAGER_SANITIZE, the fuzzer), blocks waiting in the
// cache and the slack past a block's requested bytes are poisoned, so a use
// after free or an overflow into the slack is reported as it would be with
// plain malloc. Without ASan these are no-ops.
#include "runtime/sanitizers.h"
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

constexpr int ClassOf(size_t bytes) {
  if (bytes <= 256) return static_cast<int>(RoundUp(bytes == 0 ? 1 : bytes, 64) / 64) - 1;
  // bytes in (2^p, 2^(p+1)]: step 2^(p-2).
  const int p = std::bit_width(bytes - 1) - 1;  // 2^p < bytes <= 2^(p+1)
  const size_t step = size_t{1} << (p - 2);
  const size_t steps = (bytes - (size_t{1} << p) + step - 1) / step;  // 1..4
  return 3 + (p - 8) * kClassesPerDoubling + static_cast<int>(steps);
}

constexpr size_t ComputeClassSize(int c) {
  if (c < 4) return static_cast<size_t>(c + 1) * 64;
  const int p = (c - 4) / kClassesPerDoubling + 8;
  const size_t steps = static_cast<size_t>((c - 4) % kClassesPerDoubling + 1);
  return (size_t{1} << p) + steps * (size_t{1} << (p - 2));
}

// Looked up on every allocation and free: a table, not the arithmetic.
constexpr auto kClassSizes = [] {
  std::array<size_t, kNumClasses> sizes{};
  for (int c = 0; c < kNumClasses; ++c) sizes[c] = ComputeClassSize(c);
  return sizes;
}();
static_assert(ClassOf(kClassSizes[kNumClasses - 1]) == kNumClasses - 1);
static_assert(kClassSizes[kNumClasses - 1] >= kMaxCachedBlock);

size_t ClassSize(int c) { return kClassSizes[static_cast<size_t>(c)]; }

void* SystemAllocate(size_t bytes) {
  return ::operator new(bytes, std::align_val_t(kBufferCacheAlignment));
}
void SystemFree(void* block, size_t size) noexcept {
  Unpoison(block, size);  // as it was allocated; ASan poisons it again as freed
  ::operator delete(block, std::align_val_t(kBufferCacheAlignment));
}

// Each class's free blocks form a list threaded through the blocks
// themselves (a freed block's first bytes point at the next one), so a free
// never allocates and the cache is plain data: zero-initialized, trivially
// destructible, read without the guard a thread_local with a destructor
// costs on every access. Its release at thread exit is a separate
// thread_local (Cleanup) that the first block cached by a thread registers.
struct ThreadCache {
  std::array<void*, kNumClasses> free;
  size_t cached_bytes;
  int64_t hits;
  int64_t misses;
  // Set once this thread's thread_local objects are being destroyed: a
  // Tensor freed by a later destructor (a static, or another thread_local)
  // then bypasses the dead cache.
  bool gone;
  bool cleanup_registered;

  void Push(int c, void* block) noexcept {
    *static_cast<void**>(block) = free[c];
    free[c] = block;
  }
  void* Pop(int c) noexcept {
    void* block = free[c];
    if (block != nullptr) {
      Unpoison(block, sizeof(void*));
      free[c] = *static_cast<void**>(block);
    }
    return block;
  }
  void ReleaseAll() noexcept {
    for (int c = 0; c < kNumClasses; ++c) {
      while (void* block = Pop(c)) SystemFree(block, ClassSize(c));
    }
    cached_bytes = 0;
  }
};

constinit thread_local ThreadCache cache{};

struct Cleanup {
  ~Cleanup() {
    cache.ReleaseAll();
    cache.gone = true;
  }
};
thread_local Cleanup cleanup;

// Out of line and rare: the first access constructs `cleanup`, which
// registers its destructor for this thread's exit.
[[gnu::noinline]] void RegisterCleanup() noexcept {
  [[maybe_unused]] Cleanup* volatile registered = &cleanup;
  cache.cleanup_registered = true;
}

}  // namespace

size_t BufferSizeClass(size_t bytes) {
  if (bytes > kMaxCachedBlock) return RoundUp(bytes, kBufferCacheAlignment);
  return ClassSize(ClassOf(bytes));
}

void* AllocateBufferBlock(size_t bytes) {
  ThreadCache& tc = cache;
  if (bytes > kMaxCachedBlock || tc.gone) [[unlikely]] {
    const size_t size = BufferSizeClass(bytes);
    return HandOut(SystemAllocate(size), bytes, size);
  }
  const int c = ClassOf(bytes);
  const size_t size = ClassSize(c);
  if (void* block = tc.Pop(c)) [[likely]] {
    tc.cached_bytes -= size;
    ++tc.hits;
    return HandOut(block, bytes, size);
  }
  ++tc.misses;
  return HandOut(SystemAllocate(size), bytes, size);
}

void FreeBufferBlock(void* block, size_t bytes) noexcept {
  if (block == nullptr) return;
  ThreadCache& tc = cache;
  if (bytes > kMaxCachedBlock || tc.gone) [[unlikely]] {
    SystemFree(block, BufferSizeClass(bytes));
    return;
  }
  const int c = ClassOf(bytes);
  const size_t size = ClassSize(c);
  if (tc.cached_bytes + size > kMaxCachedBytes) [[unlikely]] {
    SystemFree(block, size);
    return;
  }
  if (!tc.cleanup_registered) [[unlikely]]
    RegisterCleanup();
  tc.Push(c, block);
  tc.cached_bytes += size;
  // The link to the next free block stays unpoisoned: LeakSanitizer ignores
  // pointers in poisoned memory, so with the whole block poisoned every block
  // behind a list's head looked leaked whenever a cache still held blocks at
  // the leak check (ops_tests' test listing under ASan failed that way).
  Poison(static_cast<char*>(block) + sizeof(void*), size - sizeof(void*));
}

BufferCacheStats GetBufferCacheStats() {
  if (cache.gone) return {};
  const ThreadCache& tc = cache;
  return {tc.hits, tc.misses, tc.cached_bytes};
}

void ReleaseCachedBuffers() {
  if (!cache.gone) cache.ReleaseAll();
}

}  // namespace eager::internal
