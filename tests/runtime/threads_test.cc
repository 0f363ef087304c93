// runtime/threads.h: the process-wide thread limit, which ops' pool and
// saving's reader both obey (tests/ops/threads_test.cc,
// tests/saving/bundle/bundle_read_threads_test.cc show them obeying it).

#include "runtime/threads.h"

#include <gtest/gtest.h>

#include <thread>

#include "runtime/errors.h"
#include "runtime/machine_cores.h"

namespace eager {
namespace {

// Restores the limit a test changed.
class ThreadsTest : public ::testing::Test {
 protected:
  void TearDown() override { SetNumThreads(saved_); }
  const int saved_ = GetNumThreads();
};

TEST_F(ThreadsTest, DefaultIsTheCoresThisProcessMayRunOn) {
  EXPECT_EQ(saved_, internal::MachineCores());
  EXPECT_GE(saved_, 1);
}

TEST_F(ThreadsTest, SetNumThreadsChangesTheLimitForEveryThread) {
  SetNumThreads(3);
  EXPECT_EQ(GetNumThreads(), 3);
  int seen = 0;
  std::thread([&] { seen = GetNumThreads(); }).join();
  EXPECT_EQ(seen, 3);
  SetNumThreads(1);
  EXPECT_EQ(GetNumThreads(), 1);
}

TEST_F(ThreadsTest, NonPositiveCountIsRejectedAndKeepsTheLimit) {
  SetNumThreads(2);
  EXPECT_THROW(SetNumThreads(0), InvalidArgumentError);
  EXPECT_THROW(SetNumThreads(-2), InvalidArgumentError);
  EXPECT_EQ(GetNumThreads(), 2);
}

}  // namespace
}  // namespace eager
