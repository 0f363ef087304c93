#include "saving/bundle/checkpoint_retention.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "runtime/errors.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/bundle/posix_file.h"
#include "tests/saving/saving_test_util.h"

namespace eager::internal {
namespace {

namespace fs = std::filesystem;
using ::eager::testing::ListDir;
using ::eager::testing::ReadFile;
using ::eager::testing::TempDir;
using ::eager::testing::WriteFile;

void WriteBundle(const std::string& prefix) {
  BundleWriter writer(prefix);
  writer.Add("v", Tensor(1.0f));
  writer.Finish();
}

// A clock the test moves by hand.
struct FakeClock {
  double now = 1000.0;
  std::function<double()> fn() {
    return [this] { return now; };
  }
};

std::vector<std::string> Names(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  out.reserve(paths.size());
  for (const auto& p : paths) out.push_back(fs::path(p).filename().string());
  return out;
}

TEST(CheckpointRetentionTest, KeepsTheNewestAndDeletesOnlyTheirFiles) {
  const std::string dir = TempDir();
  FakeClock clock;
  RetentionOptions options;
  options.max_to_keep = 2;
  options.clock = clock.fn();
  CheckpointRetention retention(dir, options);
  // Look-alikes that must survive: another prefix sharing the stem, a .meta
  // file, a file of the user's.
  WriteBundle(dir + "/ckpt-10");
  WriteFile(dir + "/ckpt-1.meta", "meta");
  WriteFile(dir + "/ckpt-1.data-notes", "mine");
  WriteFile(dir + "/notes.txt", "mine");
  for (int i = 1; i <= 4; ++i) {
    clock.now += 10;
    const std::string prefix = dir + "/ckpt-" + std::to_string(i);
    WriteBundle(prefix);
    const auto deleted = retention.Record(prefix);
    EXPECT_EQ(deleted.size(), i > 2 ? 1u : 0u);
  }
  EXPECT_EQ(Names(retention.checkpoints()), (std::vector<std::string>{"ckpt-3", "ckpt-4"}));
  EXPECT_EQ(retention.latest_checkpoint(), dir + "/ckpt-4");
  EXPECT_EQ(ListDir(dir),
            (std::vector<std::string>{"checkpoint", "ckpt-1.data-notes", "ckpt-1.meta",
                                      "ckpt-10.data-00000-of-00001", "ckpt-10.index",
                                      "ckpt-3.data-00000-of-00001", "ckpt-3.index",
                                      "ckpt-4.data-00000-of-00001", "ckpt-4.index", "notes.txt"}));
  EXPECT_EQ(ReadFile(dir + "/checkpoint"),
            "model_checkpoint_path: \"ckpt-4\"\n"
            "all_model_checkpoint_paths: \"ckpt-3\"\n"
            "all_model_checkpoint_paths: \"ckpt-4\"\n"
            "all_model_checkpoint_timestamps: 1030.0\n"
            "all_model_checkpoint_timestamps: 1040.0\n"
            "last_preserved_timestamp: 999.0\n");
  EXPECT_EQ(LatestCheckpoint(dir), dir + "/ckpt-4");
}

TEST(CheckpointRetentionTest, DeletesEveryShardOfAnOldCheckpoint) {
  const std::string dir = TempDir();
  RetentionOptions options;
  options.max_to_keep = 1;
  CheckpointRetention retention(dir, options);
  WriteFile(dir + "/a.index", "i");
  WriteFile(dir + "/a.data-00000-of-00002", "0");
  WriteFile(dir + "/a.data-00001-of-00002", "1");
  retention.Record(dir + "/a");
  WriteBundle(dir + "/b");
  EXPECT_EQ(retention.Record(dir + "/b"), (std::vector<std::string>{dir + "/a"}));
  EXPECT_EQ(ListDir(dir),
            (std::vector<std::string>{"b.data-00000-of-00001", "b.index", "checkpoint"}));
}

TEST(CheckpointRetentionTest, ResumesTheListFromTheStateFile) {
  const std::string dir = TempDir();
  FakeClock clock;
  RetentionOptions options;
  options.max_to_keep = 3;
  options.clock = clock.fn();
  {
    CheckpointRetention first(dir, options);
    for (int i = 1; i <= 3; ++i) {
      clock.now += 10;
      WriteBundle(dir + "/ckpt-" + std::to_string(i));
      first.Record(dir + "/ckpt-" + std::to_string(i));
    }
  }
  clock.now += 100;
  CheckpointRetention second(dir, options);
  EXPECT_EQ(second.checkpoints(),
            (std::vector<std::string>{dir + "/ckpt-1", dir + "/ckpt-2", dir + "/ckpt-3"}));
  EXPECT_EQ(second.latest_checkpoint(), dir + "/ckpt-3");
  WriteBundle(dir + "/ckpt-4");
  EXPECT_EQ(second.Record(dir + "/ckpt-4"), (std::vector<std::string>{dir + "/ckpt-1"}));
  EXPECT_FALSE(fs::exists(dir + "/ckpt-1.index"));
  EXPECT_EQ(Names(second.checkpoints()), (std::vector<std::string>{"ckpt-2", "ckpt-3", "ckpt-4"}));
}

TEST(CheckpointRetentionTest, RecordingAnExistingPrefixMovesItToTheEnd) {
  const std::string dir = TempDir();
  RetentionOptions options;
  options.max_to_keep = 2;
  CheckpointRetention retention(dir, options);
  for (const char* name : {"a", "b"}) {
    WriteBundle(dir + "/" + name);
    retention.Record(dir + "/" + name);
  }
  retention.Record(dir + "/./a");  // the same prefix, spelled differently
  WriteBundle(dir + "/c");
  retention.Record(dir + "/c");
  EXPECT_EQ(Names(retention.checkpoints()), (std::vector<std::string>{"a", "c"}));
  EXPECT_TRUE(fs::exists(dir + "/a.index"));
  EXPECT_FALSE(fs::exists(dir + "/b.index"));
}

// TF's rule: a checkpoint leaving the list is kept forever when it is at
// least N hours newer than the last one preserved.
TEST(CheckpointRetentionTest, KeepCheckpointEveryNHoursPreservesOnePerPeriod) {
  const std::string dir = TempDir();
  FakeClock clock;
  clock.now = 0.0;  // last_preserved = -1
  RetentionOptions options;
  options.max_to_keep = 1;
  options.keep_checkpoint_every_n_hours = 1.0;
  options.clock = clock.fn();
  CheckpointRetention retention(dir, options);
  // Saved at 0 min, 40 min, 80 min, 120 min, 130 min.
  for (int minutes : {0, 40, 80, 120, 130}) {
    clock.now = minutes * 60.0;
    const std::string prefix = dir + "/ckpt-" + std::to_string(minutes);
    WriteBundle(prefix);
    retention.Record(prefix);
  }
  // ckpt-0 left at 40 min: 0 - 3600 < -1, deleted. ckpt-40 left at 80:
  // 2400 - 3600 < -1, deleted. ckpt-80: 4800 - 3600 >= -1, preserved (last
  // preserved = 4800). ckpt-120: 7200 - 3600 < 4800, deleted.
  EXPECT_FALSE(fs::exists(dir + "/ckpt-0.index"));
  EXPECT_FALSE(fs::exists(dir + "/ckpt-40.index"));
  EXPECT_TRUE(fs::exists(dir + "/ckpt-80.index"));
  EXPECT_FALSE(fs::exists(dir + "/ckpt-120.index"));
  EXPECT_TRUE(fs::exists(dir + "/ckpt-130.index"));
  EXPECT_EQ(retention.last_preserved_timestamp(), 4800.0);
  EXPECT_EQ(Names(retention.checkpoints()), (std::vector<std::string>{"ckpt-130"}));
  // A resumed retention does not manage (so never deletes) the preserved one.
  CheckpointRetention resumed(dir, options);
  EXPECT_EQ(Names(resumed.checkpoints()), (std::vector<std::string>{"ckpt-130"}));
}

TEST(CheckpointRetentionTest, NothingIsDeletedWhenTheStateFileCannotBeWritten) {
  const std::string dir = TempDir();
  RetentionOptions options;
  options.max_to_keep = 1;
  CheckpointRetention retention(dir, options);
  WriteBundle(dir + "/a");
  retention.Record(dir + "/a");
  // Make the state file unwritable: a directory where its temp file would go
  // is not enough (random name), so replace the directory entry itself.
  fs::remove(dir + "/checkpoint");
  fs::create_directory(dir + "/checkpoint");
  WriteFile(dir + "/checkpoint/x", "x");  // rename over a non-empty directory fails
  WriteBundle(dir + "/b");
  EXPECT_ANY_THROW(retention.Record(dir + "/b"));
  EXPECT_TRUE(fs::exists(dir + "/a.index"));
  EXPECT_TRUE(fs::exists(dir + "/a.data-00000-of-00001"));
}

TEST(CheckpointRetentionTest, LeavesUntimestampedListsAloneUnlessAsked) {
  const std::string dir = TempDir();
  WriteBundle(dir + "/model.ckpt-1");
  WriteBundle(dir + "/model.ckpt-2");
  WriteFile(dir + "/checkpoint",
            "model_checkpoint_path: \"model.ckpt-2\"\n"
            "all_model_checkpoint_paths: \"model.ckpt-1\"\n"
            "all_model_checkpoint_paths: \"model.ckpt-2\"\n");
  RetentionOptions options;
  options.max_to_keep = 1;
  {
    CheckpointRetention manager_like(dir, options);  // TF's CheckpointManager rule
    EXPECT_TRUE(manager_like.checkpoints().empty());
    EXPECT_EQ(manager_like.latest_checkpoint(), dir + "/model.ckpt-2");
  }
  options.adopt_untimestamped_paths = true;
  options.relative_paths = false;
  options.write_timestamps = false;
  options.delete_meta_files = true;
  WriteFile(dir + "/model.ckpt-1.meta", "meta");
  CheckpointRetention saver_like(dir, options);
  EXPECT_EQ(Names(saver_like.checkpoints()),
            (std::vector<std::string>{"model.ckpt-1", "model.ckpt-2"}));
  WriteBundle(dir + "/model.ckpt-3");
  saver_like.Record(dir + "/model.ckpt-3");
  EXPECT_FALSE(fs::exists(dir + "/model.ckpt-1.meta"));
  EXPECT_FALSE(fs::exists(dir + "/model.ckpt-2.index"));
  // The directory is absolute, so the Saver-like paths are stored as given.
  EXPECT_EQ(ReadFile(dir + "/checkpoint"), "model_checkpoint_path: \"" + dir +
                                               "/model.ckpt-3\"\n"
                                               "all_model_checkpoint_paths: \"" +
                                               dir + "/model.ckpt-3\"\n");
}

TEST(CheckpointRetentionTest, RejectsBadOptions) {
  const std::string dir = TempDir();
  RetentionOptions options;
  options.max_to_keep = 0;
  EXPECT_THROW(CheckpointRetention(dir, options), InvalidArgumentError);
  options.max_to_keep = std::nullopt;  // keep everything
  CheckpointRetention all(dir, options);
  for (int i = 0; i < 7; ++i) {
    WriteBundle(dir + "/c" + std::to_string(i));
    EXPECT_TRUE(all.Record(dir + "/c" + std::to_string(i)).empty());
  }
  EXPECT_EQ(all.checkpoints().size(), 7u);
}

// issue 27: a hostile state file listing paths outside the directory (by
// `..`, by an absolute path, through a symlinked subdirectory) makes the
// retention neither manage nor delete them; a path into the directory
// through a symlinked alias of it is still its own.
TEST(CheckpointRetentionTest, NeverDeletesCheckpointsOutsideItsDirectory) {
  const std::string base = TempDir();
  const std::string run = base + "/run";
  const std::string victim = base + "/victim";
  fs::create_directories(run);
  fs::create_directories(victim);
  for (const char* name : {"v", "w", "x"}) WriteBundle(victim + "/" + name);
  fs::create_directory_symlink(victim, run + "/link");
  fs::create_directory_symlink(run, base + "/alias");
  WriteBundle(run + "/ckpt-1");
  WriteBundle(run + "/ckpt-2");
  CheckpointState state;
  state.model_checkpoint_path = "ckpt-2";
  state.all_model_checkpoint_paths = {"../victim/v", victim + "/w", "link/x", "ckpt-1",
                                      base + "/alias/ckpt-2"};
  state.all_model_checkpoint_timestamps = {10, 20, 30, 40, 50};
  state.last_preserved_timestamp = 1;
  WriteCheckpointState(run, state);

  FakeClock clock;
  RetentionOptions options;
  options.max_to_keep = 1;
  options.clock = clock.fn();
  CheckpointRetention retention(run, options);
  EXPECT_EQ(retention.ignored_checkpoints(),
            (std::vector<std::string>{run + "/../victim/v", victim + "/w", run + "/link/x"}));
  EXPECT_EQ(retention.checkpoints(),
            (std::vector<std::string>{run + "/ckpt-1", base + "/alias/ckpt-2"}));
  WriteBundle(run + "/ckpt-3");
  EXPECT_EQ(retention.Record(run + "/ckpt-3"),
            (std::vector<std::string>{run + "/ckpt-1", base + "/alias/ckpt-2"}));
  EXPECT_EQ(ListDir(victim),
            (std::vector<std::string>{"v.data-00000-of-00001", "v.index", "w.data-00000-of-00001",
                                      "w.index", "x.data-00000-of-00001", "x.index"}));
  EXPECT_EQ(ListDir(run), (std::vector<std::string>{"checkpoint", "ckpt-3.data-00000-of-00001",
                                                    "ckpt-3.index", "link"}));
  EXPECT_EQ(ReadCheckpointState(run)->all_model_checkpoint_paths,
            (std::vector<std::string>{"ckpt-3"}));
}

// issue 37: a listed `sub/../v` is inside the directory while `sub` is a
// real directory; a hook swaps `sub` for a symlink into the victim's tree
// just before the unlink (the race an attacker wins 1 time in 150 unaided).
// Deleting through the listed path then reached victim/v; the retention
// deletes plain names through its directory's descriptor instead.
std::string g_swap_sub;
std::string g_swap_target;
int SwapSubForSymlinkAtUnlink(std::string_view step, const std::string& path) {
  if (step == "unlink" && path.ends_with("v.index") && !fs::is_symlink(g_swap_sub)) {
    fs::rename(g_swap_sub, g_swap_sub + ".moved");
    fs::create_directory_symlink(g_swap_target, g_swap_sub);
  }
  return 0;
}

TEST(CheckpointRetentionTest, ASymlinkSwappedInAfterTheCheckCannotRedirectTheDelete) {
  const std::string base = TempDir();
  const std::string run = base + "/run";
  const std::string victim = base + "/victim";
  fs::create_directories(run + "/sub");
  fs::create_directories(victim + "/inner");
  WriteBundle(victim + "/v");
  WriteBundle(run + "/v");
  CheckpointState state;
  state.model_checkpoint_path = "sub/../v";
  state.all_model_checkpoint_paths = {"sub/../v"};
  state.all_model_checkpoint_timestamps = {10};
  state.last_preserved_timestamp = 1;
  WriteCheckpointState(run, state);
  FakeClock clock;
  RetentionOptions options;
  options.max_to_keep = 1;
  options.clock = clock.fn();
  CheckpointRetention retention(run, options);
  ASSERT_EQ(retention.checkpoints(), (std::vector<std::string>{run + "/sub/../v"}));
  WriteBundle(run + "/ckpt-1");
  g_swap_sub = run + "/sub";
  g_swap_target = victim + "/inner";
  SetFileStepHook(SwapSubForSymlinkAtUnlink);
  const std::vector<std::string> deleted = retention.Record(run + "/ckpt-1");
  SetFileStepHook(nullptr);
  ASSERT_TRUE(fs::is_symlink(run + "/sub"));  // the swap happened
  EXPECT_EQ(deleted, (std::vector<std::string>{run + "/sub/../v"}));
  EXPECT_EQ(ListDir(victim),
            (std::vector<std::string>{"inner", "v.data-00000-of-00001", "v.index"}));
  EXPECT_EQ(ListDir(run), (std::vector<std::string>{"checkpoint", "ckpt-1.data-00000-of-00001",
                                                    "ckpt-1.index", "sub", "sub.moved"}));
}

// issue 37: each retired checkpoint rescanned the whole directory for its
// data files (a crafted state file of 2,000 entries among 20,000 files took
// 40 s). One Record retiring them all scans the directory once, counted
// through DirectoryScansForTest (no wall-clock bound).
TEST(CheckpointRetentionTest, RetiringManyCheckpointsScansTheDirectoryOnce) {
  const std::string dir = TempDir();
  constexpr int kListed = 2000;
  CheckpointState state;
  for (int i = 0; i < kListed; ++i) {
    const std::string name = "ckpt-" + std::to_string(i);
    std::string prefix = dir;
    prefix.append("/").append(name);
    WriteFile(prefix + ".index", "i");
    WriteFile(prefix + ".data-00000-of-00001", "d");
    state.all_model_checkpoint_paths.push_back(name);
    state.all_model_checkpoint_timestamps.push_back(10.0 + i);
  }
  for (int i = 0; i < 20000 - 2 * kListed; ++i) {
    WriteFile(dir + "/other-" + std::to_string(i), "x");
  }
  state.model_checkpoint_path = state.all_model_checkpoint_paths.back();
  state.last_preserved_timestamp = 1;
  WriteCheckpointState(dir, state);
  FakeClock clock;
  clock.now = 1e6;
  RetentionOptions options;
  options.max_to_keep = 1;
  options.clock = clock.fn();
  CheckpointRetention retention(dir, options);
  ASSERT_EQ(retention.checkpoints().size(), static_cast<size_t>(kListed));
  WriteBundle(dir + "/new");
  const int64_t scans_before = DirectoryScansForTest();
  EXPECT_EQ(retention.Record(dir + "/new").size(), static_cast<size_t>(kListed));
  EXPECT_EQ(DirectoryScansForTest() - scans_before, 1) << "directory scans for one Record";
  EXPECT_EQ(ListDir(dir).size(), 20000u - 2 * kListed + 3);  // others, new's two, checkpoint
}

TEST(CheckpointRetentionTest, IsCheckpointInDirectoryResolvesDotsAndSymlinks) {
  const std::string base = TempDir();
  fs::create_directories(base + "/run/sub");
  fs::create_directory_symlink(base + "/run", base + "/alias");
  fs::create_directory_symlink(base, base + "/run/up");
  EXPECT_TRUE(IsCheckpointInDirectory(base + "/run/ckpt-1", base + "/run"));
  EXPECT_TRUE(IsCheckpointInDirectory(base + "/run/sub/../ckpt-1", base + "/run"));
  EXPECT_TRUE(IsCheckpointInDirectory(base + "/alias/ckpt-1", base + "/run"));
  EXPECT_TRUE(IsCheckpointInDirectory(base + "/run/ckpt-1", base + "/alias/"));
  EXPECT_TRUE(IsCheckpointInDirectory(base + "/run/up/run/ckpt-1", base + "/run"));
  EXPECT_FALSE(IsCheckpointInDirectory(base + "/run/sub/ckpt-1", base + "/run"));
  EXPECT_FALSE(IsCheckpointInDirectory(base + "/run/../ckpt-1", base + "/run"));
  EXPECT_FALSE(IsCheckpointInDirectory(base + "/run/up/ckpt-1", base + "/run"));
  EXPECT_FALSE(IsCheckpointInDirectory(base + "/run", base + "/run"));
  EXPECT_FALSE(IsCheckpointInDirectory("/ckpt-1", base + "/run"));
}

// At the moment each doomed index is unlinked, the state file must already
// have stopped listing it (TF lists it until after the sweep).
std::string g_state_dir;
std::vector<std::string> g_listed_when_unlinked;
int RecordStateAtUnlink(std::string_view step, const std::string& path) {
  if (step == "unlink" && path.ends_with(".index")) {
    const std::optional<CheckpointState> state = ReadCheckpointState(g_state_dir);
    for (const std::string& listed : state->all_model_checkpoint_paths) {
      if ((g_state_dir + "/").append(listed).append(".index") == path)
        g_listed_when_unlinked.push_back(path);
    }
  }
  return 0;
}

TEST(CheckpointRetentionTest, TheStateFileDropsACheckpointBeforeItsFilesGo) {
  const std::string dir = TempDir();
  RetentionOptions options;
  options.max_to_keep = 2;
  CheckpointRetention retention(dir, options);
  g_state_dir = dir;
  g_listed_when_unlinked.clear();
  SetFileStepHook(RecordStateAtUnlink);
  for (int i = 1; i <= 5; ++i) {
    WriteBundle(dir + "/ckpt-" + std::to_string(i));
    retention.Record(dir + "/ckpt-" + std::to_string(i));
  }
  SetFileStepHook(nullptr);
  EXPECT_EQ(g_listed_when_unlinked, std::vector<std::string>{});
  EXPECT_EQ(Names(retention.checkpoints()), (std::vector<std::string>{"ckpt-4", "ckpt-5"}));
  EXPECT_FALSE(fs::exists(dir + "/ckpt-3.index"));
}

TEST(CheckpointRetentionTest, RemovesOnlyDataFilesWhoseIndexIsGone) {
  const std::string dir = TempDir();
  WriteBundle(dir + "/ckpt-2");  // whole: kept
  for (const char* name :
       {"ckpt-1.data-00000-of-00001", "ckpt-3.data-00000-of-00002", "ckpt-3.data-00001-of-00002",
        // not the manager's: another name, no number, not a data file
        "other-1.data-00000-of-00001", "ckpt-x.data-00000-of-00001", "ckpt-.data-00000-of-00001",
        "ckpt-4.data-notes", "ckpt-5.meta"}) {
    WriteFile(dir + "/" + name, "x");
  }
  EXPECT_EQ(RemoveOrphanedDataFiles(dir, "ckpt"), 3);
  EXPECT_EQ(ListDir(dir), (std::vector<std::string>{
                              "ckpt-.data-00000-of-00001", "ckpt-2.data-00000-of-00001",
                              "ckpt-2.index", "ckpt-4.data-notes", "ckpt-5.meta",
                              "ckpt-x.data-00000-of-00001", "other-1.data-00000-of-00001"}));
}

}  // namespace
}  // namespace eager::internal
