// internal::BackgroundSave: one writer thread at nice 19 for every save of
// its owner, the snapshot destroyed by the owner, errors kept for Sync().

#include "saving/internal/background_save.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "runtime/errors.h"
#include "runtime/internal/buffer_cache.h"
#include "runtime/tensor.h"

namespace eager::internal {
namespace {

int NiceOf(int tid) {
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
  EXPECT_EQ(errno, 0) << "getpriority of thread " << tid;
  return nice;
}

TEST(BackgroundSaveTest, StartReturnsWithTheWriterAlreadyAtNice19) {
  BackgroundSave background;
  EXPECT_EQ(background.writer_thread_id(), 0);
  std::atomic<bool> release{false};
  background.Start("p", [&] {
    while (!release.load()) std::this_thread::yield();
  });
  // Not "eventually": a writer still at the caller's priority would preempt
  // the caller on its core (background_save.h).
  const int tid = background.writer_thread_id();
  ASSERT_NE(tid, 0);
  EXPECT_NE(tid, static_cast<int>(gettid()));
  EXPECT_EQ(NiceOf(tid), 19);
  EXPECT_TRUE(background.running());
  release = true;
  background.Sync();
  EXPECT_FALSE(background.running());
}

TEST(BackgroundSaveTest, EverySaveRunsOnTheSameWriterThread) {
  BackgroundSave background;
  int ran_on[3] = {0, 0, 0};
  for (int& tid : ran_on) {
    background.Start("p", [&tid] { tid = static_cast<int>(gettid()); });
    background.Sync();
  }
  EXPECT_EQ(ran_on[0], background.writer_thread_id());
  EXPECT_EQ(ran_on[1], ran_on[0]);
  EXPECT_EQ(ran_on[2], ran_on[0]);
  EXPECT_EQ(NiceOf(ran_on[0]), 19);
}

TEST(BackgroundSaveTest, DestructorWaitsAndEndsTheWriterThread) {
  std::string task;
  bool done = false;
  {
    BackgroundSave background;
    background.Start("p", [&done] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      done = true;
    });
    task = "/proc/self/task/" + std::to_string(background.writer_thread_id());
    EXPECT_TRUE(std::filesystem::exists(task));
  }
  EXPECT_TRUE(done);
  EXPECT_FALSE(std::filesystem::exists(task));
}

// The snapshot lives in the function's captures: they must die on the owner
// thread (their buffers go back to its cache), in Wait(), not on the writer.
TEST(BackgroundSaveTest, TheSaveFunctionIsDestroyedByWaitOnTheOwnerThread) {
  struct Probe {
    std::thread::id* destroyed_on;
    ~Probe() { *destroyed_on = std::this_thread::get_id(); }
  };
  std::thread::id destroyed_on;
  BackgroundSave background;
  auto probe = std::make_shared<Probe>(Probe{&destroyed_on});
  background.Start("p", [probe] {});
  probe.reset();
  background.Wait();
  EXPECT_EQ(destroyed_on, std::this_thread::get_id());
}

// A tensor whose last reference the writer drops leaves its block in the
// writer's buffer cache, where nothing allocates again: the long-lived
// writer gives such blocks back after each save.
TEST(BackgroundSaveTest, BlocksFreedOnTheWriterAreNotKeptBetweenSaves) {
  BackgroundSave background;
  size_t cached_during = 0;
  background.Start("p", [&cached_during] {
    { const Tensor dropped = Tensor::Zeros(Shape{4096}); }
    cached_during = GetBufferCacheStats().cached_bytes;
  });
  background.Sync();
  EXPECT_GT(cached_during, 0u);
  size_t cached_after = 1;
  background.Start("p", [&cached_after] { cached_after = GetBufferCacheStats().cached_bytes; });
  background.Sync();
  EXPECT_EQ(cached_after, 0u);
}

TEST(BackgroundSaveTest, ErrorIsThrownOnceByTheNextSyncWithItsKind) {
  BackgroundSave background;
  background.Start("dir/ckpt-1", [] { throw NotFoundError("no such thing"); });
  background.Wait();  // keeps the error
  try {
    background.Sync();
    FAIL() << "Sync() did not throw";
  } catch (const NotFoundError& e) {
    EXPECT_STREQ(e.what(), "Asynchronous save of dir/ckpt-1 failed: no such thing");
  }
  EXPECT_NO_THROW(background.Sync());
  // The writer survives a failed save.
  bool ran = false;
  background.Start("dir/ckpt-2", [&ran] { ran = true; });
  background.Sync();
  EXPECT_TRUE(ran);
}

}  // namespace
}  // namespace eager::internal
