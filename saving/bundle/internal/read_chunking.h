#pragma once

// How BundleReader cuts a fixed-size tensor's bytes when it reads them:
// pieces of `chunk_bytes`, each read and checksummed while in cache, and, from
// `split_min_bytes` on, shared between the calling thread and saving's helper
// thread (bundle_reader.h). The defaults (1 MiB, 4 MiB) are what users get;
// tests and the fuzz target set small sizes so that files of a few hundred
// bytes take the multi-chunk, two-thread path. Not a user's knob.
//
// Process-wide; each Read uses the values current when it starts.

#include <cstdint>

namespace eager::internal {

struct ReadChunking {
  static constexpr uint64_t kDefaultChunkBytes = uint64_t{1} << 20;
  static constexpr uint64_t kDefaultSplitMinBytes = uint64_t{4} << 20;
  uint64_t chunk_bytes = kDefaultChunkBytes;         // >= 1
  uint64_t split_min_bytes = kDefaultSplitMinBytes;  // >= 1
};

ReadChunking CurrentReadChunking();

// For tests and fuzzing. Aborts unless both sizes are >= 1.
void SetReadChunkingForTesting(ReadChunking chunking);

// Sets `chunking` for a scope, then puts back what was there.
class ScopedReadChunking {
 public:
  explicit ScopedReadChunking(ReadChunking chunking) { SetReadChunkingForTesting(chunking); }
  ~ScopedReadChunking() { SetReadChunkingForTesting(saved_); }
  ScopedReadChunking(const ScopedReadChunking&) = delete;
  ScopedReadChunking& operator=(const ScopedReadChunking&) = delete;

 private:
  const ReadChunking saved_ = CurrentReadChunking();
};

}  // namespace eager::internal
