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
#include <memory>
#include <random>
#include <thread>

#include "runtime/variable.h"
#include "saving/bundle/bundle_files.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/bundle/directory_lock.h"
#include "saving/bundle/posix_file.h"
#include "saving/checkpoint/checkpoint.h"
#include "saving/checkpoint/checkpoint_manager.h"
#include "saving/saver/saver.h"
#include "saving/tools/inspect_checkpoint.h"
#include "tests/saving/bundle/interrupted_save.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
using ::eager::testing::FloatTensors;
using ::eager::testing::kNew;
using ::eager::testing::kOld;
using ::eager::testing::ListDir;
using ::eager::testing::RunKilledAfter;
using ::eager::testing::RunKilledAt;
using ::eager::testing::TempDir;
using ::eager::testing::TemporaryFiles;
using ::eager::testing::WriteBundle;

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
        // Every checkpoint the state file lists restores (issue 27: TF's
        // order, state, sweep, state, leaves a deleted one listed).
        const std::optional<CheckpointState> state = ReadCheckpointState(dir);
        ASSERT_TRUE(state.has_value());
        for (const std::string& path : state->all_model_checkpoint_paths) {
          const std::string prefix = (dir + "/").append(path);
          Variable restored(Tensor(0.0f), "v");
          EXPECT_NO_THROW(Checkpoint({{"v", &restored}}).Restore(prefix).AssertConsumed())
              << prefix;
        }
        // The next manager to open the directory removes what the kill left:
        // every file is the state file or part of a complete checkpoint.
        CheckpointManager reopened(checkpoint, dir, 2);
        for (const std::string& name : ListDir(dir)) {
          if (name == "checkpoint") continue;
          const std::string base = name.substr(0, name.find('.'));
          EXPECT_TRUE(fs::exists(IndexFilename((dir + "/").append(base)))) << name << " left over";
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

// Sharded overwrites (CheckpointOptions::num_shards): a save of N data files
// over a checkpoint of N + 1, and of N + 1 over N, synchronous and
// asynchronous, killed before each of its file steps. The shards are written
// by parallel threads, so the other shards' threads may get a few steps
// further before the kill lands. After every kill the prefix must restore
// completely to the old values or completely to the new ones, and every
// state left on disk must pass tfckpt.py verify.
struct ShardedOverwrite {
  int old_shards;
  int new_shards;
  bool async;
};

// Five variables of 4000, 3000, 2000, 1500 and 100 floats (bigger than the
// writer's 256 KiB buffer for the first, so it is written from its own
// memory), every shard gets bytes; old and new values differ in every one.
constexpr int64_t kShardedSizes[] = {4000, 3000, 2000, 1500, 100};
constexpr int kShardedCount = 5;

Tensor ShardedValue(int i, float generation) {
  std::vector<float> values(static_cast<size_t>(kShardedSizes[i]));
  for (size_t j = 0; j < values.size(); ++j) {
    values[j] = generation * 1e6f + float(i) * 1e4f + float(j);
  }
  return Tensor::FromVector<float>(std::move(values));
}

// Writes generation `generation`'s values to `prefix` as a Checkpoint.
void WriteSharded(const std::string& prefix, float generation, int num_shards, bool async) {
  std::vector<std::unique_ptr<Variable>> variables;
  std::vector<std::pair<std::string, Trackable*>> children;
  for (int i = 0; i < kShardedCount; ++i) {
    variables.push_back(std::make_unique<Variable>(ShardedValue(i, generation), "v"));
    children.emplace_back("v" + std::to_string(i), variables.back().get());
  }
  Checkpoint checkpoint(children);
  checkpoint.Write(prefix, CheckpointOptions{.async = async, .num_shards = num_shards});
  checkpoint.Sync();
}

// Restores `prefix` into fresh variables; the generation all of them hold
// (1 old, 2 new), or 0 with a failure recorded.
float RestoredShardedGeneration(const std::string& prefix) {
  std::vector<std::unique_ptr<Variable>> variables;
  std::vector<std::pair<std::string, Trackable*>> children;
  for (int i = 0; i < kShardedCount; ++i) {
    variables.push_back(
        std::make_unique<Variable>(DType::kFloat32, Shape{kShardedSizes[i]}, "restored"));
    children.emplace_back("v" + std::to_string(i), variables.back().get());
  }
  try {
    Checkpoint(children).Read(prefix).AssertConsumed();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the prefix does not restore: " << e.what();
    return 0;
  }
  for (float generation : {1.0f, 2.0f}) {
    bool all = true;
    for (int i = 0; i < kShardedCount; ++i) {
      all = all && variables[static_cast<size_t>(i)]->value().ToVector<float>() ==
                       ShardedValue(i, generation).ToVector<float>();
    }
    if (all) return generation;
  }
  ADD_FAILURE() << "neither all old nor all new values";
  return 0;
}

// tfckpt.py verify of each prefix, all in one Python process (one process
// per prefix would cost most of the test's time). Returns the exit status:
// 0 when every prefix verifies; *output lists the failures.
int TfckptVerifyAll(const std::vector<std::string>& prefixes, const std::string& log,
                    std::string* output) {
  const std::string tools = fs::path(EAGER_TFCKPT).parent_path().string();
  std::string command =
      "python3 -c \"import sys; sys.path.insert(0, sys.argv[1]); import tfckpt; "
      "bad = [p for p in sys.argv[2:] if tfckpt.main(['verify', '-q', p]) != 0]; "
      "print('FAILED:', bad) if bad else None; sys.exit(1 if bad else 0)\" '" +
      tools + "'";
  for (const std::string& prefix : prefixes) command += " '" + prefix + "'";
  const int rc = std::system((command + " >'" + log + "' 2>&1").c_str());
  *output = ::eager::testing::ReadFile(log);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

class ShardedOverwriteKillTest : public ::testing::TestWithParam<ShardedOverwrite> {};

TEST_P(ShardedOverwriteKillTest, ReadsOldOrNewAndVerifies) {
  const ShardedOverwrite param = GetParam();
  const std::string base = TempDir();
  const std::string dir = base + "/d";
  const std::string prefix = dir + "/ckpt";
  std::vector<std::string> snapshots;
  int saw[3] = {0, 0, 0};
  KillEverywhere(
      dir, [&] { WriteSharded(prefix, 1, param.old_shards, false); },
      [&] { WriteSharded(prefix, 2, param.new_shards, param.async); },
      [&] {
        const float generation = RestoredShardedGeneration(prefix);
        ++saw[static_cast<int>(generation)];
        // What is on disk now, for tfckpt.py at the end.
        const std::string copy = base + "/s" + std::to_string(snapshots.size());
        fs::create_directories(copy);
        for (const std::string& name : ListDir(dir)) {
          if (name.starts_with("ckpt.")) fs::copy_file(fs::path(dir) / name, fs::path(copy) / name);
        }
        snapshots.push_back(copy + "/ckpt");
      },
      5);
  EXPECT_GT(saw[1], 0) << "no kill left the old checkpoint";
  EXPECT_GT(saw[2], 0) << "no kill left the new checkpoint";
  if (!::eager::testing::HaveTfckpt()) {
    std::printf("[ SKIPPED  ] tfckpt.py verify: %s or python3 missing\n", EAGER_TFCKPT);
    return;
  }
  std::string output;
  EXPECT_EQ(TfckptVerifyAll(snapshots, base + "/verify.log", &output), 0) << output;
}

INSTANTIATE_TEST_SUITE_P(
    NOverNPlusOne, ShardedOverwriteKillTest,
    ::testing::Values(ShardedOverwrite{1, 2, false}, ShardedOverwrite{2, 1, false},
                      ShardedOverwrite{2, 3, false}, ShardedOverwrite{3, 2, false},
                      ShardedOverwrite{2, 3, true}, ShardedOverwrite{3, 2, true}),
    [](const auto& info) {
      return std::to_string(info.param.new_shards) + "Over" +
             std::to_string(info.param.old_shards) + (info.param.async ? "Async" : "");
    });

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
