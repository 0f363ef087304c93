#pragma once

// OpRecorder: how GradientTape (and a graph recorder) sees executed ops.
//
// Recorders register per thread with ScopedRecording; Execute() reports each
// op call to every active recorder on its thread, innermost first, after the
// kernel ran. A recorder first gets ShouldRecord() with the inputs so that it
// can skip calls that do not touch anything it watches (no copies are made
// then). PauseRecording suspends one recorder, e.g. a tape while it computes
// its own gradient, so outer tapes still see those ops (higher-order
// gradients) but the inner one does not record itself.

#include <span>

#include "ops/op_def.h"

namespace eager {

class OpRecorder {
 public:
  virtual bool ShouldRecord(const OpDef& op, std::span<const Tensor> inputs) = 0;
  virtual void Record(const OpCall& call) = 0;

 protected:
  ~OpRecorder() = default;
};

// Registers `recorder` on this thread for the object's lifetime.
class ScopedRecording {
 public:
  explicit ScopedRecording(OpRecorder* recorder);
  ~ScopedRecording();
  ScopedRecording(const ScopedRecording&) = delete;
  ScopedRecording& operator=(const ScopedRecording&) = delete;

 private:
  OpRecorder* recorder_;
};

// Stops reporting to `recorder` (if registered on this thread) while alive.
class PauseRecording {
 public:
  explicit PauseRecording(OpRecorder* recorder);
  ~PauseRecording();
  PauseRecording(const PauseRecording&) = delete;
  PauseRecording& operator=(const PauseRecording&) = delete;

 private:
  OpRecorder* recorder_;
  bool was_active_ = false;
};

// Whether some recorder on this thread sees the ops run now (one is
// registered and not paused). A gradient function that may compute in one
// fused pass what public ops would compute in several (_FusedConv2D's)
// does so only when this is false: an outer tape (higher-order gradients)
// must see the ops it can differentiate.
bool IsRecording();

}  // namespace eager
