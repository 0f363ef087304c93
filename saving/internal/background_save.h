#pragma once

// BackgroundSave: at most one save running on its own thread, and the error
// it left behind. The asynchronous half of Checkpoint's CheckpointOptions
// {.async = true} (saving/checkpoint_options.h). Not thread-safe: one owner
// thread calls everything.

#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "runtime/errors.h"

namespace eager::internal {

class BackgroundSave {
 public:
  BackgroundSave() = default;
  // Waits for the running save; prints its error (if any) to stderr, since
  // a destructor must not throw.
  ~BackgroundSave();
  BackgroundSave(const BackgroundSave&) = delete;
  BackgroundSave& operator=(const BackgroundSave&) = delete;

  // Runs `save` on a new thread. `prefix` names the checkpoint in the error
  // message. REQUIRES: nothing running (call Sync() first).
  void Start(std::string prefix, std::function<void()> save);

  // Waits for the running save, if any, keeping its error for Sync().
  void Wait() noexcept;
  // Waits, then throws the error of a save that failed since the last
  // Sync(), once: the same kind, its message prefixed with
  // "Asynchronous save of <prefix> failed: ".
  void Sync();

  bool running() const { return thread_.joinable(); }

 private:
  std::thread thread_;
  std::function<void()> save_;  // holds the snapshot until Wait()
  std::string prefix_;
  std::exception_ptr error_;  // set by the thread, read after the join
  // The failure to throw from Sync(): kind and full message.
  std::optional<std::pair<ErrorCode, std::string>> failure_;
};

}  // namespace eager::internal
