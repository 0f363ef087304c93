// CheckpointOptions{.async = true}: values captured at Save(), files written
// on a background thread, errors surfacing on the next call.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <thread>

#include "autodiff/adam.h"
#include "runtime/buffer_cache.h"
#include "runtime/errors.h"
#include "runtime/tensor_access.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/bundle/directory_lock.h"
#include "saving/bundle/posix_file.h"
#include "saving/checkpoint/checkpoint.h"
#include "saving/checkpoint/checkpoint_manager.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
using ::eager::testing::ExpectVerifies;
using ::eager::testing::OtherHolders;
using ::eager::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr CheckpointOptions kAsync{.async = true};

// Holds every file step of other threads until released, so a test can act
// while a background save is certainly still running (before its first file
// is created).
std::atomic<bool> hold_saves{false};
std::atomic<int> held_steps{0};
std::thread::id test_thread;
int HoldingHook(std::string_view, const std::string&) {
  if (std::this_thread::get_id() == test_thread) return 0;
  held_steps.fetch_add(1);
  while (hold_saves.load()) std::this_thread::yield();
  return 0;
}

class HeldSaves {
 public:
  HeldSaves() {
    test_thread = std::this_thread::get_id();
    held_steps = 0;
    hold_saves = true;
    internal::SetFileStepHook(&HoldingHook);
  }
  // Waits until the background thread is blocked in its first file step.
  void WaitUntilHeld() const {
    while (held_steps.load() == 0) std::this_thread::yield();
  }
  void Release() { hold_saves = false; }
  ~HeldSaves() {
    hold_saves = false;
    internal::SetFileStepHook(nullptr);
  }
};

std::vector<float> Values(const Tensor& t) {
  const auto span = t.data<float>();
  return {span.begin(), span.end()};
}

TEST(AsyncSaveTest, ValuesChangedAfterSaveAreNotInTheFile) {
  const std::string dir = TempDir();
  Variable v(Tensor::FromVector<float>({1, 2, 3, 4}), "v");
  Variable w(Tensor::FromVector<float>({10, 20}), "w");
  // Named apart: other tests of this binary expect the first "Adam".
  AdamOptions options;
  options.learning_rate = 0.5;
  options.name = "AsyncSaveAdam";
  Adam optimizer(options);
  Checkpoint checkpoint({{"v", &v}, {"w", &w}, {"optimizer", &optimizer}});
  optimizer.ApplyGradients({{Tensor::FromVector<float>({1, 1, 1, 1}), &v}});  // slots exist
  const std::vector<float> v_saved = Values(v.value());
  const std::vector<float> m_saved = Values(optimizer.GetSlot(v, "m")->value());
  std::string path;
  {
    HeldSaves held;
    path = checkpoint.Save(dir + "/ckpt", kAsync);
    held.WaitUntilHeld();  // nothing written yet
    // Save() has let go of the values, keeping its own copies
    // (saving/checkpoint/internal/own_copies.h), so Adam updates v, m and v-hat in place
    // (autodiff/internal/writable_value.h): the file must get the copies'
    // values, not these buffers'.
    const void* v_buffer = internal::RawData(v.value());
    const void* m_buffer = internal::RawData(optimizer.GetSlot(v, "m")->value());
    optimizer.ApplyGradients({{Tensor::FromVector<float>({1, -1, 1, -1}), &v}});
    w.Assign(Tensor::FromVector<float>({-1, -2}));
    ASSERT_NE(Values(v.value()), v_saved);
    EXPECT_EQ(internal::RawData(v.value()), v_buffer);
    EXPECT_EQ(internal::RawData(optimizer.GetSlot(v, "m")->value()), m_buffer);
    held.Release();
    checkpoint.Sync();
  }
  EXPECT_EQ(path, dir + "/ckpt-1");
  const BundleReader reader(path);
  EXPECT_EQ(Values(reader.Read("v/.ATTRIBUTES/VARIABLE_VALUE")), v_saved);
  EXPECT_THAT(Values(reader.Read("w/.ATTRIBUTES/VARIABLE_VALUE")), ElementsAre(10.0f, 20.0f));
  EXPECT_EQ(Values(reader.Read("v/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE")),
            m_saved);
  EXPECT_EQ(reader.Read("optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE").scalar<int64_t>(), 1);
  EXPECT_EQ(reader.Read("save_counter/.ATTRIBUTES/VARIABLE_VALUE").scalar<int64_t>(), 1);
  EXPECT_EQ(ReadCheckpointState(dir)->model_checkpoint_path, "ckpt-1");
  ExpectVerifies(path);

  // And a restore gets the values of the save, not the later ones.
  Variable v2(Tensor::FromVector<float>({0, 0, 0, 0}), "v");
  Variable w2(Tensor::FromVector<float>({0, 0}), "w");
  Checkpoint restored({{"v", &v2}, {"w", &w2}});
  restored.Restore(path).ExpectPartial();
  EXPECT_EQ(Values(v2.value()), v_saved);
  EXPECT_THAT(Values(w2.value()), ElementsAre(10.0f, 20.0f));
}

