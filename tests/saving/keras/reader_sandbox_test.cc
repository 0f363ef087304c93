// The libhdf5 reading child's confinement (saving/keras/internal/
// reader_sandbox.h): after ConfineToReading, a process still reads its open
// files, allocates and writes its pipe, and cannot open a file, write any
// other descriptor or start a program.

#include "saving/keras/internal/reader_sandbox.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "runtime/sanitizers.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

TEST(ReaderSandbox, AConfinedChildReadsButCannotOpenOrWriteElsewhere) {
  if (kSanitizerShadowMemory) GTEST_SKIP() << "the reader is not confined under sanitizers";
  const std::string dir = testing::TempDir();
  testing::WriteFile(dir + "/data", "0123456789");
  const int data = ::open((dir + "/data").c_str(), O_RDONLY);
  const int other = ::open((dir + "/other").c_str(), O_WRONLY | O_CREAT, 0600);
  ASSERT_GE(data, 0);
  ASSERT_GE(other, 0);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    // One byte per check: 'y' as expected, 'n' not.
    char result[6] = {'n', 'n', 'n', 'n', 'n', 'n'};
    result[0] = keras_internal::ConfineToReading(fds[1]) ? 'y' : 'n';
    char buf[4] = {};
    result[1] = ::pread(data, buf, 4, 3) == 4 && buf[0] == '3' ? 'y' : 'n';
    void* big = std::malloc(64 << 20);  // glibc mmaps it
    result[2] = big != nullptr ? 'y' : 'n';
    std::free(big);
    result[3] = ::open((dir + "/data").c_str(), O_RDONLY) < 0 && errno == EPERM ? 'y' : 'n';
    result[4] = ::write(other, "x", 1) < 0 && errno == EPERM ? 'y' : 'n';
    char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
    result[5] = ::execv("/bin/true", argv) < 0 && errno == EPERM ? 'y' : 'n';
    const bool sent = ::write(fds[1], result, sizeof result) == sizeof result;
    ::_exit(sent ? 0 : 3);
  }
  ::close(fds[1]);
  char result[6] = {};
  const ssize_t n = ::read(fds[0], result, sizeof result);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(fds[0]);
  ::close(data);
  ::close(other);
  ASSERT_EQ(n, 6);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(result[0], 'y') << "seccomp filter not installed";
  EXPECT_EQ(result[1], 'y') << "pread of an open file";
  EXPECT_EQ(result[2], 'y') << "malloc";
  EXPECT_EQ(result[3], 'y') << "open must fail with EPERM";
  EXPECT_EQ(result[4], 'y') << "write to another descriptor must fail with EPERM";
  EXPECT_EQ(result[5], 'y') << "execv must fail with EPERM";
  EXPECT_EQ(testing::ReadFile(dir + "/other"), "");
}

}  // namespace
}  // namespace eager
