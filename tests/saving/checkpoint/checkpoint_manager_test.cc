#include "saving/checkpoint/checkpoint_manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>

#include "runtime/errors.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/bundle/directory_lock.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
using ::eager::testing::ListDir;
using ::eager::testing::TempDir;
using ::eager::testing::WriteFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(CheckpointManagerTest, NumbersKeepsMaxToKeepAndResumes) {
  const std::string dir = TempDir();
  WriteFile(dir + "/notes.txt", "the user's");
  Variable v(Tensor(0.0f), "v");
  {
    Checkpoint checkpoint({{"v", &v}});
    CheckpointManager manager(checkpoint, dir, 3);
    EXPECT_EQ(manager.latest_checkpoint(), std::nullopt);
    for (int i = 1; i <= 5; ++i) {
      v.Assign(Tensor(static_cast<float>(i)));
      EXPECT_EQ(manager.Save(), dir + "/ckpt-" + std::to_string(i));
    }
    EXPECT_THAT(manager.checkpoints(),
                ElementsAre(dir + "/ckpt-3", dir + "/ckpt-4", dir + "/ckpt-5"));
    EXPECT_EQ(manager.latest_checkpoint(), dir + "/ckpt-5");
    EXPECT_EQ(LatestCheckpoint(dir), dir + "/ckpt-5");
    EXPECT_EQ(manager.Save(42), dir + "/ckpt-42");  // an explicit number
  }
  EXPECT_THAT(ListDir(dir), ElementsAre("checkpoint", "ckpt-4.data-00000-of-00001", "ckpt-4.index",
                                        "ckpt-42.data-00000-of-00001", "ckpt-42.index",
                                        "ckpt-5.data-00000-of-00001", "ckpt-5.index", "notes.txt"));
  const CheckpointState state = *ReadCheckpointState(dir);
  EXPECT_EQ(state.model_checkpoint_path, "ckpt-42");
  EXPECT_THAT(state.all_model_checkpoint_paths, ElementsAre("ckpt-4", "ckpt-5", "ckpt-42"));
  EXPECT_EQ(state.all_model_checkpoint_timestamps.size(), 3u);
  EXPECT_TRUE(state.last_preserved_timestamp.has_value());

  // A new process: resumes the list and the counter from the checkpoint.
  Variable w(Tensor(0.0f), "w");
  Checkpoint checkpoint({{"v", &w}});
  CheckpointManager manager(checkpoint, dir, 3);
  EXPECT_EQ(manager.latest_checkpoint(), dir + "/ckpt-42");
  EXPECT_EQ(manager.RestoreOrInitialize(), dir + "/ckpt-42");
  EXPECT_EQ(w.value().scalar<float>(), 5.0f);
  EXPECT_EQ(checkpoint.save_counter().value().scalar<int64_t>(), 6);
  EXPECT_EQ(manager.Save(), dir + "/ckpt-7");
  EXPECT_FALSE(fs::exists(dir + "/ckpt-4.index"));
  EXPECT_TRUE(fs::exists(dir + "/notes.txt"));
  EXPECT_THAT(manager.checkpoints(),
              ElementsAre(dir + "/ckpt-5", dir + "/ckpt-42", dir + "/ckpt-7"));
}

TEST(CheckpointManagerTest, CheckpointIntervalFollowsTheStepCounter) {
  const std::string dir = TempDir();
  Variable step(Tensor(int64_t{0}), "step");
  Checkpoint checkpoint({{"step", &step}});
  CheckpointManager manager(checkpoint, dir, std::nullopt, std::nullopt, "model", &step, 10);
  EXPECT_EQ(manager.Save(), dir + "/model-1");
  step.Assign(Tensor(int64_t{5}));
  EXPECT_EQ(manager.Save(), std::nullopt);
  step.Assign(Tensor(int64_t{10}));
  EXPECT_EQ(manager.Save(), dir + "/model-2");
  EXPECT_EQ(manager.Save(std::nullopt, /*check_interval=*/false), std::nullopt);  // same step
  step.Assign(Tensor(int64_t{11}));
  EXPECT_EQ(manager.Save(std::nullopt, /*check_interval=*/false), dir + "/model-3");
}