// The snapshot is taken by the calling thread before Write() returns (the
// writer, held before its first file step, has not run), and its copies come
// from and go back to that thread's buffer cache: the second save's copies
// need no fresh memory.
TEST(AsyncSaveTest, WriteReturnsWithTheValuesCopiedOnTheCallingThread) {
  const std::string dir = TempDir();
  Variable big(Tensor::FromVector<float>(std::vector<float>(100000, 1.5f)), "copied_big");
  Variable small(Tensor::FromVector<float>({1, 2}), "copied_small");
  Checkpoint checkpoint({{"copied_big", &big}, {"copied_small", &small}});
  internal::ReleaseCachedBuffers();
  {
    HeldSaves held;
    checkpoint.Write(dir + "/first", kAsync);
    EXPECT_EQ(OtherHolders(big), 0);
    EXPECT_EQ(OtherHolders(small), 0);
    held.WaitUntilHeld();
    held.Release();
    checkpoint.Sync();
  }
  // Freed here by Sync(), not on the writer.
  EXPECT_GE(internal::GetBufferCacheStats().cached_bytes, internal::BufferSizeClass(400000));
  big.Assign(Tensor::FromVector<float>(std::vector<float>(100000, 2.5f)));
  const internal::BufferCacheStats before = internal::GetBufferCacheStats();
  checkpoint.Write(dir + "/second", kAsync);
  const internal::BufferCacheStats after = internal::GetBufferCacheStats();
  EXPECT_EQ(OtherHolders(big), 0);
  EXPECT_EQ(after.misses, before.misses);
  EXPECT_GE(after.hits - before.hits, 2);
  checkpoint.Sync();
  EXPECT_EQ(
      BundleReader(dir + "/first").Read("copied_big/.ATTRIBUTES/VARIABLE_VALUE").ToVector<float>(),
      std::vector<float>(100000, 1.5f));
  EXPECT_EQ(
      BundleReader(dir + "/second").Read("copied_big/.ATTRIBUTES/VARIABLE_VALUE").ToVector<float>(),
      std::vector<float>(100000, 2.5f));
  ExpectVerifies(dir + "/second");
}

TEST(AsyncSaveTest, SaveReturnsBeforeTheFilesExist) {
  const std::string dir = TempDir();
  Variable v(Tensor(1.0f), "v");
  Checkpoint checkpoint({{"v", &v}});
  HeldSaves held;
  const std::string path = checkpoint.Save(dir + "/ckpt", kAsync);
  held.WaitUntilHeld();
  EXPECT_FALSE(fs::exists(path + ".index"));
  EXPECT_FALSE(fs::exists(dir + "/checkpoint"));
  held.Release();
  checkpoint.Sync();
  EXPECT_TRUE(fs::exists(path + ".index"));
  EXPECT_EQ(ReadCheckpointState(dir)->model_checkpoint_path, "ckpt-1");
}

