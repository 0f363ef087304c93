// Saves that a kill cannot break (DESIGN.md "Always", issue 10): a forked
// child saves and is SIGKILLed just before its Nth file-changing system call
// (internal::SetFileStepHook), for every N until the save completes, and at
// random times. After each kill the directory must read as the old content
// or the new one, never a mix; LatestCheckpoint must resolve to a checkpoint
// that restores and verifies; and the next save must clean up the killed
// save's temporary files. Also: disk full, a read-only directory, two writers
// on one directory.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <random>
#include <thread>

#include "runtime/variable.h"
#include "saving/bundle_files.h"
#include "saving/bundle_reader.h"
#include "saving/bundle_writer.h"
#include "saving/checkpoint.h"
#include "saving/checkpoint_manager.h"
#include "saving/checkpoint_state.h"
#include "saving/inspect_checkpoint.h"
#include "saving/internal/directory_lock.h"
#include "saving/internal/posix_file.h"
#include "saving/saver.h"
#include "tests/saving/interrupted_save.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
using ::eager::testing::FloatTensors;
using ::eager::testing::kNew;
using ::eager::testing::kOld;
using ::eager::testing::ListDir;
using ::eager::testing::SetFileStepTrap;
using ::eager::testing::TempDir;
using ::eager::testing::TemporaryFiles;
using ::eager::testing::WriteBundle;

// Runs `save` in a child killed before its kill_at-th file step. Returns
// true if the child was killed, false if the save completed first.
bool RunKilledAt(int kill_at, const std::function<void()>& save) {
  const pid_t pid = fork();
  EXPECT_GE(pid, 0);
  if (pid == 0) {
    SetFileStepTrap(kill_at);  // SIGKILL there
    try {
      save();
    } catch (const std::exception& e) {
      fprintf(stderr, "save failed in the child: %s\n", e.what());
      _exit(2);
    }
    _exit(0);
  }
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  if (WIFSIGNALED(status)) {
    EXPECT_EQ(WTERMSIG(status), SIGKILL);
    return true;
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  return false;
}

// A child that saves in a loop, killed after a random delay.
void RunKilledAfter(std::chrono::microseconds delay, const std::function<void()>& save) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      for (;;) save();
    } catch (...) {
      _exit(2);
    }
  }
  std::this_thread::sleep_for(delay);
  kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status)) << "the saving child exited on its own: status " << status;
}

void ResetDir(const std::string& dir, const std::function<void()>& setup) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  setup();
}

// Kills `save` at every step, then at random times; after each kill calls
// check() on the directory, then (every few kills) saves again in this
// process and expects no temporary file left.
void KillEverywhere(const std::string& dir, const std::function<void()>& setup,
                    const std::function<void()>& save, const std::function<void()>& check,
                    int random_kills) {
  int steps = 0;
  for (int k = 1;; ++k) {
    ResetDir(dir, setup);
    const bool killed = RunKilledAt(k, save);
    SCOPED_TRACE(::testing::Message() << "killed before file step " << k);
    check();
    if (::testing::Test::HasFailure()) return;
    if (!killed) {
      steps = k - 1;
      break;
    }
    if (k % 3 == 0) {
      save();
      EXPECT_EQ(TemporaryFiles(dir), std::vector<std::string>{}) << "after the next save";
      check();
    }
  }
  EXPECT_GT(steps, 5) << "the hook saw too few steps to be a real save";
  std::mt19937 random(42);
  for (int i = 0; i < random_kills; ++i) {
    ResetDir(dir, setup);
    const auto delay = std::chrono::microseconds(std::uniform_int_distribution<>(0, 20000)(random));
    RunKilledAfter(delay, save);
    SCOPED_TRACE(::testing::Message() << "killed after " << delay.count() << " us");
    check();
    if (::testing::Test::HasFailure()) return;
  }
}

std::map<std::string, Tensor> ReadAll(const std::string& prefix) {
  BundleReader reader(prefix);
  std::map<std::string, Tensor> out;
  for (const std::string& key : reader.Keys()) out.emplace(key, reader.Read(key));
  return out;
}

void ExpectSameTensors(const std::map<std::string, Tensor>& a, const FloatTensors& b, bool* same) {
  *same = a.size() == b.size();
  for (const auto& [key, values] : b) {
    const auto it = a.find(key);
    *same = *same && it != a.end() && it->second.ToVector<float>() == values;
  }
}

// Old or new, never a mix, never unreadable.
void ExpectOldOrNew(const std::string& prefix) {
  std::map<std::string, Tensor> got;
  try {
    got = ReadAll(prefix);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the prefix does not read: " << e.what();
    return;
  }
  bool is_old = false, is_new = false;
  ExpectSameTensors(got, kOld, &is_old);
  ExpectSameTensors(got, kNew, &is_new);
  EXPECT_TRUE(is_old || is_new) << "neither the old nor the new content";
}

