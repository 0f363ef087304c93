#pragma once

// internal::BufferCache: where Tensor buffers come from. For runtime's
// buffers and saving's background saves (whose copies' blocks stay in the
// writer thread's cache); not installed (cmake/package.cmake): not user API.
//
// A training step or a tape chain allocates and frees the same sizes again
// and again; malloc's aligned path and, for large blocks, mmap/munmap plus a
// page fault per fresh page cost more than small kernels do. Blocks are
// rounded up to a size class (four per power of two, so at most 25% slack)
// and freed blocks wait in a per-thread free list for the next allocation of
// their class. A thread keeps at most kMaxCachedBytes; beyond that, and for
// blocks larger than kMaxCachedBlock, memory goes straight back to the
// system. A block freed on another thread joins that thread's cache.

#include <cstddef>
#include <cstdint>

namespace eager::internal {

inline constexpr size_t kBufferCacheAlignment = 64;
inline constexpr size_t kMaxCachedBlock = size_t{64} << 20;   // 64 MiB
inline constexpr size_t kMaxCachedBytes = size_t{256} << 20;  // per thread

// `bytes` rounded up to its size class (the block size actually reserved).
size_t BufferSizeClass(size_t bytes);

// A block of at least `bytes`, 64-byte aligned; throws std::bad_alloc.
void* AllocateBufferBlock(size_t bytes);
// Returns a block from AllocateBufferBlock(bytes) (same `bytes`).
void FreeBufferBlock(void* block, size_t bytes) noexcept;

// This thread's counters, for tests and benchmarks.
struct BufferCacheStats {
  int64_t hits = 0;         // allocations served from the cache
  int64_t misses = 0;       // allocations that went to the system
  size_t cached_bytes = 0;  // bytes waiting in this thread's free lists
};
BufferCacheStats GetBufferCacheStats();
// Gives every block cached by this thread back to the system.
void ReleaseCachedBuffers();

}  // namespace eager::internal