TEST(CheckpointManagerTest, RejectsBadArguments) {
  const std::string dir = TempDir();
  Variable v(Tensor(0.0f), "v");
  Checkpoint checkpoint({{"v", &v}});
  EXPECT_THROW(CheckpointManager(checkpoint, dir, 0), InvalidArgumentError);
  EXPECT_THROW(CheckpointManager(checkpoint, dir, 3, std::nullopt, "ckpt", nullptr, 5),
               InvalidArgumentError);
}

TEST(CheckpointManagerTest, TictactoeDirectoryResolvesAndRestoresItsLatestStep) {
  EAGER_SKIP_WITHOUT_REALDATA();
  // Copy: a manager may delete, and realdata is read-only input.
  const std::string dir = TempDir();
  fs::copy(::eager::testing::RealdataDir() + "/tf2_checkpoint_manager_tictactoe/tf_ckpts", dir,
           fs::copy_options::recursive);
  Variable step(Tensor(int32_t{0}), "step");
  Checkpoint checkpoint({{"step", &step}});
  CheckpointManager manager(checkpoint, dir, 3);
  ASSERT_EQ(manager.latest_checkpoint(), dir + "/ckpt-19");
  EXPECT_THAT(manager.checkpoints(),
              ElementsAre(dir + "/ckpt-17", dir + "/ckpt-18", dir + "/ckpt-19"));
  checkpoint.Restore(*manager.latest_checkpoint()).ExpectPartial();  // net, optimizer not here
  EXPECT_GT(step.value().scalar<int32_t>(), 0);
  EXPECT_EQ(checkpoint.save_counter().value().scalar<int64_t>(), 19);
}

// issue 27: the TF behaviour this replaces deletes ../victim/v's files.
TEST(CheckpointManagerTest, AStateFileCannotMakeItDeleteOutsideItsDirectory) {
  const std::string base = TempDir();
  const std::string run = base + "/run";
  fs::create_directories(base + "/victim");
  Variable v(Tensor(1.0f), "v");
  Checkpoint({{"v", &v}}).Write(base + "/victim/v");
  CheckpointState state;
  state.model_checkpoint_path = "../victim/v";
  state.all_model_checkpoint_paths = {"../victim/v"};
  state.all_model_checkpoint_timestamps = {10};
  state.last_preserved_timestamp = 1;
  fs::create_directories(run);
  WriteCheckpointState(run, state);
  Checkpoint checkpoint({{"v", &v}});
  CheckpointManager manager(checkpoint, run, 1);
  EXPECT_THAT(manager.ignored_checkpoints(), ElementsAre(run + "/../victim/v"));
  EXPECT_TRUE(manager.checkpoints().empty());
  manager.Save();
  manager.Save();
  EXPECT_THAT(ListDir(base + "/victim"), ElementsAre("v.data-00000-of-00001", "v.index"));
  EXPECT_THAT(manager.checkpoints(), ElementsAre(run + "/ckpt-2"));
  EXPECT_THAT(ReadCheckpointState(run)->all_model_checkpoint_paths, ElementsAre("ckpt-2"));
}

// What a killed save or sweep leaves goes when a manager opens the
// directory, before any save; not while another writer holds it.
TEST(CheckpointManagerTest, OpeningRemovesLeftoversOfKilledSavesAndSweeps) {
  const std::string dir = TempDir();
  Variable v(Tensor(1.0f), "v");
  Checkpoint checkpoint({{"v", &v}});
  {
    CheckpointManager manager(checkpoint, dir, 3);
    manager.Save();
  }
  const std::vector<std::string> leftovers = {
      "ckpt-0.data-00000-of-00001",                     // a sweep killed after the index went
      "ckpt-2.data-00000-of-00001.tempstate123",        // a save killed while writing
      "ckpt-2.index.tempstate123",                      //
      "checkpoint.tmp0123456789abcdef0123456789abcdef"  // a state file write killed
  };
  const std::vector<std::string> clean = {"checkpoint", "ckpt-1.data-00000-of-00001",
                                          "ckpt-1.index", "notes.txt"};
  WriteFile(dir + "/notes.txt", "the user's");
  {
    // Another thread holds the directory: its files may be a save in progress.
    const internal::DirectoryLock held(dir);
    for (const std::string& name : leftovers) WriteFile((dir + "/").append(name), "x");
    std::thread([&] { CheckpointManager manager(checkpoint, dir, 3); }).join();
    EXPECT_EQ(ListDir(dir).size(), clean.size() + leftovers.size());
  }
  CheckpointManager manager(checkpoint, dir, 3);
  EXPECT_EQ(ListDir(dir), clean);
  EXPECT_THAT(manager.checkpoints(), ElementsAre(dir + "/ckpt-1"));
}