TEST(KillTest, BundleOverwriteReadsOldOrNew) {
  const std::string dir = TempDir() + "/d";
  const std::string prefix = dir + "/ckpt";
  KillEverywhere(
      dir, [&] { WriteBundle(prefix, kOld); }, [&] { WriteBundle(prefix, kNew); },
      [&] { ExpectOldOrNew(prefix); }, 20);
}

TEST(KillTest, OverwritingTwiceAlternatesLayoutsAndLeavesNoOldDataFiles) {
  const std::string dir = TempDir();
  const std::string prefix = dir + "/ckpt";
  WriteBundle(prefix, kOld);
  EXPECT_EQ(ListDir(dir), (std::vector<std::string>{"ckpt.data-00000-of-00001", "ckpt.index"}));
  WriteBundle(prefix, kNew);
  EXPECT_EQ(ListDir(dir), (std::vector<std::string>{"ckpt.data-00000-of-00002",
                                                    "ckpt.data-00001-of-00002", "ckpt.index"}));
  EXPECT_EQ(BundleReader(prefix).num_shards(), 2);
  ExpectOldOrNew(prefix);
  WriteBundle(prefix, kOld);
  EXPECT_EQ(ListDir(dir), (std::vector<std::string>{"ckpt.data-00000-of-00001", "ckpt.index"}));
}

// The latest checkpoint restores into fresh objects and verifies.
float RestoreLatest(const std::string& dir) {
  const std::optional<std::string> latest = LatestCheckpoint(dir);
  if (!latest) {
    ADD_FAILURE() << "LatestCheckpoint(" << dir << ") is nullopt";
    return -1;
  }
  EXPECT_GT(VerifyCheckpoint(BundleReader(*latest)).tensors, 0);
  Variable restored(Tensor(0.0f), "v");
  Checkpoint({{"v", &restored}}).Restore(*latest).AssertExistingObjectsMatched();
  return restored.value().scalar<float>();
}

TEST(KillTest, CheckpointSaveLeavesALatestCheckpointThatRestores) {
  const std::string dir = TempDir() + "/d";
  Variable v(Tensor(1.0f), "v");
  Checkpoint checkpoint({{"v", &v}});
  KillEverywhere(
      dir,
      [&] {
        v.Assign(Tensor(1.0f));
        Checkpoint({{"v", &v}}).Save(dir + "/ckpt");  // ckpt-1 holds 1
      },
      [&] {
        v.Assign(Tensor(2.0f));
        Checkpoint({{"v", &v}}).Save(dir + "/ckpt");
      },
      [&] {
        const float value = RestoreLatest(dir);
        EXPECT_TRUE(value == 1.0f || value == 2.0f) << value;
      },
      10);
}

TEST(KillTest, CheckpointManagerRetentionLeavesALatestCheckpointThatRestores) {
  const std::string dir = TempDir() + "/d";
  Variable v(Tensor(0.0f), "v");
  Checkpoint checkpoint({{"v", &v}});
  KillEverywhere(
      dir,
      [&] {
        CheckpointManager manager(checkpoint, dir, 2);
        for (float x : {1.0f, 2.0f}) {
          v.Assign(Tensor(x));
          manager.Save(static_cast<int64_t>(x));
        }
      },
      [&] {
        CheckpointManager manager(checkpoint, dir, 2);
        v.Assign(Tensor(3.0f));
        manager.Save(3);  // deletes ckpt-1
      },
      [&] {
        const float value = RestoreLatest(dir);
        EXPECT_TRUE(value == 2.0f || value == 3.0f) << value;
        // Every checkpoint the state file still lists and whose index exists
        // reads completely.
        const std::optional<CheckpointState> state = ReadCheckpointState(dir);
        ASSERT_TRUE(state.has_value());
        for (const std::string& path : state->all_model_checkpoint_paths) {
          const std::string prefix = (dir + "/").append(path);
          if (fs::exists(IndexFilename(prefix))) {
            EXPECT_NO_THROW(ReadAll(prefix)) << prefix;
          }
        }
      },
      10);
}

TEST(KillTest, SaverOverwriteLeavesALatestCheckpointThatRestores) {
  const std::string dir = TempDir() + "/d";
  Variable v(Tensor(1.0f), "v");
  const auto save_value = [&](float x) {
    v.Assign(Tensor(x));
    Saver({{"w", &v}}).Save(dir + "/model.ckpt");
  };
  KillEverywhere(
      dir, [&] { save_value(1.0f); }, [&] { save_value(2.0f); },
      [&] {
        const std::optional<std::string> latest = LatestCheckpoint(dir);
        ASSERT_TRUE(latest.has_value());
        Variable restored(Tensor(0.0f), "v");
        Saver({{"w", &restored}}).Restore(*latest);
        const float value = restored.value().scalar<float>();
        EXPECT_TRUE(value == 1.0f || value == 2.0f) << value;
      },
      10);
}

