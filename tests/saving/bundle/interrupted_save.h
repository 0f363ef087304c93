#pragma once

// What the crash and I/O-error tests (kill_test.cc, io_error_test.cc) share:
// the old and new contents of a bundle they overwrite, and the trap, a
// file-step hook (internal::SetFileStepHook, saving/bundle/posix_file.h)
// that counts a save's file-changing system calls and, at number `at`, fails
// that call with an errno or SIGKILLs the process. The hook is a plain
// function, so its state is this one global.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "runtime/tensor.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/bundle/directory_lock.h"
#include "saving/bundle/posix_file.h"
#include "tests/saving/saving_test_util.h"

namespace eager::testing {

struct FileStepTrap {
  int at = 0;                 // the step to act at, counted from 1
  int error = 0;              // the errno it fails with; 0: SIGKILL instead
  bool count_unlinks = true;  // false: unlinks (a failed save's best-effort
                              // cleanup) pass uncounted
  // Counted so far. A sharded save's shard threads step at once, so every
  // step gets its own number, though which call is the Nth varies by run.
  std::atomic<int> steps{0};
  std::string sprung_step;  // the step acted at and its file, "" until then
  std::string sprung_path;
};
inline FileStepTrap g_file_step_trap;

inline int FileStepTrapHook(std::string_view step, const std::string& path) {
  FileStepTrap& trap = g_file_step_trap;
  if (!trap.count_unlinks && step == "unlink") return 0;
  if (trap.steps.fetch_add(1) + 1 != trap.at) return 0;
  trap.sprung_step = step;
  trap.sprung_path = path;
  if (trap.error == 0) raise(SIGKILL);
  return trap.error;
}

// Sets the trap at step `at` (counted from 1) and installs its hook: the
// step fails with `error`, or with 0 the process is SIGKILLed there.
inline void SetFileStepTrap(int at, int error = 0, bool count_unlinks = true) {
  FileStepTrap& trap = g_file_step_trap;
  trap.at = at;
  trap.error = error;
  trap.count_unlinks = count_unlinks;
  trap.steps = 0;
  trap.sprung_step.clear();
  trap.sprung_path.clear();
  internal::SetFileStepHook(FileStepTrapHook);
}

inline void RemoveFileStepTrap() { internal::SetFileStepHook(nullptr); }

// A bundle's float tensors by key: the content a save replaces, the content
// it writes; after any failure the prefix must read as one of them.
using FloatTensors = std::map<std::string, std::vector<float>>;
inline const FloatTensors kOld = {{"a", {1, 2, 3}}, {"b", {4}}};
inline const FloatTensors kNew = {{"a", {5, 6, 7}}, {"c", {8, 9}}};

inline void WriteBundle(const std::string& prefix, const FloatTensors& tensors) {
  BundleWriter writer(prefix);
  for (const auto& [key, values] : tensors) {
    writer.Add(key, Tensor::FromVector<float>(values, Shape{static_cast<int64_t>(values.size())}));
  }
  writer.Finish();
}

// The temporary files in `dir` (what an interrupted save may leave).
inline std::vector<std::string> TemporaryFiles(const std::string& dir) {
  std::vector<std::string> found;
  for (const std::string& name : ListDir(dir)) {
    if (internal::IsTemporaryFileName(name)) found.push_back(name);
  }
  return found;
}

// Runs `save` in a child killed before its kill_at-th file step. Returns
// true if the child was killed, false if the save completed first.
inline bool RunKilledAt(int kill_at, const std::function<void()>& save) {
  const pid_t pid = fork();
  EXPECT_GE(pid, 0);
  if (pid == 0) {
    SetFileStepTrap(kill_at);  // SIGKILL there
    try {
      save();
    } catch (const std::exception& e) {
      fprintf(stderr, "save failed in the child: %s\n", e.what());
      _exit(2);
    }
    _exit(0);
  }
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  if (WIFSIGNALED(status)) {
    EXPECT_EQ(WTERMSIG(status), SIGKILL);
    return true;
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  return false;
}

// A child that saves in a loop, killed after a random delay.
inline void RunKilledAfter(std::chrono::microseconds delay, const std::function<void()>& save) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      for (;;) save();
    } catch (...) {
      _exit(2);
    }
  }
  std::this_thread::sleep_for(delay);
  kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status)) << "the saving child exited on its own: status " << status;
}

}  // namespace eager::testing
