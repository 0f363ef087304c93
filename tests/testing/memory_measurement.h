#pragma once

// Measuring the memory a piece of work takes, for the tests that bound it.
//
// The peak, where nothing else interferes: ChildPeakGrowthKb runs it in a forked child and returns
// how far the child's peak resident set (getrusage's ru_maxrss) rose above its resident set at the
// start. A fresh child's peak is its own, so memory the parent freed earlier (resident, reusable by
// malloc) neither hides nor inflates the growth the way an in-process measurement would; the
// parent's pages, shared copy-on-write, count only once touched.
//
//   const long kb = eager::testing::ChildPeakGrowthKb([&] {
//     Graph graph;
//     ImportIntoGraph(ReadMetaGraph(path), graph);
//     return graph.num_nodes() == expected;   // false: the work failed
//   });
//   ASSERT_GE(kb, 0) << "the import failed";
//
// The child runs under an alarm (a hung child is killed and counts as a
// failure) and leaves with _exit, skipping the parent's atexit handlers and
// gtest's. Linux only (/proc/self/statm).
//
// What is allocated now, in-process and exact to the byte: HeapInUseBytes
// (glibc's mallinfo2), for a structure's bytes per element.
//
// Under AddressSanitizer neither is eager's memory (redzones around every
// block, a quarantine holding freed ones back, an allocator that keeps its
// own books): memory tests run every step and check every result there, and
// check their bounds only where kMemoryIsMeasurable.

#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <exception>
#include <fstream>
#include <functional>
#include <type_traits>

#include "runtime/sanitizers.h"

namespace eager::testing {

inline constexpr bool kMemoryIsMeasurable = !kAddressSanitizer;

// The bytes glibc's malloc has handed out and not yet taken back: small
// blocks and mmapped large ones.
inline int64_t HeapInUseBytes() {
  const struct mallinfo2 info = mallinfo2();
  return static_cast<int64_t>(info.uordblks + info.hblkhd);
}

// This process's resident set now, in KB.
inline long ResidentKb() {
  long pages = 0, resident = 0;
  std::ifstream("/proc/self/statm") >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// The growth of a forked child's peak RSS while it runs `work`, in KB; -1
// when `work` returns false, throws, or the child dies or outlives
// `alarm_seconds`. `work` returns bool or void (void: success unless it
// throws).
template <typename Work>
long ChildPeakGrowthKb(Work&& work, unsigned alarm_seconds = 120) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    close(fds[0]);
    alarm(alarm_seconds);
    const long start = ResidentKb();
    bool ok = true;
    try {
      if constexpr (std::is_same_v<std::invoke_result_t<Work>, void>) {
        work();
      } else {
        ok = static_cast<bool>(work());
      }
    } catch (const std::exception&) {
      ok = false;
    }
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const long growth = ok ? usage.ru_maxrss - start : -1;
    (void)!write(fds[1], &growth, sizeof(growth));
    _exit(ok ? 0 : 2);
  }
  close(fds[1]);
  long growth = -1;
  if (read(fds[0], &growth, sizeof(growth)) != sizeof(growth)) growth = -1;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? growth : -1;
}

}  // namespace eager::testing