TEST(KillTest, ForkedWritersPickDifferentTemporaryNames) {
  internal::RandomUint64();  // the parent's engine is seeded
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  for (int i = 0; i < 2; ++i) {
    if (fork() == 0) {
      const uint64_t r = internal::RandomUint64();
      (void)!write(fds[1], &r, sizeof(r));
      _exit(0);
    }
  }
  uint64_t got[2];
  for (uint64_t& r : got) ASSERT_EQ(read(fds[0], &r, sizeof(r)), 8);
  while (wait(nullptr) > 0) {
  }
  close(fds[0]);
  close(fds[1]);
  EXPECT_NE(got[0], got[1]);
}

TEST(KillTest, DiskFullIsAClearErrorWithThePreviousCheckpointIntact) {
  const std::string dir = TempDir();
  const std::string prefix = dir + "/ckpt";
  WriteBundle(prefix, kOld);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);  // write(2) then fails with EFBIG
    const rlimit limit{.rlim_cur = 64 << 10, .rlim_max = 64 << 10};
    setrlimit(RLIMIT_FSIZE, &limit);
    try {
      BundleWriter writer(prefix);
      writer.Add("big", Tensor::Zeros(Shape{1 << 20}));
      writer.Finish();
    } catch (const OutOfRangeError& e) {
      _exit(std::string(e.what()).find(dir) != std::string::npos ? 0 : 3);
    } catch (...) {
      _exit(4);
    }
    _exit(5);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(ListDir(dir), (std::vector<std::string>{"ckpt.data-00000-of-00001", "ckpt.index"}));
  ExpectOldOrNew(prefix);
}

// Root ignores directory permissions, so as root (CI) the save runs in a
// forked child that has dropped to the unprivileged uid/gid 65534 (nobody).
// Exit codes: 0 the expected error naming the directory, 1 the save
// succeeded, 2 another error, 3 the privileges could not be dropped.
int SaveAsUnprivileged(const std::string& dir, const std::string& prefix) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(3);
    try {
      WriteBundle(prefix, kNew);
      _exit(1);
    } catch (const FailedPreconditionError& e) {
      _exit(std::string(e.what()).find(dir) != std::string::npos ? 0 : 2);
    } catch (...) {
      _exit(2);
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(KillTest, ReadOnlyDirectoryIsAClearErrorWithThePreviousCheckpointIntact) {
  const std::string dir = TempDir();
  const std::string prefix = dir + "/ckpt";
  WriteBundle(prefix, kOld);
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                           fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  if (geteuid() == 0) {
    EXPECT_EQ(SaveAsUnprivileged(dir, prefix), 0) << "0: a FailedPrecondition naming " << dir;
  } else {
    try {
      WriteBundle(prefix, kNew);
      ADD_FAILURE() << "saved into a read-only directory";
    } catch (const FailedPreconditionError& e) {
      EXPECT_NE(std::string(e.what()).find(dir), std::string::npos) << e.what();
    }
  }
  fs::permissions(dir, fs::perms::owner_all);
  EXPECT_EQ(ListDir(dir), (std::vector<std::string>{"ckpt.data-00000-of-00001", "ckpt.index"}));
  ExpectOldOrNew(prefix);
}

TEST(KillTest, SecondWriterOnOneDirectoryIsRefused) {
  const std::string dir = TempDir();
  // Another thread.
  BundleWriter first(dir + "/a");
  std::string error;
  std::thread([&] {
    try {
      BundleWriter second(dir + "/b");
    } catch (const FailedPreconditionError& e) {
      error = e.what();
    }
  }).join();
  EXPECT_NE(error.find(dir), std::string::npos) << error;
  // Another process.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      Variable v(Tensor(1.0f), "v");
      Checkpoint({{"v", &v}}).Save(dir + "/ckpt");
    } catch (const FailedPreconditionError& e) {
      _exit(std::string(e.what()).find("another process") != std::string::npos ? 0 : 3);
    } catch (...) {
      _exit(4);
    }
    _exit(5);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  first.Add("x", Tensor(1.0f));
  first.Finish();
  // Released: the next writer works.
  WriteBundle(dir + "/b", kNew);
  ExpectOldOrNew(dir + "/b");
}

TEST(KillTest, SameThreadNestsTheLock) {
  const std::string dir = TempDir();
  const internal::DirectoryLock outer(dir);
  WriteBundle(dir + "/ckpt", kOld);  // takes the lock again, reentrantly
  ExpectOldOrNew(dir + "/ckpt");
}

}  // namespace
}  // namespace eager
