// I/O errors during a save (issue 10): each file-changing system call of a
// save fails in turn with EIO (or ENOSPC, a full disk), injected through
// internal::SetFileStepHook. Every time: the save throws an error naming the
// file (or directory) the failed call was on and the OS's reason, the
// previous checkpoint still reads (or, when the failure came after the new
// one was in place, the new one does, never a mix), and no temporary file is
// left behind.

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/errors.h"
#include "runtime/variable.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/bundle/directory_lock.h"
#include "saving/bundle/posix_file.h"
#include "saving/checkpoint/checkpoint.h"
#include "saving/tools/inspect_checkpoint.h"
#include "tests/saving/bundle/interrupted_save.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
using ::eager::testing::FileStepTrap;
using ::eager::testing::FloatTensors;
using ::eager::testing::g_file_step_trap;
using ::eager::testing::kNew;
using ::eager::testing::kOld;
using ::eager::testing::ListDir;
using ::eager::testing::RemoveFileStepTrap;
using ::eager::testing::SetFileStepTrap;
using ::eager::testing::TempDir;
using ::eager::testing::TemporaryFiles;
using ::eager::testing::WriteBundle;

// Runs `save` with its fail_at-th file step failing with `err` (unlinks are
// not counted: they are the cleanup of a failed save, which is best effort).
// Returns the error's message, or nullopt when the save had fewer steps and
// succeeded.
std::optional<std::string> SaveFailingAt(int fail_at, int err, const std::function<void()>& save) {
  SetFileStepTrap(fail_at, err, /*count_unlinks=*/false);
  std::optional<std::string> error;
  try {
    save();
  } catch (const Error& e) {
    error = e.what();
  }
  RemoveFileStepTrap();
  if (!error) {
    EXPECT_TRUE(g_file_step_trap.sprung_path.empty())
        << "a failed " << g_file_step_trap.sprung_step << " went unseen";
  }
  return error;
}

// Fails every step of `save` in turn (after setup() each time), then calls
// check(failed) on the directory. Returns how many steps the save has.
int FailEveryStep(const std::string& dir, int err, const std::function<void()>& setup,
                  const std::function<void()>& save, const std::function<void()>& check) {
  for (int k = 1;; ++k) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    setup();
    const std::optional<std::string> error = SaveFailingAt(k, err, save);
    if (!error) return k - 1;
    const FileStepTrap& trap = g_file_step_trap;
    SCOPED_TRACE(::testing::Message() << "file step " << k << " (" << trap.sprung_step << " of "
                                      << trap.sprung_path << ") failed: " << *error);
    EXPECT_NE(error->find(trap.sprung_path), std::string::npos) << "the error names the file";
    EXPECT_NE(error->find(std::strerror(err)), std::string::npos) << "and the OS's reason";
    EXPECT_EQ(TemporaryFiles(dir), std::vector<std::string>{}) << "temporary files left";
    check();
    if (::testing::Test::HasFailure()) return k;
  }
}

FloatTensors ReadAll(const std::string& prefix) {
  BundleReader reader(prefix);
  FloatTensors out;
  for (const std::string& key : reader.Keys()) out.emplace(key, reader.Read(key).ToVector<float>());
  return out;
}

// The old bundle with exactly its own files, or the new one complete.
void ExpectOldOrNew(const std::string& dir, const std::string& prefix) {
  FloatTensors got;
  try {
    got = ReadAll(prefix);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the prefix does not read: " << e.what();
    return;
  }
  if (got == kOld) {
    EXPECT_EQ(ListDir(dir), (std::vector<std::string>{"ckpt.data-00000-of-00001", "ckpt.index"}))
        << "a failed overwrite left files behind";
  } else {
    EXPECT_EQ(got, kNew) << "neither the old nor the new content";
  }
}

TEST(IoErrorTest, BundleOverwriteFailingAtEveryStepWithEioKeepsTheOldBundle) {
  const std::string dir = TempDir() + "/d";
  const std::string prefix = dir + "/ckpt";
  const int steps = FailEveryStep(
      dir, EIO, [&] { WriteBundle(prefix, kOld); }, [&] { WriteBundle(prefix, kNew); },
      [&] { ExpectOldOrNew(dir, prefix); });
  EXPECT_GE(steps, 8) << "create/write/fsync/close of data and index, renames, directory fsync";
}

TEST(IoErrorTest, NewBundleFailingAtEveryStepWithEioLeavesNoFile) {
  const std::string dir = TempDir() + "/d";
  const std::string prefix = dir + "/ckpt";
  FailEveryStep(
      dir, EIO, [] {}, [&] { WriteBundle(prefix, kOld); },
      [&] {
        // Only a failure after the index rename leaves a (complete) bundle.
        if (!ListDir(dir).empty()) {
          EXPECT_EQ(ReadAll(prefix), kOld);
        }
      });
}

// A full disk: write(2) or fsync fails with ENOSPC. TensorFlow reports it as
// RESOURCE_EXHAUSTED; so do we.
TEST(IoErrorTest, DiskFullIsResourceExhaustedNamingTheFileAndKeepsTheOldBundle) {
  const std::string dir = TempDir() + "/d";
  const std::string prefix = dir + "/ckpt";
  FailEveryStep(
      dir, ENOSPC, [&] { WriteBundle(prefix, kOld); },
      [&] {
        try {
          WriteBundle(prefix, kNew);
        } catch (const ResourceExhaustedError&) {
          throw;
        } catch (const Error& e) {
          ADD_FAILURE() << "not ResourceExhaustedError: " << e.what();
          throw;
        }
      },
      [&] { ExpectOldOrNew(dir, prefix); });
}

// Checkpoint::Save: bundle, then the `checkpoint` state file. After any
// failure the latest checkpoint restores (the old value, or the new one when
// only the last directory fsync failed).
TEST(IoErrorTest, CheckpointSaveFailingAtEveryStepWithEioLeavesALatestCheckpointThatRestores) {
  const std::string dir = TempDir() + "/d";
  Variable v(Tensor(1.0f), "v");
  std::unique_ptr<Checkpoint> checkpoint;
  const int steps = FailEveryStep(
      dir, EIO,
      [&] {
        v.Assign(Tensor(1.0f));
        checkpoint = std::make_unique<Checkpoint>(
            std::vector<std::pair<std::string, Trackable*>>{{"v", &v}});
        checkpoint->Save(dir + "/ckpt");  // ckpt-1 holds 1
      },
      [&] {
        v.Assign(Tensor(2.0f));
        checkpoint->Save(dir + "/ckpt");  // ckpt-2 holds 2
      },
      [&] {
        const std::optional<std::string> latest = LatestCheckpoint(dir);
        ASSERT_TRUE(latest.has_value());
        EXPECT_GT(VerifyCheckpoint(BundleReader(*latest)).tensors, 0);
        Variable restored(Tensor(0.0f), "v");
        Checkpoint({{"v", &restored}}).Restore(*latest).AssertExistingObjectsMatched();
        const float value = restored.value().scalar<float>();
        if (*latest == dir + "/ckpt-1") {
          EXPECT_EQ(value, 1.0f);
        } else {
          EXPECT_EQ(value, 2.0f);
        }
      });
  EXPECT_GE(steps, 12) << "the bundle's steps and the state file's";
}

}  // namespace
}  // namespace eager