// Held at the creation of the index, when every tensor has been written:
// the save has let go of the values their variables still hold (so the
// optimizer's next step updates them in place), and the writer runs at
// nice 19.
std::atomic<bool> hold_at_index{false};
std::atomic<bool> at_index{false};
std::atomic<int> writer_nice{-100};
int HoldAtIndexHook(std::string_view step, const std::string& path) {
  if (step != "create" || path.find(".index.tempstate") == std::string::npos) return 0;
  errno = 0;
  writer_nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  at_index = true;
  while (hold_at_index.load()) std::this_thread::yield();
  return 0;
}

TEST(AsyncSaveTest, WrittenValuesAreReleasedBeforeTheSaveEndsAndTheWriterIsNice) {
  const std::string dir = TempDir();
  Variable big(Tensor::FromVector<float>(std::vector<float>(100000, 1.5f)), "big");
  Variable small(Tensor::FromVector<float>({1, 2}), "small");
  Checkpoint checkpoint({{"big", &big}, {"small", &small}});
  hold_at_index = true;
  at_index = false;
  internal::SetFileStepHook(&HoldAtIndexHook);
  const std::string path = checkpoint.Save(dir + "/ckpt", kAsync);
  while (!at_index.load()) std::this_thread::yield();
  // The variable and the tensor value() returns: nobody else.
  EXPECT_EQ(internal::BufferOf(big.value()).use_count(), 2);
  EXPECT_EQ(internal::BufferOf(small.value()).use_count(), 2);
  EXPECT_EQ(writer_nice.load(), 19);
  hold_at_index = false;
  checkpoint.Sync();
  internal::SetFileStepHook(nullptr);
  EXPECT_EQ(BundleReader(path).Read("big/.ATTRIBUTES/VARIABLE_VALUE").ToVector<float>(),
            std::vector<float>(100000, 1.5f));
  ExpectVerifies(path);
}

TEST(AsyncSaveTest, NextSaveAndDestructorWaitForThePendingOne) {
  const std::string dir = TempDir();
  Variable v(Tensor::Zeros(Shape{1 << 18}), "v");  // 1 MiB, so a save takes a while
  {
    Checkpoint checkpoint({{"v", &v}});
    for (int i = 1; i <= 3; ++i) {
      v.Assign(Tensor::FromVector<float>(std::vector<float>(1 << 18, static_cast<float>(i))));
      EXPECT_EQ(checkpoint.Save(dir + "/ckpt", kAsync), dir + "/ckpt-" + std::to_string(i));
    }
    checkpoint.Write(dir + "/written", kAsync);
  }  // the destructor waits for the last one
  for (int i = 1; i <= 3; ++i) {
    const std::string path = dir + "/ckpt-" + std::to_string(i);
    const Tensor t = BundleReader(path).Read("v/.ATTRIBUTES/VARIABLE_VALUE");
    EXPECT_EQ(t.data<float>()[12345], static_cast<float>(i)) << path;
  }
  ExpectVerifies(dir + "/ckpt-3");
  EXPECT_EQ(BundleReader(dir + "/written").Read("v/.ATTRIBUTES/VARIABLE_VALUE").data<float>()[0],
            3.0f);
  EXPECT_EQ(ReadCheckpointState(dir)->model_checkpoint_path, "ckpt-3");
}

