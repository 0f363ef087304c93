#include "runtime/buffer_cache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "runtime/tensor.h"

namespace eager::internal {
namespace {

TEST(BufferCacheTest, SizeClassesCoverTheRequestWithAtMostAQuarterSlack) {
  for (size_t bytes = 1; bytes <= (size_t{1} << 22); bytes = bytes * 5 / 4 + 1) {
    const size_t c = BufferSizeClass(bytes);
    EXPECT_GE(c, bytes);
    EXPECT_EQ(c % kBufferCacheAlignment, 0u) << bytes;
    if (bytes > 256) {
      EXPECT_LE(c, bytes + bytes / 4 + 64) << bytes;
    }
  }
  EXPECT_EQ(BufferSizeClass(64), 64u);
  EXPECT_EQ(BufferSizeClass(65), 128u);
  EXPECT_EQ(BufferSizeClass(257), 320u);
  EXPECT_EQ(BufferSizeClass(513), 640u);
  EXPECT_EQ(BufferSizeClass(1 << 20), size_t{1} << 20);
}

TEST(BufferCacheTest, AFreedBlockServesTheNextAllocationOfItsClass) {
  ReleaseCachedBuffers();
  void* a = AllocateBufferBlock(1000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % kBufferCacheAlignment, 0u);
  FreeBufferBlock(a, 1000);
  const BufferCacheStats before = GetBufferCacheStats();
  EXPECT_EQ(before.cached_bytes, BufferSizeClass(1000));
  void* b = AllocateBufferBlock(1010);  // same class (1024)
  EXPECT_EQ(b, a);
  const BufferCacheStats after = GetBufferCacheStats();
  EXPECT_EQ(after.hits, before.hits + 1);
  EXPECT_EQ(after.cached_bytes, 0u);
  FreeBufferBlock(b, 1010);
  ReleaseCachedBuffers();
  EXPECT_EQ(GetBufferCacheStats().cached_bytes, 0u);
}

TEST(BufferCacheTest, TensorsOfASteadyLoopStopGoingToTheSystem) {
  ReleaseCachedBuffers();
  for (int i = 0; i < 3; ++i) {
    Tensor t = Tensor::Zeros(Shape{256, 256}, DType::kFloat32);
    Tensor small = Tensor::Scalar<float>(1.0f);
  }
  const BufferCacheStats warm = GetBufferCacheStats();
  for (int i = 0; i < 100; ++i) {
    Tensor t = Tensor::Zeros(Shape{256, 256}, DType::kFloat32);
    Tensor small = Tensor::Scalar<float>(static_cast<float>(i));
    EXPECT_EQ(small.ToVector<float>()[0], static_cast<float>(i));
    EXPECT_EQ(t.ToVector<float>()[1000], 0.0f);  // a reused block is zeroed by Zeros
  }
  const BufferCacheStats steady = GetBufferCacheStats();
  EXPECT_EQ(steady.misses, warm.misses);
  EXPECT_GE(steady.hits, warm.hits + 200);
}

TEST(BufferCacheTest, FreedBlocksOfOneClassComeBackLastInFirstOut) {
  ReleaseCachedBuffers();
  void* a = AllocateBufferBlock(200);
  void* b = AllocateBufferBlock(200);
  void* c = AllocateBufferBlock(200);
  FreeBufferBlock(a, 200);
  FreeBufferBlock(b, 200);
  FreeBufferBlock(c, 200);
  EXPECT_EQ(GetBufferCacheStats().cached_bytes, 3 * BufferSizeClass(200));
  const BufferCacheStats before = GetBufferCacheStats();
  EXPECT_EQ(AllocateBufferBlock(200), c);
  EXPECT_EQ(AllocateBufferBlock(200), b);
  EXPECT_EQ(AllocateBufferBlock(200), a);
  EXPECT_EQ(GetBufferCacheStats().hits, before.hits + 3);
  EXPECT_EQ(GetBufferCacheStats().cached_bytes, 0u);
  void* d = AllocateBufferBlock(200);  // the list is empty again: from the system
  EXPECT_EQ(GetBufferCacheStats().misses, before.misses + 1);
  for (void* block : {a, b, c, d}) FreeBufferBlock(block, 200);
  ReleaseCachedBuffers();
  EXPECT_EQ(GetBufferCacheStats().cached_bytes, 0u);
}

TEST(BufferCacheTest, LargeBlocksAndTheByteCapGoToTheSystem) {
  ReleaseCachedBuffers();
  void* huge = AllocateBufferBlock(kMaxCachedBlock + 1);
  FreeBufferBlock(huge, kMaxCachedBlock + 1);
  EXPECT_EQ(GetBufferCacheStats().cached_bytes, 0u);

  std::vector<void*> blocks;
  const size_t n = kMaxCachedBytes / kMaxCachedBlock + 2;
  for (size_t i = 0; i < n; ++i) blocks.push_back(AllocateBufferBlock(kMaxCachedBlock));
  for (void* b : blocks) FreeBufferBlock(b, kMaxCachedBlock);
  EXPECT_LE(GetBufferCacheStats().cached_bytes, kMaxCachedBytes);
  ReleaseCachedBuffers();
}

TEST(BufferCacheTest, BlocksFreedOnAnotherThreadAreSafe) {
  std::vector<Tensor> made;
  made.reserve(50);
  for (int i = 0; i < 50; ++i) made.push_back(Tensor::Zeros(Shape{i + 1}, DType::kFloat64));
  std::thread other([moved = std::move(made)]() mutable {
    moved.clear();  // freed into this thread's cache, released when it exits
    Tensor t = Tensor::Zeros(Shape{10}, DType::kFloat64);
    EXPECT_EQ(t.ToVector<double>()[9], 0.0);
  });
  other.join();
  Tensor again = Tensor::Zeros(Shape{50}, DType::kFloat64);
  EXPECT_EQ(again.ToVector<double>()[49], 0.0);
}

// A thread whose first use of the cache is a free (blocks made elsewhere)
// still gives its cache back when it exits: the leak checker of the
// sanitizer build (EAGER_SANITIZE) reports the blocks otherwise.
TEST(BufferCacheTest, AThreadThatOnlyFreesCachesAndReleasesAtExit) {
  std::vector<void*> blocks(8);
  for (void*& block : blocks) block = AllocateBufferBlock(4096);
  std::thread other([&blocks] {
    EXPECT_EQ(GetBufferCacheStats().cached_bytes, 0u);
    for (void* block : blocks) FreeBufferBlock(block, 4096);
    EXPECT_EQ(GetBufferCacheStats().cached_bytes, 8 * BufferSizeClass(4096));
    EXPECT_EQ(GetBufferCacheStats().misses, 0);
  });
  other.join();
}

// A Tensor held by a thread_local made before the thread's cache was first
// used is freed after the cache is gone: straight to the system.
TEST(BufferCacheTest, TensorsFreedAfterTheCacheAtThreadExitBypassIt) {
  struct Holder {
    Tensor tensor = Tensor::Zeros(Shape{100}, DType::kFloat32);
  };
  std::thread other([] {
    thread_local Holder holder;  // made before the cache registers its cleanup: destroyed after
    EXPECT_EQ(holder.tensor.ToVector<float>()[99], 0.0f);
    Tensor t = Tensor::Zeros(Shape{100}, DType::kFloat32);  // freed into the cache
  });
  other.join();
}

TEST(BufferCacheTest, StringBuffersAreReusedSafely) {
  for (int i = 0; i < 10; ++i) {
    Tensor s = Tensor::FromVector<std::string>({"a long string that does not fit SSO storage", "b"},
                                               Shape{2});
    EXPECT_EQ(s.ToVector<std::string>()[1], "b");
  }
}

}  // namespace
}  // namespace eager::internal
