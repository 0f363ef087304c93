// BundleReader on one thread and on two (large fixed-size tensors shared
// with saving's helper thread, bundle_reader.h): the same tensors and the
// same errors, for sizes around the 4 MiB threshold and the 1 MiB chunks,
// for corruption in any chunk, from several reading threads at once, and in
// the child of a fork (which has no helper thread); and eager::SetNumThreads
// choosing between one and two when BundleReaderOptions does not.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ops/threads.h"
#include "runtime/errors.h"
#include "runtime/internal/machine_cores.h"
#include "runtime/variable.h"
#include "saving/bundle_files.h"
#include "saving/bundle_reader.h"
#include "saving/bundle_writer.h"
#include "saving/internal/helper_thread.h"
#include "saving/saver.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

constexpr int64_t kMiB = 1 << 20;

std::vector<int32_t> Counting(int64_t n, int32_t salt) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<int32_t>(i * 7 + salt);
  return v;
}

// The message of the error Read(key) throws, or nullopt when it succeeds
// (then its values must equal `expected`).
std::optional<std::string> ReadError(const std::string& prefix, const std::string& key, int threads,
                                     const std::vector<int32_t>* expected) {
  try {
    BundleReader reader(prefix, BundleReaderOptions{.num_threads = threads});
    const Tensor t = reader.Read(key);
    if (expected) {
      EXPECT_EQ(t.ToVector<int32_t>(), *expected) << key << ", threads " << threads;
    }
    return std::nullopt;
  } catch (const DataLossError& e) {
    return std::string(e.what());
  }
}

// "t<i>" (not "t" + std::to_string(i): GCC 12 warns falsely on that).
std::string Key(size_t i) {
  std::string key = "t";
  key += std::to_string(i);
  return key;
}

void FlipByte(const std::string& path, int64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(offset);
  char c = 0;
  f.get(c);
  f.seekp(offset);
  f.put(static_cast<char>(c ^ 0x40));
}

TEST(BundleReadThreadsTest, EverySizeAroundTheThresholdAndChunksReadsTheSame) {
  const std::string prefix = testing::TempDir() + "/ckpt";
  // In bytes: below, at and above 4 MiB; whole chunks and a 4-byte tail.
  const std::vector<int64_t> sizes = {4 * kMiB - 4, 4 * kMiB,     4 * kMiB + 4,
                                      5 * kMiB - 4, 9 * kMiB + 4, 1000};
  {
    BundleWriter writer(prefix);
    for (size_t i = 0; i < sizes.size(); ++i) {
      writer.Add(Key(static_cast<size_t>(i)),
                 Tensor::FromVector<int32_t>(Counting(sizes[i] / 4, static_cast<int32_t>(i))));
    }
    writer.Finish();
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    const std::vector<int32_t> expected = Counting(sizes[i] / 4, static_cast<int32_t>(i));
    for (int threads : {0, 1, 2, 8}) {
      EXPECT_EQ(ReadError(prefix, Key(static_cast<size_t>(i)), threads, &expected), std::nullopt);
    }
  }
}

// A flipped byte in the first chunk, a middle one, the last (partial) one,
// or two chunks at once: DataLossError with the same message on any thread
// count.
TEST(BundleReadThreadsTest, CorruptionGivesTheSameErrorOnAnyThreadCount) {
  const int64_t bytes = 6 * kMiB + 12;
  const std::vector<int32_t> values = Counting(bytes / 4, 3);
  for (const std::vector<int64_t>& flips :
       std::vector<std::vector<int64_t>>{{0}, {3 * kMiB + 5}, {bytes - 1}, {10, bytes - 2}}) {
    const std::string prefix = testing::TempDir() + "/ckpt";
    {
      BundleWriter writer(prefix);
      writer.Add("v", Tensor::FromVector<int32_t>(values));
      writer.Finish();
    }
    const int64_t offset = BundleReader(prefix).GetEntry("v").offset;
    for (int64_t flip : flips) FlipByte(DataFilename(prefix, 0, 1), offset + flip);
    const std::optional<std::string> one = ReadError(prefix, "v", 1, nullptr);
    ASSERT_TRUE(one.has_value()) << "flip at " << flips[0];
    EXPECT_NE(one->find("Checksum does not match for key v"), std::string::npos) << *one;
    EXPECT_EQ(ReadError(prefix, "v", 2, nullptr), one);
    EXPECT_EQ(ReadError(prefix, "v", 0, nullptr), one);
  }
}

// With two threads allowed on a machine with two cores the helper does
// take part (else the two-thread tests above would test one thread twice).
TEST(BundleReadThreadsTest, TheHelperThreadTakesPartWhenTwoCoresAreThere) {
  if (internal::MachineCores() < 2) GTEST_SKIP() << "one core: the helper is never offered work";
  const std::string prefix = testing::TempDir() + "/ckpt";
  const std::vector<int32_t> values = Counting(9 * kMiB / 4, 5);
  {
    BundleWriter writer(prefix);
    writer.Add("v", Tensor::FromVector<int32_t>(values));
    writer.Finish();
  }
  const BundleReader reader(prefix, BundleReaderOptions{.num_threads = 2});
  const long before = internal::HelperThreadJobs();
  // On a loaded machine the helper may wake too late for some reads.
  for (int i = 0; i < 200 && internal::HelperThreadJobs() == before; ++i) {
    ASSERT_EQ(reader.Read("v").ToVector<int32_t>(), values);
  }
  EXPECT_GT(internal::HelperThreadJobs(), before);
  const long with_one = internal::HelperThreadJobs();
  const BundleReader alone(prefix, BundleReaderOptions{.num_threads = 1});
  ASSERT_EQ(alone.Read("v").ToVector<int32_t>(), values);
  EXPECT_EQ(internal::HelperThreadJobs(), with_one);  // one thread: never offered
}