TEST(AsyncSaveTest, ErrorSurfacesOnSyncOnceWithTheSaveNamed) {
  const std::string dir = TempDir();
  Variable v(Tensor(1.0f), "v");
  Checkpoint checkpoint({{"v", &v}});
  std::string path;
  {
    // Another thread holding the directory's lock refuses the background
    // save (FailedPreconditionError), after Save() has returned.
    std::atomic<bool> locked{false}, release{false};
    std::jthread holder([&] {
      internal::DirectoryLock lock(dir);
      locked = true;
      while (!release) std::this_thread::yield();
    });
    while (!locked) std::this_thread::yield();
    path = checkpoint.Save(dir + "/ckpt", kAsync);
    // Wait for the save to fail, still under the lock.
    try {
      checkpoint.Sync();
      ADD_FAILURE() << "the background save should have failed";
    } catch (const FailedPreconditionError& e) {
      EXPECT_THAT(e.what(), StartsWith("Asynchronous save of " + path + " failed: "));
      EXPECT_THAT(e.what(), HasSubstr(dir));
    }
    release = true;
  }
  EXPECT_NO_THROW(checkpoint.Sync());  // thrown once
  EXPECT_FALSE(fs::exists(path + ".index"));
  EXPECT_FALSE(fs::exists(dir + "/checkpoint"));
  // The next save works.
  EXPECT_EQ(checkpoint.Save(dir + "/ckpt", kAsync), dir + "/ckpt-2");
  checkpoint.Sync();
  EXPECT_EQ(ReadCheckpointState(dir)->model_checkpoint_path, "ckpt-2");
}

TEST(AsyncSaveTest, ErrorSurfacesOnTheNextSaveOrRestore) {
  const std::string dir = TempDir();
  testing::WriteFile(dir + "/file", "not a directory");
  Variable v(Tensor(1.0f), "v");
  Checkpoint checkpoint({{"v", &v}});
  checkpoint.Write(dir + "/file/sub/ckpt", kAsync);  // its directory cannot be created
  try {
    checkpoint.Save(dir + "/ckpt");
    ADD_FAILURE() << "Save should throw the background error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), StartsWith("Asynchronous save of " + dir + "/file/sub/ckpt failed: "));
  }
  EXPECT_FALSE(fs::exists(dir + "/ckpt-1.index"));  // the failed call saved nothing
  checkpoint.Write(dir + "/file/sub/ckpt", kAsync);
  try {
    checkpoint.Restore(dir + "/ckpt-1");
    ADD_FAILURE() << "Restore should throw the background error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), StartsWith("Asynchronous save of " + dir + "/file/sub/ckpt failed: "));
  }
  EXPECT_EQ(checkpoint.Save(dir + "/ckpt"), dir + "/ckpt-1");
}

TEST(AsyncSaveTest, ManagerSavesInTheBackgroundWithRetention) {
  const std::string dir = TempDir();
  Variable v(Tensor(0.0f), "v");
  Checkpoint checkpoint({{"v", &v}});
  {
    CheckpointManager manager(checkpoint, dir, 2);
    for (int i = 1; i <= 4; ++i) {
      v.Assign(Tensor(static_cast<float>(i)));
      EXPECT_EQ(manager.Save(std::nullopt, true, kAsync), dir + "/ckpt-" + std::to_string(i));
      v.Assign(Tensor(-1.0f));  // after the capture: never saved
    }
    EXPECT_THAT(manager.checkpoints(), ElementsAre(dir + "/ckpt-3", dir + "/ckpt-4"));
    EXPECT_EQ(manager.latest_checkpoint(), dir + "/ckpt-4");
    EXPECT_EQ(manager.Save(std::nullopt, true, kAsync), dir + "/ckpt-5");
  }  // the manager's destructor waits for its save
  EXPECT_FALSE(fs::exists(dir + "/ckpt-3.index"));
  EXPECT_THAT(ReadCheckpointState(dir)->all_model_checkpoint_paths,
              ElementsAre("ckpt-4", "ckpt-5"));
  EXPECT_EQ(BundleReader(dir + "/ckpt-4").Read("v/.ATTRIBUTES/VARIABLE_VALUE").scalar<float>(),
            4.0f);
  EXPECT_EQ(BundleReader(dir + "/ckpt-5").Read("v/.ATTRIBUTES/VARIABLE_VALUE").scalar<float>(),
            -1.0f);
  ExpectVerifies(dir + "/ckpt-4");
  ExpectVerifies(dir + "/ckpt-5");
}

}  // namespace
}  // namespace eager
