#pragma once

// GradientTape: records ops while alive, then differentiates (tf.GradientTape).
//
//   eager::Variable w(eager::Tensor::Vector<float>({1, 2}), "w");
//   eager::GradientTape tape;
//   eager::Tensor loss = eager::ReduceSum(eager::Square(w.value()));
//   std::vector<std::optional<eager::Tensor>> grads = tape.Gradient(loss, {&w});
//   // *grads[0] == [2, 4]
//
// Policies, as TensorFlow's:
// - Trainable variables are watched automatically when read while the tape
//   records (unless watch_accessed_variables is false); other variables and
//   tensors must be Watch()ed.
// - Gradient() returns one entry per source, shaped like it; a source the
//   target does not depend on gets nullopt (UnconnectedGradients::kNone) or
//   zeros (kZero). Broadcasting is undone: gradients sum back to input shapes.
// - A non-persistent tape allows one Gradient() call, then releases its
//   records and stops recording; a second call throws
//   FailedPreconditionError. A persistent tape keeps its records and goes on
//   recording until it is destroyed or Reset().
// - Tapes nest: an outer tape records the ops an inner tape's Gradient() runs,
//   so second derivatives work. A persistent tape also records the ops of
//   its own Gradient() calls (TF's tape.gradient inside the tape's context),
//   so one tape gives higher derivatives:
//     GradientTape tape(/*persistent=*/true);
//     Tensor y = x * x * x;                      // x = 3
//     Tensor dy = *tape.Gradient(y, x);          // 27
//     Tensor d2y = *tape.Gradient(dy, x);        // 18
//   That costs a record per backward op; a Gradient() call inside a
//   StopRecording scope records nothing (TF's call outside the context).
//   A non-persistent tape never records its own backward pass.
// - Several targets in one call differentiate their sum (TF's
//   tape.gradient([y1, y2], x)).
// - StopGradient() cuts the flow; integer and bool tensors carry no gradient.
//
// Errors: Gradient() throws FailedPreconditionError when a non-persistent
// tape is used twice, InvalidArgumentError when output_gradient does not
// match the target's shape and dtype, and passes on any error of the ops its
// backward pass runs.
//
// Costs: while recording, an op whose inputs the tape does not track costs
// one hash lookup per input; a recorded op costs one copy of its OpCall (the
// input and output Tensor handles, not their data). Gradient() is linear in
// the number of records. Records are owned by the tape only: tensors hold no
// graph, and a non-persistent tape frees its records when Gradient() returns.
//
// A tape records only on the thread that created it (ops and variable reads
// on other threads are not seen). REQUIRES: it is destroyed on that thread.
// Not thread-safe. Variables are kept by address: a watched Variable must
// outlive the tape's use of WatchedVariables() and Gradient() with it.

#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "autodiff/indexed_slices.h"
#include "ops/op_def.h"
#include "ops/recorder.h"
#include "runtime/variable.h"

namespace eager {

enum class UnconnectedGradients { kNone, kZero };

class GradientTape final : private OpRecorder, private internal::VariableReadObserver {
 public:
  explicit GradientTape(bool persistent = false, bool watch_accessed_variables = true);
  ~GradientTape();
  GradientTape(const GradientTape&) = delete;
  GradientTape& operator=(const GradientTape&) = delete;

  // Differentiate with respect to `tensor` (by id: copies are the same tensor).
  // Integer and bool tensors may be watched but never carry a gradient.
  void Watch(const Tensor& tensor);
  // Differentiate with respect to every read of `variable` from now on, even
  // if it is not trainable or watch_accessed_variables is false. Reads made
  // before the call are not tracked (TensorFlow's rule).
  void Watch(const Variable& variable);

  // d(target)/d(source) for each variable source: the sum over every read of
  // the variable while the tape watched it (reads before and after an Assign
  // are distinct tensors and both count). `output_gradient`, if given, is the
  // gradient flowing into `target` (same shape and dtype; default ones).
  // A non-float target or source gets no gradient (nullopt or zeros as
  // `unconnected` says). Throws FailedPreconditionError on a second call to a
  // non-persistent tape. Any contiguous container of Variable pointers will
  // do: `tape.Gradient(loss, model.TrainableVariables())`.
  std::vector<std::optional<Tensor>> Gradient(
      const Tensor& target, std::span<const Variable* const> sources,
      UnconnectedGradients unconnected = UnconnectedGradients::kNone,
      const std::optional<Tensor>& output_gradient = std::nullopt);
  // The same with respect to tensors: watched ones, tensors computed from
  // them, `target` itself (whose gradient is output_gradient), or, as in
  // TensorFlow's tape, any other input of an op the tape recorded. A tensor
  // that only ops without watched inputs used gets no gradient.
  std::vector<std::optional<Tensor>> Gradient(
      const Tensor& target, std::span<const Tensor> sources,
      UnconnectedGradients unconnected = UnconnectedGradients::kNone,
      const std::optional<Tensor>& output_gradient = std::nullopt);
  // Either of the above for a braced list, `tape.Gradient(loss, {&w, &b})` or
  // `tape.Gradient(y, {x})`, which C++20's std::span does not take.
  template <typename Source>
  std::vector<std::optional<Tensor>> Gradient(
      const Tensor& target, std::initializer_list<Source> sources,
      UnconnectedGradients unconnected = UnconnectedGradients::kNone,
      const std::optional<Tensor>& output_gradient = std::nullopt);
  // Convenience for one variable.
  std::optional<Tensor> Gradient(const Tensor& target, const Variable& source);