// issue 37: the directory lock covered one save, so two live managers on one
// directory took turns and each deleted the other's checkpoints. From its
// first save a manager owns the directory; another's Save is refused, naming
// the directory and the owner; reading is not.
TEST(CheckpointManagerTest, ASecondManagerInTheProcessCannotSaveIntoAnOwnedDirectory) {
  const std::string dir = TempDir();
  Variable v(Tensor(1.0f), "v");
  Checkpoint first_checkpoint({{"v", &v}});
  Checkpoint second_checkpoint({{"v", &v}});
  CheckpointManager first(first_checkpoint, dir, 2);
  first.Save();
  {
    CheckpointManager second(second_checkpoint, dir, 2);
    EXPECT_EQ(second.latest_checkpoint(), dir + "/ckpt-1");
    EXPECT_THAT([&] { second.Save(); }, ::testing::ThrowsMessage<FailedPreconditionError>(HasSubstr(
                                            StrCat("Cannot save into ", dir,
                                                   ": another CheckpointManager of this process "
                                                   "(pid ",
                                                   ::getpid(), ") manages that directory"))));
  }
  first.Save();
  EXPECT_THAT(first.checkpoints(), ElementsAre(dir + "/ckpt-1", dir + "/ckpt-2"));
  EXPECT_TRUE(fs::exists(dir + "/ckpt-1.index"));
  EXPECT_TRUE(fs::exists(dir + "/ckpt-2.index"));
}

// The same between two processes, both ways; a SIGKILLed owner's claim ends
// with it.
TEST(CheckpointManagerTest, AManagerInAnotherProcessCannotSaveIntoAnOwnedDirectory) {
  const std::string dir = TempDir();
  Variable v(Tensor(1.0f), "v");
  Checkpoint checkpoint({{"v", &v}});
  {
    CheckpointManager parent(checkpoint, dir, 3);
    parent.Save();
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      Checkpoint own({{"v", &v}});
      CheckpointManager manager(own, dir, 3);
      try {
        manager.Save();
      } catch (const FailedPreconditionError& e) {
        const std::string expected =
            StrCat("Cannot save into ", dir, ": a CheckpointManager of another process (pid ",
                   ::getppid(), ") manages that directory");
        ::_exit(std::string(e.what()).find(expected) != std::string::npos ? 0 : 2);
      }
      ::_exit(1);  // saved: not refused
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "the child's manager was not refused with the expected message (status " << status
        << ")";
  }
  // The child owns it now; the parent is refused until the child dies.
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Checkpoint own({{"v", &v}});
    CheckpointManager manager(own, dir, 3);
    manager.Save();
    const char byte = 1;
    if (::write(ready[1], &byte, 1) != 1) ::_exit(1);
    ::pause();  // until SIGKILLed
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  CheckpointManager parent(checkpoint, dir, 3);
  EXPECT_THAT([&] { parent.Save(); },
              ::testing::ThrowsMessage<FailedPreconditionError>(HasSubstr(
                  StrCat("Cannot save into ", dir, ": a CheckpointManager of another process (pid ",
                         child, ") manages that directory"))));
  ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ::close(ready[0]);
  ::close(ready[1]);
  EXPECT_TRUE(parent.Save().has_value());
}

}  // namespace
}  // namespace eager
