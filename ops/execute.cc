#include "ops/execute.h"

#include <algorithm>
#include <array>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include "ops/internal/graph_builder.h"
#include "ops/internal/memory_limit.h"
#include "ops/recorder.h"
#include "runtime/flush_denormal.h"
#include "runtime/graph.h"
#include "runtime/tensor_access.h"

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

// Execute for inputs passed by reference. A copy of a Tensor costs two
// atomic reference-count updates once the process has threads (~10 ns each
// here, as much as a one-element kernel); views cost none. The views exist
// only during the kernel: an output that shows an input's buffer (Reshape)
// adopts that input's owning pointer, and the tapes get owning copies.
template <size_t N>
Tensor ExecuteInPlace(const OpDef& op, const std::array<const Tensor*, N>& inputs,
                      const Attrs& attrs) {
  auto each = [&](auto make) {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return std::array<Tensor, N>{make(*inputs[I])...};
    }
    (std::make_index_sequence<N>());
  };
  auto copy = [](const Tensor& t) { return t; };
  bool viewable = Graph::Current() == nullptr;
  for (const Tensor* t : inputs) {
    viewable = viewable && t->symbolic() == nullptr && internal::TensorAccess::BufferOf(*t);
  }
  if (!viewable) [[unlikely]] {
    const std::array<Tensor, N> copies = each(copy);
    return Execute(op, copies, attrs);
  }
  const std::array<Tensor, N> views =
      each([](const Tensor& t) { return internal::TensorAccess::Borrow(t); });  // inlined
  Tensor output = RunKernel(op, views, attrs);
  if (internal::TensorAccess::IsBorrowed(output)) [[unlikely]] {
    const void* shown = internal::TensorAccess::BufferOf(output).get();
    const Tensor* owner = nullptr;
    for (const Tensor* t : inputs) {
      if (internal::TensorAccess::BufferOf(*t).get() == shown) owner = t;
    }
    EAGER_INTERNAL_CHECK(owner != nullptr);
    internal::TensorAccess::Adopt(output, *owner);
  }
  if (num_unpaused > 0) Report(op, each(copy), attrs, output);
  return output;
}

// The op's shape rule, its errors prefixed with the op type. The spec is
// built in place (no copy of it into a declared-then-assigned local: that
// reloaded a 100-byte struct right after the rule's scalar stores wrote it,
// a store-forwarding stall on every op).
OutputSpec Infer(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs) {
  try {
    return op.infer(inputs, attrs);
  } catch (const InvalidArgumentError& e) {
    throw InvalidArgumentError(StrCat(op.type, ": ", e.what()));
  }
}

// The kernel; an allocation the system refuses is ResourceExhaustedError.
// (A default Tensor allocates, so the result is not declared before the try.)
Tensor Compute(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs,
               const OutputSpec& spec) {
  try {
    return op.compute(inputs, attrs, spec);
  } catch (const std::bad_alloc&) {
    throw ResourceExhaustedError(StrCat("OOM when allocating tensor with shape", spec.shape,
                                        " and type ", spec.dtype, " for ", op.type,
                                        ": the system refused the memory"));
  }
}

}  // namespace

Tensor Execute(const OpDef& op, const Tensor& x, const Attrs& attrs) {
  return ExecuteInPlace<1>(op, {&x}, attrs);
}

Tensor Execute(const OpDef& op, const Tensor& x, const Tensor& y, const Attrs& attrs) {
  return ExecuteInPlace<2>(op, {&x, &y}, attrs);
}

Tensor RunKernel(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs) {
  if (op.num_inputs != OpDef::kVariadic && static_cast<int>(inputs.size()) != op.num_inputs)
      [[unlikely]] {
    throw InvalidArgumentError(
        StrCat(op.type, ": expected ", op.num_inputs, " inputs, got ", inputs.size()));
  }
  const OutputSpec spec = Infer(op, inputs, attrs);
  // Sizes from a graph file can ask for anything: a tensor larger than the
  // limit is refused before the kernel runs, and an allocation the system
  // refuses is the same error kind, never std::bad_alloc.
  // Every output (those of up to 65,536 elements were skipped, issue 37);
  // a string output's characters once it is made.
  internal::CheckTensorBytes(op.type, spec.shape, spec.dtype);
  // TF's kernel mode: denormals flushed, round to nearest; the caller's mode
  // is back when this returns or throws.
  const internal::ScopedFlushDenormal flush;
  Tensor output = Compute(op, inputs, attrs, spec);
  EAGER_INTERNAL_CHECK(output.shape() == spec.shape && output.dtype() == spec.dtype);
  if (spec.dtype == DType::kString) [[unlikely]] {
    internal::CheckStringTensorBytes(op.type, output);
  }
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

bool IsRecording() { return num_unpaused > 0; }

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
