// internal::BackgroundSave: one writer thread at nice 19 for every save of
// its owner, the snapshot destroyed by the owner, errors kept for Sync().

#include "saving/checkpoint/internal/background_save.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "runtime/buffer_cache.h"
#include "runtime/errors.h"
#include "runtime/tensor.h"
#include "runtime/tensor_access.h"
#include "saving/checkpoint/internal/own_copies.h"

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

// This thread's affinity, pinned to one core for a test and restored after.
class PinnedToOneCore {
 public:
  PinnedToOneCore() {
    CPU_ZERO(&saved_);
    EXPECT_EQ(sched_getaffinity(0, sizeof(saved_), &saved_), 0);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &saved_)) {
        core_ = cpu;
        break;
      }
    }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(core_, &one);
    EXPECT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  }
  ~PinnedToOneCore() { sched_setaffinity(0, sizeof(saved_), &saved_); }
  int core() const { return core_; }
  const cpu_set_t& all() const { return saved_; }

 private:
  cpu_set_t saved_;
  int core_ = 0;
};

cpu_set_t AffinityOf(int tid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(tid, sizeof(set), &set), 0);
  return set;
}

// A writer that ran on the caller's core took it for a scheduler slice now
// and then (background_save.h): while the caller trains, the writer may use
// every core of the process but the caller's; once the caller waits for the
// save, every core. With one core, nothing changes.
TEST(BackgroundSaveTest, TheWriterKeepsOffTheCallersCoreUntilTheCallerWaits) {
  BackgroundSave background;
  background.Start("p", [] {});  // the writer starts with this thread's cores
  background.Sync();
  PinnedToOneCore pinned;
  std::atomic<bool> release{false};
  std::atomic<bool> got_every_core{false};
  std::atomic<bool> recorded{false};
  cpu_set_t during;
  int ran_on = -1;
  background.Start("p", [&] {
    during = AffinityOf(0);
    ran_on = sched_getcpu();
    recorded = true;
    while (!release.load()) std::this_thread::yield();
    // Sync() below gives the writer every core back before it blocks.
    for (int i = 0; i < 5000 && !got_every_core.load(); ++i) {
      const cpu_set_t now = AffinityOf(0);
      if (CPU_EQUAL(&now, &pinned.all())) got_every_core = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  while (!recorded.load()) std::this_thread::yield();
  release = true;
  background.Sync();
  EXPECT_TRUE(got_every_core.load());
  if (CPU_COUNT(&pinned.all()) >= 2) {
    cpu_set_t expected = pinned.all();
    CPU_CLR(pinned.core(), &expected);
    EXPECT_TRUE(CPU_EQUAL(&during, &expected));
    EXPECT_NE(ran_on, pinned.core());
  } else {
    EXPECT_TRUE(CPU_EQUAL(&during, &pinned.all()));
  }
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
  // join() returns once the kernel clears the thread's id, a moment before
  // it removes the task from /proc; an ended thread's entry goes within
  // milliseconds, a writer still alive keeps it for the whole wait.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::filesystem::exists(task) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
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

// Blocks freed on the writer (a save's own copies of held values,
// saving/checkpoint/internal/own_copies.h) stay in its buffer cache for the next save's
// copies, up to the copy budget; beyond it, the long-lived writer gives
// them back after the save.
TEST(BackgroundSaveTest, BlocksFreedOnTheWriterAreKeptUpToTheCopyBudget) {
  BackgroundSave background;
  background.Start("p", [] { const Tensor dropped = NewTensor(Shape{4096}, DType::kFloat32); });
  background.Sync();
  size_t cached_before = 0;
  int64_t hits = 0;
  background.Start("p", [&] {
    cached_before = GetBufferCacheStats().cached_bytes;
    const int64_t hits_before = GetBufferCacheStats().hits;
    const Tensor again = NewTensor(Shape{4096}, DType::kFloat32);
    hits = GetBufferCacheStats().hits - hits_before;
  });
  background.Sync();
  EXPECT_GE(cached_before, 4096 * sizeof(float));
  EXPECT_EQ(hits, 1);

  // Two 40 MiB blocks (each cacheable, together over the 64 MiB budget).
  constexpr int64_t kFloats = int64_t{10} << 20;
  size_t cached_during = 0;
  background.Start("p", [&cached_during] {
    {
      const Tensor a = NewTensor(Shape{kFloats}, DType::kFloat32);
      const Tensor b = NewTensor(Shape{kFloats}, DType::kFloat32);
    }
    cached_during = GetBufferCacheStats().cached_bytes;
  });
  background.Sync();
  EXPECT_GT(cached_during, kOwnCopyBudgetBytes);
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
