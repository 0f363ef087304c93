#include "saving/bundle/internal/read_chunking.h"

#include <atomic>
#include <cstdlib>

namespace eager::internal {
namespace {

std::atomic<uint64_t> chunk_bytes{ReadChunking::kDefaultChunkBytes};
std::atomic<uint64_t> split_min_bytes{ReadChunking::kDefaultSplitMinBytes};

}  // namespace

ReadChunking CurrentReadChunking() {
  return {.chunk_bytes = chunk_bytes.load(std::memory_order_relaxed),
          .split_min_bytes = split_min_bytes.load(std::memory_order_relaxed)};
}

void SetReadChunkingForTesting(ReadChunking chunking) {
  if (chunking.chunk_bytes < 1 || chunking.split_min_bytes < 1) std::abort();
  chunk_bytes.store(chunking.chunk_bytes, std::memory_order_relaxed);
  split_min_bytes.store(chunking.split_min_bytes, std::memory_order_relaxed);
}

}  // namespace eager::internal
