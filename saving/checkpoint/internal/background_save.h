#pragma once

// BackgroundSave: at most one save running on a writer thread of its own,
// and the error it left behind. The asynchronous half of Checkpoint's
// CheckpointOptions{.async = true} (saving/checkpoint/checkpoint_options.h). Not
// thread-safe: one owner thread calls everything.
//
// The writer is ONE thread for the object's lifetime, started by the first
// Start() and sleeping between saves, not a thread per save: a new thread
// inherits its creator's priority and starts on its creator's core, so it
// preempted the training thread there and, even after lowering itself to
// nice 19, kept that core for the rest of its scheduler slice (~1.1-1.4 ms
// of each save in a sched_switch trace of training_benchmark's AsyncSave
// case, with the other core idle). The first Start() returns only once the
// writer runs at nice 19 and sleeps, and a sleeping nice-19 thread that is
// woken does not preempt a normal one at its wake-up. It can still take the
// training core at a scheduler tick when the other core is busy: about 1 in
// 10 saves lost ~1 ms so in the 19:06 quiet run (benchmarks/README.md).
//
// So, when the writer may run on two cores or more (the CPU affinity it
// started with, its creator's), each Start() also keeps it off the core the
// caller is on (those cores minus that one) for as long as the caller
// trains; Wait() gives the writer all of them back before it blocks, since
// a caller that waits for the save leaves its core idle. With one core
// nothing changes.

#include <sched.h>

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "runtime/errors.h"

namespace eager::internal {

class BackgroundSave {
 public:
  BackgroundSave() = default;
  // Waits for the running save and ends the writer thread; prints the
  // save's error (if any) to stderr, since a destructor must not throw.
  ~BackgroundSave();
  BackgroundSave(const BackgroundSave&) = delete;
  BackgroundSave& operator=(const BackgroundSave&) = delete;

  // Runs `save` on the writer thread (started on first use, at nice 19).
  // `prefix` names the checkpoint in the error message. `save` itself (and
  // what it captures: the snapshot) is destroyed on the calling thread, by
  // Wait(). REQUIRES: nothing running (call Sync() first).
  void Start(std::string prefix, std::function<void()> save);

  // Waits for the running save, if any, keeping its error for Sync().
  void Wait() noexcept;
  // Waits, then throws the error of a save that failed since the last
  // Sync(), once: the same kind, its message prefixed with
  // "Asynchronous save of <prefix> failed: ".
  void Sync();

  bool running() const { return pending_; }
  // The writer thread's kernel thread id (0 before the first Start()), for
  // tests.
  int writer_thread_id() const { return writer_tid_; }

 private:
  void WriterLoop();
  // Best effort: errors leave the writer's affinity as it was.
  void KeepWriterOffThisCore();
  void GiveWriterEveryCore();

  std::thread thread_;
  int writer_tid_ = 0;
  cpu_set_t cores_{};           // the writer's affinity at its start (the process's)
  bool kept_off_ = false;       // the writer's affinity is cores_ minus one core
  bool pending_ = false;        // owner only: a save was started and not waited for
  std::function<void()> save_;  // holds the snapshot until Wait()
  std::string prefix_;
  // The failure to throw from Sync(): kind and full message.
  std::optional<std::pair<ErrorCode, std::string>> failure_;

  // Shared with the writer thread.
  std::mutex mu_;
  std::condition_variable to_writer_;  // a save posted, or stop
  std::condition_variable to_owner_;   // started (nice 19), or a save done
  bool started_ = false;
  bool posted_ = false;  // a save to run; cleared by the writer when done
  bool stop_ = false;
  std::exception_ptr error_;  // set by the writer, read after posted_ clears
};

}  // namespace eager::internal
