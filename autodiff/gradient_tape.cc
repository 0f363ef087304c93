#include "autodiff/gradient_tape.h"

#include <cstdint>
#include <utility>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"

namespace eager {
namespace {

// tensors_ value for a tensor the user (or a variable read) made a root of
// differentiation rather than an op the tape recorded.
constexpr int64_t kWatched = -1;
constexpr int64_t kUntracked = -2;

constexpr const char* kSecondCallMessage =
    "GradientTape.gradient can only be called once on non-persistent tapes";

// Per-record state of one Gradient() call.
enum : uint8_t {
  kUnvisited = 0,
  kAncestor = 1,  // the target depends on its output
  kRelevant = 2,  // ... and its output depends on a source: its gradient is computed
};

// One source of one Gradient() call: the tensor ids whose gradients it sums
// (a variable has one per distinct value read) and the shape/dtype it wants.
struct Source {
  std::vector<TensorId> ids;
  Shape shape;
  DType dtype;
};

// Sums into `slot`. The Add runs through Execute, so an outer tape records
// it (the sum is part of the inner tape's gradient, which the outer one
// differentiates).
void Accumulate(std::optional<Tensor>& slot, const Tensor& grad) {
  slot = slot.has_value() ? Add(*slot, grad) : grad;
}

}  // namespace

struct GradientTape::Impl {
  struct WatchedVariable {
    const Variable* variable;
    std::vector<TensorId> reads;  // distinct value ids read while watched
  };

  Impl(bool persistent, bool watch_accessed_variables)
      : persistent(persistent), watch_accessed_variables(watch_accessed_variables) {}

  int64_t ProducerOf(TensorId id) const {
    auto it = tensors.find(id);
    return it == tensors.end() ? kUntracked : it->second;
  }

  std::vector<std::optional<Tensor>> Differentiate(OpRecorder* self, const Tensor& target,
                                                   const std::vector<Source>& sources,
                                                   UnconnectedGradients unconnected,
                                                   const std::optional<Tensor>& output_gradient);
  // The gradient of `target` with respect to every id in `source_ids` that it
  // reaches, by TensorFlow's tape algorithm.
  std::unordered_map<TensorId, std::optional<Tensor>> Backprop(
      const Tensor& target, const std::unordered_set<TensorId>& source_ids,
      const Tensor& output_gradient) const;
  // Drops every record and stops recording: a non-persistent tape is done.
  void Release(GradientTape* tape);

  const bool persistent;
  const bool watch_accessed_variables;
  bool used = false;  // a non-persistent tape whose Gradient() was called
  int paused = 0;     // depth of StopRecording and of our own backward pass

  // Records in execution order, so a tensor's producer always precedes its
  // consumers.
  std::vector<OpCall> records;
  // Every tensor the tape differentiates through: kWatched, or the index of
  // the record that produced it. ShouldRecord is one lookup per input here.
  std::unordered_map<TensorId, int64_t> tensors;
  std::vector<WatchedVariable> variables;  // first-watched order
  std::unordered_map<const Variable*, size_t> variable_index;

