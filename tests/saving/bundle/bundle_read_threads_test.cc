// BundleReader on one thread and on two (large fixed-size tensors shared
// with saving's helper thread, bundle_reader.h): the same tensors and the
// same errors, for sizes around the 4 MiB threshold and the 1 MiB chunks,
// for corruption in any chunk, from several reading threads at once, and in
// the child of a fork (which has no helper thread); for a data file that
// shrinks between the index check and the read; eager::SetNumThreads
// choosing between one and two when BundleReaderOptions does not; and, with
// chunk and threshold sizes of a few bytes (saving/bundle/internal/read_chunking.h), on
// every size and cut of small tensors.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/errors.h"
#include "runtime/machine_cores.h"
#include "runtime/threads.h"
#include "runtime/variable.h"
#include "saving/bundle/bundle_files.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/bundle/internal/helper_thread.h"
#include "saving/bundle/internal/read_chunking.h"
#include "saving/saver/saver.h"
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

// The offers RunShared made to the helper during `f` (one per large tensor
// read on two threads, none on one).
template <typename F>
long OffersDuring(F f) {
  const long before = internal::HelperThreadOffers();
  f();
  return internal::HelperThreadOffers() - before;
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

// A Saver restore reads with default BundleReaderOptions, so the number of
// threads is eager::SetNumThreads's (at most 2); an explicit
// BundleReaderOptions::num_threads wins over it either way.
TEST(BundleReadThreadsTest, SetNumThreadsGovernsARestoresReadingThreads) {
  const std::string dir = testing::TempDir() + "/saver";
  const int64_t n = 5 * kMiB / 4;
  const std::vector<int32_t> values = Counting(n, 11);
  std::string prefix;
  std::string key;  // "big", or "big_1" when an earlier test in this process took "big"
  {
    Variable big(Tensor::FromVector<int32_t>(values), "big");
    key = std::string(big.shared_name());
    prefix = Saver({&big}).Save(dir + "/model.ckpt");
  }
  Variable restored(DType::kInt32, Shape{n}, "restored");
  auto restore = [&] { Saver({{key, &restored}}).Restore(prefix); };
  auto read_with = [&](int threads) {
    return [&prefix, &key, threads] {
      (void)BundleReader(prefix, BundleReaderOptions{.num_threads = threads}).Read(key);
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

// Writes "small" (one element) and "v" (`values`) to a fresh checkpoint;
// returns v's offset in the data file.
int64_t WriteSmallAndV(const std::string& prefix, const std::vector<int32_t>& values) {
  {
    BundleWriter writer(prefix);
    writer.Add("small", Tensor::FromVector<int32_t>({42}));
    writer.Add("v", Tensor::FromVector<int32_t>(values));
    writer.Finish();
  }
  return BundleReader(prefix).GetEntry("v").offset;
}

// Read("v")'s DataLossError message when the data file is cut to `length`
// bytes after the reader opened it (Read("small") opens it and checks its
// size), as when the file shrinks between the index check and the read.
// Expects `offers` offers to the helper thread; puts the file back after.
std::string ShrunkFileError(const std::string& prefix, int threads, uint64_t length, long offers) {
  const std::string data = DataFilename(prefix, 0, 1);
  std::string saved(std::filesystem::file_size(data), '\0');
  std::ifstream(data, std::ios::binary)
      .read(saved.data(), static_cast<std::streamsize>(saved.size()));
  std::string message = "(no error)";
  {
    const BundleReader reader(prefix, BundleReaderOptions{.num_threads = threads});
    EXPECT_EQ(reader.Read("small").ToVector<int32_t>(), std::vector<int32_t>{42});
    std::filesystem::resize_file(data, length);
    EXPECT_EQ(OffersDuring([&] {
                try {
                  (void)reader.Read("v");
                } catch (const DataLossError& e) {
                  message = e.what();
                }
              }),
              offers)
        << "threads " << threads << ", file cut to " << length << " bytes";
  }
  std::ofstream(data, std::ios::binary | std::ios::trunc)
      .write(saved.data(), static_cast<std::streamsize>(saved.size()));
  return message;
}

// The message a shrunk file gives when v's bytes (from `offset`, `bytes` of
// them, read in chunks of `chunk`) end after `cut` of them.
std::string ShortReadMessage(const std::string& data, int64_t offset, int64_t bytes, int64_t cut,
                             int64_t chunk) {
  const int64_t start = cut / chunk * chunk;  // the first failing chunk's
  return StrCat("Short read of key v from ", data, ": expected ", std::min(chunk, bytes - start),
                " bytes at offset ", offset + start, " (the key's bytes are [", offset, ", ",
                offset + bytes, ")), got ", cut - start, "; the file shrank while reading?");
}

// A data file that shrinks under an open reader, cut in the middle of a
// chunk, at a chunk boundary, in the last (partial) chunk, or before the
// tensor: the same DataLossError on 0, 1, 2 and 8 threads, naming the key,
// the file and what the read expected, though two threads read the chunks
// in any order.
TEST(BundleReadThreadsTest, AFileThatShrankGivesTheSameErrorOnAnyThreadCount) {
  const ScopedNumThreads two(2);  // so that num_threads 0 means 2
  const std::string prefix = testing::TempDir() + "/ckpt";
  const int64_t bytes = 6 * kMiB + 12;
  const int64_t offset = WriteSmallAndV(prefix, Counting(bytes / 4, 4));
  const std::string data = DataFilename(prefix, 0, 1);
  for (const int64_t cut : {5 * kMiB / 2, 3 * kMiB, bytes - 1, int64_t{0}}) {
    const auto length = static_cast<uint64_t>(offset + cut);
    const std::string one = ShrunkFileError(prefix, 1, length, 0);
    EXPECT_EQ(one, ShortReadMessage(data, offset, bytes, cut, kMiB));
    for (int threads : {0, 2, 8}) {
      EXPECT_EQ(ShrunkFileError(prefix, threads, length, 1), one) << "threads " << threads;
    }
  }
}

// A data file shorter than the index says from the start: refused before
// any read, whatever the thread count.
TEST(BundleReadThreadsTest, ADataFileShorterThanTheIndexSaysIsRefusedOnAnyThreadCount) {
  const std::string prefix = testing::TempDir() + "/ckpt";
  const int64_t bytes = 5 * kMiB;
  const int64_t offset = WriteSmallAndV(prefix, Counting(bytes / 4, 6));
  const std::string data = DataFilename(prefix, 0, 1);
  std::filesystem::resize_file(data, static_cast<uint64_t>(offset + 3 * kMiB));
  for (int threads : {0, 1, 2, 8}) {
    EXPECT_EQ(ReadError(prefix, "v", threads, nullptr),
              StrCat("Key v needs bytes [", offset, ", ", offset + bytes, ") of ", data,
                     ", which has only ", offset + 3 * kMiB, " bytes (truncated?)"))
        << "threads " << threads;
  }
}

// Chunks of 16 bytes, two threads from 64 bytes on: the shared path on
// tensors of a few bytes, so every size, every corrupted chunk and every
// cut of the file can be tried.
constexpr internal::ReadChunking kTinyChunks{.chunk_bytes = 16, .split_min_bytes = 64};

TEST(BundleReadThreadsTest, TinyChunksReadEverySizeTheSameOnOneAndTwoThreads) {
  const internal::ScopedReadChunking tiny(kTinyChunks);
  const std::string prefix = testing::TempDir() + "/ckpt";
  const size_t count = 80;  // 0 to 316 bytes: 0 to 20 chunks
  {
    BundleWriter writer(prefix);
    for (size_t i = 0; i < count; ++i) {
      writer.Add(Key(i), Tensor::FromVector<int32_t>(Counting(static_cast<int64_t>(i), 1)));
    }
    writer.Finish();
  }
  const BundleReader one(prefix, BundleReaderOptions{.num_threads = 1});
  const BundleReader two(prefix, BundleReaderOptions{.num_threads = 2});
  for (size_t i = 0; i < count; ++i) {
    const std::vector<int32_t> expected = Counting(static_cast<int64_t>(i), 1);
    EXPECT_EQ(OffersDuring([&] { EXPECT_EQ(one.Read(Key(i)).ToVector<int32_t>(), expected); }), 0);
    EXPECT_EQ(OffersDuring([&] { EXPECT_EQ(two.Read(Key(i)).ToVector<int32_t>(), expected); }),
              4 * i >= 64 ? 1 : 0)
        << i << " elements";
  }
}

// A flipped byte in each chunk in turn, and a file cut at every byte of the
// tensor: the same DataLossError on one thread and on two.
TEST(BundleReadThreadsTest, TinyChunksGiveTheSameErrorsOnOneAndTwoThreads) {
  const internal::ScopedReadChunking tiny(kTinyChunks);
  const std::string prefix = testing::TempDir() + "/ckpt";
  const int64_t bytes = 200;  // 12.5 chunks
  const std::vector<int32_t> values = Counting(bytes / 4, 8);
  const int64_t offset = WriteSmallAndV(prefix, values);
  const std::string data = DataFilename(prefix, 0, 1);
  for (int64_t flip = 3; flip < bytes; flip += 16) {
    FlipByte(data, offset + flip);
    const std::optional<std::string> one = ReadError(prefix, "v", 1, nullptr);
    ASSERT_TRUE(one.has_value()) << "flip at " << flip;
    EXPECT_NE(one->find("Checksum does not match for key v"), std::string::npos) << *one;
    EXPECT_EQ(ReadError(prefix, "v", 2, nullptr), one) << "flip at " << flip;
    FlipByte(data, offset + flip);  // back
  }
  ASSERT_EQ(ReadError(prefix, "v", 2, &values), std::nullopt);
  for (int64_t cut = 0; cut < bytes; ++cut) {
    const auto length = static_cast<uint64_t>(offset + cut);
    const std::string one = ShrunkFileError(prefix, 1, length, 0);
    EXPECT_EQ(one, ShortReadMessage(data, offset, bytes, cut, 16));
    EXPECT_EQ(ShrunkFileError(prefix, 2, length, 1), one);
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