  // Gradient() for variables, each in the form TF's tape.gradient returns:
  // IndexedSlices (autodiff/indexed_slices.h) for a variable whose every
  // read reached the target only through Gathers on axis 0 (an Embedding's
  // lookup; one row per index looked up, unsummed), else a dense Tensor
  // (a variable read both ways gets the dense sum). Optimizer's
  // ApplyGradients takes these, and Minimize uses them: Keras 3's optimizers
  // treat repeated rows differently from their sum. Same rules and errors as
  // Gradient(); while another tape records this one's backward pass (or it
  // records itself), gradients stay dense so that tape can differentiate them.
  std::vector<std::optional<GradientValue>> GradientKeepingSlices(
      const Tensor& target, std::span<const Variable* const> sources,
      UnconnectedGradients unconnected = UnconnectedGradients::kNone);
  std::vector<std::optional<GradientValue>> GradientKeepingSlices(
      const Tensor& target, std::initializer_list<const Variable*> sources,
      UnconnectedGradients unconnected = UnconnectedGradients::kNone) {
    return GradientKeepingSlices(
        target, std::span<const Variable* const>(sources.begin(), sources.size()), unconnected);
  }

  // Several targets at once (tape.gradient([y1, y2], sources)): the gradient
  // of their sum, each target weighted by its output gradient
  // (`output_gradients`: empty for ones, else one per target, each shaped
  // like its target; InvalidArgumentError otherwise). Integer targets
  // contribute nothing. A target listed twice counts twice, as in TF.
  std::vector<std::optional<Tensor>> Gradient(
      std::span<const Tensor> targets, std::span<const Variable* const> sources,
      UnconnectedGradients unconnected = UnconnectedGradients::kNone,
      std::span<const Tensor> output_gradients = {});
  std::vector<std::optional<Tensor>> Gradient(
      std::span<const Tensor> targets, std::span<const Tensor> sources,
      UnconnectedGradients unconnected = UnconnectedGradients::kNone,
      std::span<const Tensor> output_gradients = {});
  // The same for braced lists: `tape.Gradient({y1, y2}, {&w})`.
  template <typename Source>
  std::vector<std::optional<Tensor>> Gradient(
      std::initializer_list<Tensor> targets, std::initializer_list<Source> sources,
      UnconnectedGradients unconnected = UnconnectedGradients::kNone);

  // Forgets everything recorded and watched, as if this tape had just been
  // made with the same options (tape.reset()): a spent non-persistent tape
  // may be used again, and later Gradient() calls see only ops run after the
  // reset.
  void Reset();

  // Variables watched so far, in first-watched order (tape.watched_variables()).
  std::vector<const Variable*> WatchedVariables() const;

  // Suspends recording while alive (tape.stop_recording()): ops are not
  // recorded and variable reads are not watched. Nests.
  // REQUIRES: `tape` outlives this object.
  class StopRecording {
   public:
    explicit StopRecording(GradientTape& tape);
    ~StopRecording();
    StopRecording(const StopRecording&) = delete;
    StopRecording& operator=(const StopRecording&) = delete;

   private:
    GradientTape* tape_;
    std::unique_ptr<PauseRecording> pause_;
  };

 private:
  struct Impl;
  bool ShouldRecord(const OpDef& op, std::span<const Tensor> inputs) override;
  void Record(const OpCall& call) override;
  void OnVariableRead(const Variable& variable, const Tensor& value) override;

  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------
// Implementation details follow.

template <typename Source>
std::vector<std::optional<Tensor>> GradientTape::Gradient(
    const Tensor& target, std::initializer_list<Source> sources, UnconnectedGradients unconnected,
    const std::optional<Tensor>& output_gradient) {
  if constexpr (std::is_convertible_v<Source, const Variable*>) {
    return Gradient(target, std::span<const Variable* const>(sources.begin(), sources.size()),
                    unconnected, output_gradient);
  } else {
    // Also catches `{&x, &y}` for tensors, which std::span would otherwise
    // take as the iterator range [&x, &y).
    static_assert(std::is_same_v<Source, Tensor>,
                  "GradientTape::Gradient: sources are Variable pointers ({&w, &b}) or "
                  "Tensors ({x, y})");
    return Gradient(target, std::span<const Tensor>(sources.begin(), sources.size()), unconnected,
                    output_gradient);
  }
}

template <typename Source>
std::vector<std::optional<Tensor>> GradientTape::Gradient(std::initializer_list<Tensor> targets,
                                                          std::initializer_list<Source> sources,
                                                          UnconnectedGradients unconnected) {
  const std::span<const Tensor> target_span(targets.begin(), targets.size());
  if constexpr (std::is_convertible_v<Source, const Variable*>) {
    return Gradient(target_span, std::span<const Variable* const>(sources.begin(), sources.size()),
                    unconnected);
  } else {
    static_assert(std::is_same_v<Source, Tensor>,
                  "GradientTape::Gradient: sources are Variable pointers ({&w, &b}) or "
                  "Tensors ({x, y})");
    return Gradient(target_span, std::span<const Tensor>(sources.begin(), sources.size()),
                    unconnected);
  }
}

}  // namespace eager