  std::optional<ScopedRecording> recording;
  bool observing_reads = false;
};

GradientTape::GradientTape(bool persistent, bool watch_accessed_variables)
    : impl_(std::make_unique<Impl>(persistent, watch_accessed_variables)) {
  impl_->recording.emplace(static_cast<OpRecorder*>(this));
  internal::AddVariableReadObserver(this);
  impl_->observing_reads = true;
}

GradientTape::~GradientTape() {
  if (impl_->observing_reads) internal::RemoveVariableReadObserver(this);
}

void GradientTape::Impl::Release(GradientTape* tape) {
  // Swaps, not clear(): clear() keeps the hash table's buckets.
  std::vector<OpCall>().swap(records);
  std::unordered_map<TensorId, int64_t>().swap(tensors);
  for (WatchedVariable& v : variables) std::vector<TensorId>().swap(v.reads);
  recording.reset();
  if (observing_reads) {
    internal::RemoveVariableReadObserver(tape);
    observing_reads = false;
  }
}

void GradientTape::Watch(const Tensor& tensor) {
  if (impl_->used) return;  // TF ignores watches on a finished tape, too
  // emplace keeps the producer of an already recorded tensor: gradients flow
  // through it as before, and it also becomes a valid source.
  impl_->tensors.emplace(tensor.id(), kWatched);
}

void GradientTape::Watch(const Variable& variable) {
  if (impl_->used) return;
  auto [it, inserted] = impl_->variable_index.try_emplace(&variable, impl_->variables.size());
  if (inserted) impl_->variables.push_back({&variable, {}});
}

std::vector<const Variable*> GradientTape::WatchedVariables() const {
  std::vector<const Variable*> result;
  result.reserve(impl_->variables.size());
  for (const Impl::WatchedVariable& v : impl_->variables) result.push_back(v.variable);
  return result;
}

void GradientTape::OnVariableRead(const Variable& variable, const Tensor& value) {
  Impl& s = *impl_;
  if (s.paused > 0 || s.used) return;
  auto it = s.variable_index.find(&variable);
  if (it == s.variable_index.end()) {
    if (!s.watch_accessed_variables || !variable.trainable()) return;
    it = s.variable_index.emplace(&variable, s.variables.size()).first;
    s.variables.push_back({&variable, {}});
  }
  std::vector<TensorId>& reads = s.variables[it->second].reads;
  // A value id never comes back after an Assign replaced it, so comparing
  // with the last read is enough to keep the ids distinct.
  if (reads.empty() || reads.back() != value.id()) {
    reads.push_back(value.id());
    s.tensors.emplace(value.id(), kWatched);
  }
}

bool GradientTape::ShouldRecord(const OpDef& op, std::span<const Tensor> inputs) {
  const Impl& s = *impl_;
  // An op without a gradient (StopGradient, Equal, ArgMax) contributes
  // nothing, so its output need not be tracked either: that is what makes
  // StopGradient cut the flow.
  if (op.gradient == nullptr || s.tensors.empty()) return false;
  for (const Tensor& t : inputs) {
    // As TensorFlow: only float tensors carry gradients, even when watched.
    if (IsFloating(t.dtype()) && s.tensors.contains(t.id())) return true;
  }
  return false;
}

void GradientTape::Record(const OpCall& call) {
  Impl& s = *impl_;
  // A non-float output (Cast to int) carries no gradient; not tracking it
  // keeps everything computed from it off the tape.
  if (!IsFloating(call.output.dtype())) return;
  s.tensors.emplace(call.output.id(), static_cast<int64_t>(s.records.size()));
  s.records.push_back(call);
}

std::unordered_map<TensorId, std::optional<Tensor>> GradientTape::Impl::Backprop(
    const Tensor& target, const std::unordered_set<TensorId>& source_ids,
    const Tensor& output_gradient) const {
  const auto n = static_cast<int64_t>(records.size());
  std::vector<uint8_t> state(static_cast<size_t>(n), kUnvisited);

  // 1. The records the target depends on, by a depth-first walk from its
  //    producer along recorded inputs.
  std::vector<int64_t> stack;
  const int64_t root = ProducerOf(target.id());
  if (root >= 0) {
    state[root] = kAncestor;
    stack.push_back(root);
  }
  while (!stack.empty()) {
    const int64_t r = stack.back();
    stack.pop_back();
    for (const Tensor& input : records[r].inputs) {
      const int64_t p = ProducerOf(input.id());
      if (p >= 0 && state[p] == kUnvisited) {
        state[p] = kAncestor;
        stack.push_back(p);
      }
    }
  }

  // 2. Forward over those, in execution order (producers first): a record is
  //    relevant when an input derives from a source. Count the uses of each
  //    derived tensor by relevant records: its producer is ready once all of
  //    them have passed their gradient back.
  auto derived = [&](const Tensor& t) {
    if (!IsFloating(t.dtype())) return false;
    if (source_ids.contains(t.id())) return true;
    const int64_t p = ProducerOf(t.id());
    return p >= 0 && state[p] == kRelevant;
  };
  std::unordered_map<TensorId, int> uses;
  for (int64_t r = 0; r < n; ++r) {
    if (state[r] != kAncestor) continue;
    bool relevant = false;
    for (const Tensor& input : records[r].inputs) {
      if (derived(input)) {
        relevant = true;
        ++uses[input.id()];
      }
    }
    if (relevant) state[r] = kRelevant;
  }

  // 3. Backwards with a ready stack, accumulating gradients by tensor id.
  //    Only gradients of sources are kept once their producer has run.
  std::unordered_map<TensorId, std::optional<Tensor>> grads;
  grads[target.id()] = output_gradient;
  if (root >= 0 && state[root] == kRelevant) stack.push_back(root);
  while (!stack.empty()) {
    const OpCall& call = records[stack.back()];
    stack.pop_back();
    std::vector<std::optional<Tensor>> input_grads;
    if (auto it = grads.find(call.output.id()); it != grads.end() && it->second.has_value()) {
      const Tensor grad = *it->second;
      if (!source_ids.contains(call.output.id())) grads.erase(it);
      input_grads = call.op->gradient(call, grad);
      if (input_grads.size() != call.inputs.size()) [[unlikely]] {
        throw InternalError(StrCat("GradientTape: the gradient of ", call.op->type, " returned ",
                                   input_grads.size(), " gradients for ", call.inputs.size(),
                                   " inputs"));
      }
    }
    for (size_t i = 0; i < call.inputs.size(); ++i) {
      const Tensor& input = call.inputs[i];
      if (!derived(input)) continue;
      if (!input_grads.empty() && input_grads[i].has_value()) {
        const Tensor& g = *input_grads[i];
        if (g.shape() != input.shape() || g.dtype() != input.dtype()) [[unlikely]] {
          throw InternalError(StrCat("GradientTape: the gradient of ", call.op->type, " for input ",
                                     i, " has shape ", g.shape(), " and dtype ", g.dtype(),
                                     ", expected the input's shape ", input.shape(), " and dtype ",
                                     input.dtype()));
        }
        Accumulate(grads[input.id()], g);
      }
      // An input without a gradient still counts as delivered: its producer
      // must run once every consumer is done, with whatever did arrive.
      if (--uses[input.id()] == 0) {
        const int64_t p = ProducerOf(input.id());
        if (p >= 0 && state[p] == kRelevant) stack.push_back(p);
      }
    }
  }
  return grads;
}

std::vector<std::optional<Tensor>> GradientTape::Impl::Differentiate(
    OpRecorder* self, const Tensor& target, const std::vector<Source>& sources,
    UnconnectedGradients unconnected, const std::optional<Tensor>& output_gradient) {
  if (used) throw FailedPreconditionError(kSecondCallMessage);
  if (output_gradient.has_value() &&
      (output_gradient->shape() != target.shape() || output_gradient->dtype() != target.dtype())) {
    throw InvalidArgumentError(StrCat("GradientTape.gradient: output_gradient has shape ",
                                      output_gradient->shape(), " and dtype ",
                                      output_gradient->dtype(), ", but the target has shape ",
                                      target.shape(), " and dtype ", target.dtype()));
  }
  if (!persistent) used = true;

  std::vector<std::optional<Tensor>> result(sources.size());
  {
    // Our own backward pass is not recorded by us, but is by outer tapes.
    PauseRecording pause(self);
    ++paused;
    struct Unpause {
      int& paused;
      ~Unpause() { --paused; }
    } unpause{paused};

    std::unordered_set<TensorId> source_ids;
    for (const Source& source : sources) {
      if (IsFloating(source.dtype)) source_ids.insert(source.ids.begin(), source.ids.end());
    }
    if (IsFloating(target.dtype()) && !source_ids.empty()) {
      std::unordered_map<TensorId, std::optional<Tensor>> grads =
          Backprop(target, source_ids, output_gradient.value_or(OnesLike(target)));
      for (size_t i = 0; i < sources.size(); ++i) {
        if (!IsFloating(sources[i].dtype)) continue;
        for (TensorId id : sources[i].ids) {
          auto it = grads.find(id);
          if (it != grads.end() && it->second.has_value()) Accumulate(result[i], *it->second);
        }
      }
    }
    if (unconnected == UnconnectedGradients::kZero) {
      for (size_t i = 0; i < sources.size(); ++i) {
        if (!result[i].has_value()) result[i] = Zeros(sources[i].shape, sources[i].dtype);
      }
    }
  }
  return result;
}

std::vector<std::optional<Tensor>> GradientTape::Gradient(
    const Tensor& target, const std::vector<const Variable*>& sources,
    UnconnectedGradients unconnected, const std::optional<Tensor>& output_gradient) {
  std::vector<Source> resolved;
  resolved.reserve(sources.size());
  for (const Variable* variable : sources) {
    EAGER_CHECK(variable != nullptr, "GradientTape.gradient: source ", resolved.size(),
                " is a null Variable pointer");
    Source source{{}, variable->shape(), variable->dtype()};
    if (auto it = impl_->variable_index.find(variable); it != impl_->variable_index.end()) {
      source.ids = impl_->variables[it->second].reads;
    }
    resolved.push_back(std::move(source));
  }
  // Release even when a gradient function throws: a non-persistent tape is
  // spent either way, and its records should not outlive the call.
  struct ReleaseAtExit {
    GradientTape* tape;
    ~ReleaseAtExit() {
      if (tape->impl_->used) tape->impl_->Release(tape);
    }
  } release{this};
  return impl_->Differentiate(this, target, resolved, unconnected, output_gradient);
}

std::vector<std::optional<Tensor>> GradientTape::Gradient(
    const Tensor& target, const std::vector<Tensor>& sources, UnconnectedGradients unconnected,
    const std::optional<Tensor>& output_gradient) {
  std::vector<Source> resolved;
  resolved.reserve(sources.size());
  for (const Tensor& t : sources) resolved.push_back({{t.id()}, t.shape(), t.dtype()});
  struct ReleaseAtExit {
    GradientTape* tape;
    ~ReleaseAtExit() {
      if (tape->impl_->used) tape->impl_->Release(tape);
    }
  } release{this};
  return impl_->Differentiate(this, target, resolved, unconnected, output_gradient);
}

std::optional<Tensor> GradientTape::Gradient(const Tensor& target, const Variable& source) {
  return Gradient(target, std::vector<const Variable*>{&source})[0];
}

GradientTape::StopRecording::StopRecording(GradientTape& tape)
    : tape_(&tape), pause_(std::make_unique<PauseRecording>(static_cast<OpRecorder*>(&tape))) {
  ++tape_->impl_->paused;
}

GradientTape::StopRecording::~StopRecording() {
  pause_.reset();
  --tape_->impl_->paused;
}

}  // namespace eager