// Only one caller at a time gets the helper; the others read alone.
TEST(BundleReadThreadsTest, SeveralThreadsReadingAtOnceGetCorrectTensors) {
  const std::string prefix = testing::TempDir() + "/ckpt";
  {
    BundleWriter writer(prefix);
    for (int i = 0; i < 4; ++i) {
      writer.Add(Key(static_cast<size_t>(i)),
                 Tensor::FromVector<int32_t>(Counting(5 * kMiB / 4, i)));
    }
    writer.Finish();
  }
  const BundleReader reader(prefix, BundleReaderOptions{.num_threads = 2});
  std::vector<std::thread> threads;
  threads.reserve(4);
  std::vector<int> mismatches(4, 0);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      const std::vector<int32_t> expected = Counting(5 * kMiB / 4, i);
      for (int round = 0; round < 5; ++round) {
        if (reader.Read(Key(static_cast<size_t>(i))).ToVector<int32_t>() != expected)
          ++mismatches[i];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

// The helper thread started in the parent does not exist in a forked
// child: the child must read alone, not wait for it.
TEST(BundleReadThreadsTest, ForkedChildReadsWithoutTheParentsHelper) {
  const std::string prefix = testing::TempDir() + "/ckpt";
  const std::vector<int32_t> values = Counting(5 * kMiB / 4, 9);
  {
    BundleWriter writer(prefix);
    writer.Add("v", Tensor::FromVector<int32_t>(values));
    writer.Finish();
  }
  ASSERT_EQ(ReadError(prefix, "v", 2, &values), std::nullopt);  // starts the helper
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(60);  // a hang fails the test instead of blocking the suite
    const bool ok =
        BundleReader(prefix, BundleReaderOptions{.num_threads = 2}).Read("v").ToVector<int32_t>() ==
        values;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

// Sets eager's process-wide thread limit for a scope, then puts it back.
class ScopedNumThreads {
 public:
  explicit ScopedNumThreads(int n) { SetNumThreads(n); }
  ~ScopedNumThreads() { SetNumThreads(saved_); }
  ScopedNumThreads(const ScopedNumThreads&) = delete;
  ScopedNumThreads& operator=(const ScopedNumThreads&) = delete;

 private:
  const int saved_ = GetNumThreads();
};

// The offers RunShared made to the helper during `restore` (one per large
// tensor read on two threads, none on one).
template <typename F>
long OffersDuring(F restore) {
  const long before = internal::HelperThreadOffers();
  restore();
  return internal::HelperThreadOffers() - before;
}

// A Saver restore reads with default BundleReaderOptions, so the number of
// threads is eager::SetNumThreads's (at most 2); an explicit
// BundleReaderOptions::num_threads wins over it either way.
TEST(BundleReadThreadsTest, SetNumThreadsGovernsARestoresReadingThreads) {
  const std::string dir = testing::TempDir() + "/saver";
  const int64_t n = 5 * kMiB / 4;
  const std::vector<int32_t> values = Counting(n, 11);
  std::string prefix;
  {
    Variable big(Tensor::FromVector<int32_t>(values), "big");
    prefix = Saver({&big}).Save(dir + "/model.ckpt");
  }
  Variable restored(DType::kInt32, Shape{n}, "restored");
  auto restore = [&] { Saver({{"big", &restored}}).Restore(prefix); };
  auto read_with = [&](int threads) {
    return [&prefix, threads] {
      (void)BundleReader(prefix, BundleReaderOptions{.num_threads = threads}).Read("big");
    };
  };
  {
    const ScopedNumThreads one(1);
    EXPECT_EQ(OffersDuring(restore), 0);
    EXPECT_EQ(restored.value().ToVector<int32_t>(), values);
    EXPECT_EQ(OffersDuring(read_with(2)), 1);  // explicit: two threads
  }
  for (int limit : {2, 8}) {
    const ScopedNumThreads threads(limit);
    EXPECT_EQ(OffersDuring(restore), 1) << "SetNumThreads(" << limit << ")";
    EXPECT_EQ(restored.value().ToVector<int32_t>(), values);
    EXPECT_EQ(OffersDuring(read_with(1)), 0);  // explicit: one thread
  }
  // Offered, the helper does read chunks (it may wake too late for some
  // restores on a loaded machine).
  if (internal::MachineCores() >= 2) {
    const ScopedNumThreads two(2);
    const long jobs = internal::HelperThreadJobs();
    for (int i = 0; i < 200 && internal::HelperThreadJobs() == jobs; ++i) restore();
    EXPECT_GT(internal::HelperThreadJobs(), jobs);
  }
}

TEST(BundleReadThreadsTest, RejectsANegativeThreadCount) {
  const std::string prefix = testing::TempDir() + "/ckpt";
  {
    BundleWriter writer(prefix);
    writer.Add("v", Tensor::FromVector<int32_t>({1, 2}));
    writer.Finish();
  }
  EXPECT_THROW(BundleReader(prefix, BundleReaderOptions{.num_threads = -1}), InvalidArgumentError);
}

}  // namespace
}  // namespace eager
