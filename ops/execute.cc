#include "ops/execute.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "ops/internal/graph_builder.h"
#include "ops/recorder.h"
#include "runtime/graph.h"

namespace eager {
namespace {

struct ActiveRecorder {
  OpRecorder* recorder;
  int paused;  // nesting depth of PauseRecording
};

// Innermost last. A plain vector: a thread rarely has more than two tapes.
thread_local std::vector<ActiveRecorder> recorders;
thread_local int num_unpaused = 0;

ActiveRecorder* FindRecorder(OpRecorder* recorder) {
  for (ActiveRecorder& r : recorders) {
    if (r.recorder == recorder) return &r;
  }
  return nullptr;
}

void Report(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs,
            const Tensor& output) {
  // Built only when some recorder wants it: a default OpCall would construct
  // a default Tensor, which allocates, on every op run under any tape.
  std::optional<OpCall> call;
  for (auto it = recorders.rbegin(); it != recorders.rend(); ++it) {
    if (it->paused > 0 || !it->recorder->ShouldRecord(op, inputs)) continue;
    if (!call.has_value()) {
      call.emplace(OpCall{&op, std::vector<Tensor>(inputs.begin(), inputs.end()), output, attrs});
    }
    it->recorder->Record(*call);
  }
}

}  // namespace

Tensor RunKernel(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs) {
  if (op.num_inputs != OpDef::kVariadic && static_cast<int>(inputs.size()) != op.num_inputs)
      [[unlikely]] {
    throw InvalidArgumentError(
        StrCat(op.type, ": expected ", op.num_inputs, " inputs, got ", inputs.size()));
  }
  OutputSpec spec;
  try {
    spec = op.infer(inputs, attrs);
  } catch (const InvalidArgumentError& e) {
    throw InvalidArgumentError(StrCat(op.type, ": ", e.what()));
  }
  Tensor output = op.compute(inputs, attrs, spec);
  EAGER_INTERNAL_CHECK(output.shape() == spec.shape && output.dtype() == spec.dtype);
  return output;
}

Tensor Execute(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs) {
  if (Graph* graph = Graph::Current()) [[unlikely]] {
    return internal::AddOpNode(*graph, op, inputs, attrs);
  }
  Tensor output = RunKernel(op, inputs, attrs);
  if (num_unpaused > 0) Report(op, inputs, attrs, output);
  return output;
}

ScopedRecording::ScopedRecording(OpRecorder* recorder) : recorder_(recorder) {
  recorders.push_back({recorder, 0});
  ++num_unpaused;
}

ScopedRecording::~ScopedRecording() {
  auto it = std::find_if(recorders.begin(), recorders.end(),
                         [&](const ActiveRecorder& r) { return r.recorder == recorder_; });
  if (it == recorders.end()) return;
  if (it->paused == 0) --num_unpaused;
  recorders.erase(it);
}

PauseRecording::PauseRecording(OpRecorder* recorder) : recorder_(recorder) {
  if (ActiveRecorder* r = FindRecorder(recorder_)) {
    was_active_ = true;
    if (r->paused++ == 0) --num_unpaused;
  }
}

PauseRecording::~PauseRecording() {
  if (!was_active_) return;
  if (ActiveRecorder* r = FindRecorder(recorder_)) {
    if (--r->paused == 0) ++num_unpaused;
  }
}

}  // namespace eager
