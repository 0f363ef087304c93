#include "autodiff/gradient_tape.h"

// TensorFlow's tape algorithm (c/eager/tape.h), on op calls keyed by tensor
// id. Recording keeps each OpCall whose inputs include a tracked tensor and
// tracks its output. Gradient() then
//   1. walks back from the target's producer to the records it depends on,
//   2. keeps those with an input derived from a source, counting for each
//      record output how many kept records use it, and
//   3. runs the kept records' gradient functions from a ready stack: a record
//      is ready once every use of its output has passed a gradient back, and
//      gradients reaching the same tensor are summed.
// Each step is linear in the number of records. The backward ops run through
// Execute like any other op, so outer tapes record them (higher-order
// gradients); a persistent tape records them too (TF's tape.gradient inside
// its context), a non-persistent one pauses itself.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/index_ops.h"
#include "ops/shape_ops.h"
#include "runtime/tensor_access.h"

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

// One target of one Gradient() call and the gradient flowing into it.
struct Target {
  Tensor tensor;
  Tensor gradient;
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

// TensorId -> record index (or kWatched), open addressing with linear
// probing. ShouldRecord does one lookup per input of every op run while the
// tape is alive, so this replaces std::unordered_map's node per entry and
// pointer chase per lookup. Ids are never 0, so 0 marks an empty slot.
class IdMap {
 public:
  bool empty() const { return size_ == 0; }

  // The value stored for `id`, or kUntracked.
  int64_t Find(TensorId id) const {
    if (size_ == 0) return kUntracked;
    for (size_t i = Slot(id);; i = (i + 1) & mask_) {
      if (slots_[i].id == id) return slots_[i].value;
      if (slots_[i].id == 0) return kUntracked;
    }
  }

  // Stores `value` unless `id` is present (then keeps the old value).
  void Emplace(TensorId id, int64_t value) {
    EAGER_INTERNAL_CHECK(id != 0);
    if (2 * (size_ + 1) > slots_.size()) Rehash(slots_.empty() ? 64 : 2 * slots_.size());
    for (size_t i = Slot(id);; i = (i + 1) & mask_) {
      if (slots_[i].id == id) return;
      if (slots_[i].id == 0) {
        slots_[i] = {id, value};
        ++size_;
        return;
      }
    }
  }

  void Clear() {
    std::vector<Entry>().swap(slots_);
    size_ = 0;
    mask_ = 0;
    shift_ = 64;
  }

 private:
  struct Entry {
    TensorId id = 0;
    int64_t value = 0;
  };

  // Fibonacci hashing: consecutive ids spread over the table.
  size_t Slot(TensorId id) const {
    return static_cast<size_t>((id * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
  }

  void Rehash(size_t capacity) {
    std::vector<Entry> old;
    old.swap(slots_);
    slots_.resize(capacity);
    mask_ = capacity - 1;
    shift_ = 64 - std::countr_zero(capacity);
    size_ = 0;
    for (const Entry& e : old) {
      if (e.id != 0) Emplace(e.id, e.value);
    }
  }

  std::vector<Entry> slots_;  // size 0 or a power of two
  size_t size_ = 0;
  size_t mask_ = 0;
  int shift_ = 64;
};

}  // namespace

struct GradientTape::Impl {
  struct WatchedVariable {
    const Variable* variable;
    std::vector<TensorId> reads;  // distinct value ids read while watched
  };

  Impl(bool persistent, bool watch_accessed_variables)
      : persistent(persistent), watch_accessed_variables(watch_accessed_variables) {}

  struct Record {
    OpCall call;
    size_t first_input;  // call.inputs[i]'s producer is input_producers[first_input + i]
  };

  int64_t ProducerOf(TensorId id) const { return tensors.Find(id); }

  // keep_slices: a source read only by Gathers on axis 0 gets IndexedSlices
  // (GradientKeepingSlices); else every gradient is a dense Tensor.
  std::vector<std::optional<GradientValue>> Differentiate(OpRecorder* self,
                                                          const std::vector<Target>& targets,
                                                          const std::vector<Source>& sources,
                                                          UnconnectedGradients unconnected,
                                                          bool keep_slices);
  // The gradients of `target` that reach the ids in `source_ids`: per record
  // output (`by_record`, kept for sources) and per source no record produced
  // (`loose`).
  struct Gradients {
    std::vector<std::optional<Tensor>> by_record;
    std::unordered_map<TensorId, std::optional<Tensor>> loose;
    // With keep_slices: per loose source, the row gradients of the Gathers
    // that read it, not yet summed.
    std::unordered_map<TensorId, std::vector<IndexedSlices>> slices;
  };
  // Not const: it tells each record's call which inputs need a gradient.
  struct BackpropPass;
  Gradients Backprop(const std::vector<Target>& targets,
                     const std::unordered_set<TensorId>& source_ids, bool keep_slices);
  // Drops every record and stops recording: a non-persistent tape is done.
  void Release(GradientTape* tape);
  // Differentiate, then Release a spent (non-persistent) tape, also when a
  // gradient function throws.
  std::vector<std::optional<GradientValue>> DifferentiateAndRelease(
      GradientTape* tape, const std::vector<Target>& targets, const std::vector<Source>& sources,
      UnconnectedGradients unconnected, bool keep_slices = false);
  // The targets with their output gradients, checked (`output_gradients`
  // empty: ones). Throws FailedPreconditionError on a spent tape.
  std::vector<Target> ResolveTargets(std::span<const Tensor> targets,
                                     std::span<const Tensor> output_gradients) const;

  const bool persistent;
  const bool watch_accessed_variables;
  bool used = false;  // a non-persistent tape whose Gradient() was called
  int paused = 0;     // depth of StopRecording and of our own backward pass
  // Whether this tape records the backward pass now running (persistent and
  // not paused): its records may then grow while the pass walks them.
  bool recording_backward = false;

  // Records in execution order, so a tensor's producer always precedes its
  // consumers.
  std::vector<Record> records;
  // For each record's inputs, in order: the producing record's index, or
  // kWatched / kUntracked, found once when recording so that Gradient()
  // walks indices instead of hashing ids.
  std::vector<int64_t> input_producers;
  // Every tensor the tape differentiates through: kWatched, or the index of
  // the record that produced it. ShouldRecord is one lookup per input here.
  IdMap tensors;
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

void GradientTape::Reset() {
  Impl& s = *impl_;
  if (s.paused > 0) {
    // TF: reset() inside stop_recording() fails the same way.
    throw FailedPreconditionError(
        "GradientTape.reset: the tape is not recording (inside StopRecording or its own "
        "Gradient call)");
  }
  s.Release(this);
  s.variables.clear();
  s.variable_index.clear();
  s.used = false;
  s.recording.emplace(static_cast<OpRecorder*>(this));
  internal::AddVariableReadObserver(this);
  s.observing_reads = true;
}

GradientTape::~GradientTape() {
  if (impl_->observing_reads) internal::RemoveVariableReadObserver(this);
}

void GradientTape::Impl::Release(GradientTape* tape) {
  // Swaps, not clear(): clear() keeps the capacity.
  std::vector<Record>().swap(records);
  std::vector<int64_t>().swap(input_producers);
  tensors.Clear();
  for (WatchedVariable& v : variables) std::vector<TensorId>().swap(v.reads);
  recording.reset();
  if (observing_reads) {
    internal::RemoveVariableReadObserver(tape);
    observing_reads = false;
  }
}

void GradientTape::Watch(const Tensor& tensor) {
  if (impl_->used) return;  // a spent non-persistent tape tracks nothing more
  // emplace keeps the producer of an already recorded tensor: gradients flow
  // through it as before, and it also becomes a valid source.
  impl_->tensors.Emplace(tensor.id(), kWatched);
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
    s.tensors.Emplace(value.id(), kWatched);
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
    if (IsFloating(t.dtype()) && s.tensors.Find(t.id()) != kUntracked) return true;
  }
  return false;
}

void GradientTape::Record(const OpCall& call) {
  Impl& s = *impl_;
  // A non-float output (Cast to int) carries no gradient; not tracking it
  // keeps everything computed from it off the tape.
  if (!IsFloating(call.output.dtype())) return;
  if (s.records.empty()) {
    // Skips the first few doublings, each of which moves every record.
    s.records.reserve(16);
    s.input_producers.reserve(32);
  }
  const auto index = static_cast<int64_t>(s.records.size());
  s.records.push_back({call, s.input_producers.size()});
  for (const Tensor& input : call.inputs) s.input_producers.push_back(s.ProducerOf(input.id()));
  s.tensors.Emplace(call.output.id(), index);
}

// One Backprop call's per-record state, shared by its three steps.
struct GradientTape::Impl::BackpropPass {
  Impl& tape;
  const std::unordered_set<TensorId>& source_ids;
  bool keep_slices;
  std::vector<uint8_t> state;      // kUnvisited, kAncestor or kRelevant
  std::vector<uint8_t> is_source;  // the record produced a source
  std::vector<int32_t> uses;       // relevant records still to pass a gradient back

  // Whether input i of `rec` derives from a source.
  bool Derived(const Record& rec, size_t i) const {
    const int64_t p = tape.input_producers[rec.first_input + i];
    if (p >= 0) return state[p] == kRelevant || is_source[p] != 0;
    const Tensor& input = rec.call.inputs[i];
    return IsFloating(input.dtype()) && source_ids.contains(input.id());
  }

  // 1. The records the targets depend on, by a depth-first walk from their
  //    producers `roots` along recorded inputs.
  void MarkAncestors(const std::vector<int64_t>& roots) {
    std::vector<int64_t> stack;
    for (const int64_t root : roots) {
      if (root >= 0 && state[root] == kUnvisited) {
        state[root] = kAncestor;
        stack.push_back(root);
      }
    }
    while (!stack.empty()) {
      const Record& rec = tape.records[stack.back()];
      stack.pop_back();
      for (size_t i = 0; i < rec.call.inputs.size(); ++i) {
        const int64_t p = tape.input_producers[rec.first_input + i];
        if (p >= 0 && state[p] == kUnvisited) {
          state[p] = kAncestor;
          stack.push_back(p);
        }
      }
    }
  }

  // 2. Forward over those, in execution order (producers first): a record is
  //    relevant when an input derives from a source. Counts the uses of each
  //    relevant output by relevant records: its producer is ready once all
  //    of them have passed their gradient back.
  void MarkRelevantAndCountUses() {
    for (size_t r = 0; r < state.size(); ++r) {
      if (state[r] != kAncestor) continue;
      const Record& rec = tape.records[r];
      bool relevant = false;
      for (size_t i = 0; i < rec.call.inputs.size(); ++i) {
        if (!Derived(rec, i)) continue;
        relevant = true;
        if (const int64_t p = tape.input_producers[rec.first_input + i]; p >= 0) ++uses[p];
      }
      if (relevant) state[r] = kRelevant;
    }
  }

  // The gradients of `rec`'s inputs given its output's, skipping (and telling
  // the gradient function to skip) inputs that do not derive from a source:
  // the first layer's MatMul needs no dx.
  std::vector<std::optional<Tensor>> CallGradient(Record& rec, const Tensor& grad) const {
    const OpCall& call = rec.call;
    uint64_t skip = 0;
    for (size_t i = 0; i < call.inputs.size() && i < 64; ++i) {
      if (!Derived(rec, i)) skip |= uint64_t{1} << i;
    }
    rec.call.skip_gradient = skip;
    std::vector<std::optional<Tensor>> input_grads = call.op->gradient(call, grad);
    if (input_grads.size() != call.inputs.size()) [[unlikely]] {
      throw InternalError(StrCat("GradientTape: the gradient of ", call.op->type, " returned ",
                                 input_grads.size(), " gradients for ", call.inputs.size(),
                                 " inputs"));
    }
    return input_grads;
  }

  // OpDef::add_input0_gradient's path: the op adds its gradient for input 0
  // straight into that input's sum so far (zeros if none yet; a fresh copy
  // if someone else holds its buffer). Only when nothing records this pass
  // (the in-place sum is no op an outer tape could differentiate) and only
  // input 0 needs a gradient. False: the gradient function must run.
  bool AddInput0GradientInPlace(const Record& rec, const Tensor& grad, Gradients& grads) const {
    const OpCall& call = rec.call;
    if (call.op->add_input0_gradient == nullptr || tape.recording_backward || IsRecording()) {
      return false;
    }
    if (!Derived(rec, 0)) return false;
    for (size_t i = 1; i < call.inputs.size(); ++i) {
      if (Derived(rec, i)) return false;
    }
    const Tensor& input = call.inputs[0];
    if (!input.shape().IsFullyDefined() || input.dtype() != call.output.dtype() ||
        grad.dtype() != input.dtype()) {
      return false;
    }
    const int64_t p = tape.input_producers[rec.first_input];
    std::optional<Tensor>& sum = p >= 0 ? grads.by_record[p] : grads.loose[input.id()];
    if (!sum.has_value()) {
      sum = Tensor::Zeros(input.shape(), input.dtype());
    } else if (internal::BufferOf(*sum).use_count() != 1) {
      // Shared, or a borrowed view (use_count 0): sum into a copy.
      Tensor copy = internal::NewTensor(sum->shape(), sum->dtype());
      std::memcpy(internal::MutableRawData(copy), internal::RawData(*sum),
                  static_cast<size_t>(sum->bytes().size()));
      sum = std::move(copy);
    }
    // A declined call leaves `sum` holding the same values (zeros, a copy).
    return call.op->add_input0_gradient(call, grad, *sum);
  }

  // TF's gradient of a Gather on axis 0 for its params: the output gradient
  // as rows at the flattened indices (IndexedSlices), kept unsummed for a
  // loose source (a variable read) when asked to. Only when nothing records
  // this pass: an outer tape must see the dense ops to differentiate them.
  bool KeepGatherSlices(const Record& rec, const Tensor& grad, Gradients& grads) const {
    const OpCall& call = rec.call;
    if (!keep_slices || call.op != &kGatherOp || tape.recording_backward || IsRecording()) {
      return false;
    }
    const auto zero = [&](std::string_view attr) {
      return !call.attrs.Has(attr) || call.attrs.GetInt(attr) == 0;
    };
    if (!zero("axis") || !zero("batch_dims")) return false;
    if (tape.input_producers[rec.first_input] >= 0 || !Derived(rec, 0)) return false;
    const Tensor& params = call.inputs[0];
    const Tensor& indices = call.inputs[1];
    std::vector<int64_t> rows = {indices.num_elements()};
    for (int d = 1; d < params.rank(); ++d) rows.push_back(params.shape().dim(d));
    grads.slices[params.id()].push_back(
        {Reshape(grad, rows), Reshape(indices, {indices.num_elements()}), params.shape()});
    return true;
  }

  // 3. Backwards with a ready stack from the targets' producers `roots`,
  //    accumulating gradients. A record's output gradient is dropped once
  //    used unless it is a source's.
  Gradients RunBackward(const std::vector<int64_t>& roots, const std::vector<Target>& targets) {
    Gradients grads;
    grads.by_record.resize(state.size());
    std::vector<int64_t> stack;
    for (size_t t = 0; t < targets.size(); ++t) {
      const int64_t root = roots[t];
      Accumulate(root >= 0 ? grads.by_record[root] : grads.loose[targets[t].tensor.id()],
                 targets[t].gradient);
      // A target another target depends on (y and y * y) is ready only once
      // the records using it have passed their gradients back.
      if (root >= 0 && state[root] == kRelevant && uses[root] == 0 &&
          std::find(stack.begin(), stack.end(), root) == stack.end()) {
        stack.push_back(root);
      }
    }
    // A tape recording this pass appends records (and may move them): the
    // record being differentiated is then a copy.
    std::optional<Record> copy;
    while (!stack.empty()) {
      const int64_t r = stack.back();
      stack.pop_back();
      Record& rec = tape.recording_backward ? copy.emplace(tape.records[r]) : tape.records[r];
      std::vector<std::optional<Tensor>> input_grads;
      if (std::optional<Tensor>& out = grads.by_record[r]; out.has_value()) {
        const Tensor grad = *out;
        if (!is_source[r]) out.reset();
        if (!KeepGatherSlices(rec, grad, grads) && !AddInput0GradientInPlace(rec, grad, grads)) {
          input_grads = CallGradient(rec, grad);
        }
      }
      const OpCall& call = rec.call;
      for (size_t i = 0; i < call.inputs.size(); ++i) {
        if (!Derived(rec, i)) continue;
        const Tensor& input = call.inputs[i];
        const int64_t p = tape.input_producers[rec.first_input + i];
        if (!input_grads.empty() && input_grads[i].has_value()) {
          const Tensor& g = *input_grads[i];
          if (g.shape() != input.shape() || g.dtype() != input.dtype()) [[unlikely]] {
            throw InternalError(StrCat("GradientTape: the gradient of ", call.op->type,
                                       " for input ", i, " has shape ", g.shape(), " and dtype ",
                                       g.dtype(), ", expected the input's shape ", input.shape(),
                                       " and dtype ", input.dtype()));
          }
          Accumulate(p >= 0 ? grads.by_record[p] : grads.loose[input.id()], g);
        }
        // An input without a gradient still counts as delivered: its producer
        // must run once every consumer is done, with whatever did arrive.
        if (p >= 0 && --uses[p] == 0 && state[p] == kRelevant) stack.push_back(p);
      }
    }
    return grads;
  }
};

GradientTape::Impl::Gradients GradientTape::Impl::Backprop(
    const std::vector<Target>& targets, const std::unordered_set<TensorId>& source_ids,
    bool keep_slices) {
  const size_t n = records.size();
  BackpropPass pass{*this,
                    source_ids,
                    keep_slices,
                    std::vector<uint8_t>(n, kUnvisited),
                    std::vector<uint8_t>(n, 0),
                    std::vector<int32_t>(n, 0)};
  // Sources a record produced are marked by index; the others (watched
  // tensors, variable reads, constant inputs) stay in source_ids.
  for (TensorId id : source_ids) {
    if (const int64_t p = ProducerOf(id); p >= 0) pass.is_source[p] = 1;
  }
  std::vector<int64_t> roots;
  roots.reserve(targets.size());
  for (const Target& t : targets) roots.push_back(ProducerOf(t.tensor.id()));
  pass.MarkAncestors(roots);
  pass.MarkRelevantAndCountUses();
  return pass.RunBackward(roots, targets);
}

std::vector<Target> GradientTape::Impl::ResolveTargets(
    std::span<const Tensor> targets, std::span<const Tensor> output_gradients) const {
  if (used) throw FailedPreconditionError(kSecondCallMessage);
  if (!output_gradients.empty() && output_gradients.size() != targets.size()) {
    throw InvalidArgumentError(StrCat("GradientTape.gradient: got ", output_gradients.size(),
                                      " output gradients for ", targets.size(), " targets"));
  }
  std::vector<Target> resolved;
  resolved.reserve(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    const Tensor& target = targets[i];
    if (output_gradients.empty()) {
      // An integer target carries no gradient (TF gives None for it).
      if (IsFloating(target.dtype())) resolved.push_back({target, OnesLike(target)});
      continue;
    }
    const Tensor& g = output_gradients[i];
    if (g.shape() != target.shape() || g.dtype() != target.dtype()) {
      throw InvalidArgumentError(
          StrCat("GradientTape.gradient: output_gradient", targets.size() > 1 ? StrCat(" ", i) : "",
                 " has shape ", g.shape(), " and dtype ", g.dtype(), ", but the target has shape ",
                 target.shape(), " and dtype ", target.dtype()));
    }
    if (IsFloating(target.dtype())) resolved.push_back({target, g});
  }
  return resolved;
}

namespace {

// One IndexedSlices of `pieces` (each for the same dense shape): values and
// indices concatenated, as TF aggregates sparse gradients; int64 indices if
// any piece has them.
IndexedSlices ConcatSlices(std::vector<IndexedSlices>& pieces) {
  if (pieces.size() == 1) return std::move(pieces[0]);
  bool int64 = false;
  for (const IndexedSlices& p : pieces) int64 = int64 || p.indices.dtype() == DType::kInt64;
  std::vector<Tensor> values;
  std::vector<Tensor> indices;
  for (const IndexedSlices& p : pieces) {
    values.push_back(p.values);
    indices.push_back(int64 && p.indices.dtype() != DType::kInt64 ? Cast(p.indices, DType::kInt64)
                                                                  : p.indices);
  }
  return {Concat(values, 0), Concat(indices, 0), pieces[0].dense_shape};
}

}  // namespace

std::vector<std::optional<GradientValue>> GradientTape::Impl::Differentiate(
    OpRecorder* self, const std::vector<Target>& targets, const std::vector<Source>& sources,
    UnconnectedGradients unconnected, bool keep_slices) {
  if (!persistent) used = true;

  std::vector<std::optional<Tensor>> result(sources.size());
  std::vector<std::vector<IndexedSlices>> slices(sources.size());
  {
    // Outer tapes record our backward pass; we do too when persistent and
    // recording (TF), else we pause ourselves.
    const bool record_self = persistent && paused == 0;
    std::optional<PauseRecording> pause;
    if (!record_self) {
      pause.emplace(self);
      ++paused;  // nor does it watch the variables the gradients read
    }
    recording_backward = record_self;
    struct Restore {
      Impl& impl;
      bool record_self;
      ~Restore() {
        if (!record_self) --impl.paused;
        impl.recording_backward = false;
      }
    } restore{*this, record_self};

    std::unordered_set<TensorId> source_ids;
    for (const Source& source : sources) {
      if (IsFloating(source.dtype)) source_ids.insert(source.ids.begin(), source.ids.end());
    }
    if (!targets.empty() && !source_ids.empty()) {
      Gradients grads = Backprop(targets, source_ids, keep_slices);
      for (size_t i = 0; i < sources.size(); ++i) {
        if (!IsFloating(sources[i].dtype)) continue;
        for (TensorId id : sources[i].ids) {
          if (auto it = grads.slices.find(id); it != grads.slices.end()) {
            for (IndexedSlices& piece : it->second) slices[i].push_back(std::move(piece));
          }
          const std::optional<Tensor>* g = nullptr;
          if (const int64_t p = ProducerOf(id); p >= 0) {
            g = &grads.by_record[p];
          } else if (auto it = grads.loose.find(id); it != grads.loose.end()) {
            g = &it->second;
          }
          if (g != nullptr && g->has_value()) Accumulate(result[i], **g);
        }
      }
    }
    // A source reached densely as well sums its slices into the dense
    // gradient (TF densifies a mixed sum too).
    for (size_t i = 0; i < sources.size(); ++i) {
      if (!result[i].has_value() || slices[i].empty()) continue;
      for (const IndexedSlices& piece : slices[i]) result[i] = Add(*result[i], piece.ToDense());
      slices[i].clear();
    }
    if (unconnected == UnconnectedGradients::kZero) {
      for (size_t i = 0; i < sources.size(); ++i) {
        if (!result[i].has_value() && slices[i].empty()) {
          result[i] = Zeros(sources[i].shape, sources[i].dtype);
        }
      }
    }
  }
  std::vector<std::optional<GradientValue>> values(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    if (!slices[i].empty()) {
      values[i] = ConcatSlices(slices[i]);
    } else if (result[i].has_value()) {
      values[i] = std::move(*result[i]);
    }
  }
  return values;
}

namespace {

// The Source of each variable: the ids of its reads this tape watched.
template <typename Impl>
std::vector<Source> VariableSources(const Impl& impl, std::span<const Variable* const> sources) {
  std::vector<Source> resolved;
  resolved.reserve(sources.size());
  for (const Variable* variable : sources) {
    EAGER_CHECK(variable != nullptr, "GradientTape.gradient: source ", resolved.size(),
                " is a null Variable pointer");
    Source source{{}, variable->shape(), variable->dtype()};
    if (auto it = impl.variable_index.find(variable); it != impl.variable_index.end()) {
      source.ids = impl.variables[it->second].reads;
    }
    resolved.push_back(std::move(source));
  }
  return resolved;
}

std::vector<Source> TensorSources(std::span<const Tensor> sources) {
  std::vector<Source> resolved;
  resolved.reserve(sources.size());
  for (const Tensor& t : sources) resolved.push_back({{t.id()}, t.shape(), t.dtype()});
  return resolved;
}

std::span<const Tensor> OneOrNone(const std::optional<Tensor>& t) {
  return t.has_value() ? std::span<const Tensor>(&*t, 1) : std::span<const Tensor>();
}

}  // namespace

std::vector<std::optional<Tensor>> GradientTape::Gradient(
    const Tensor& target, std::span<const Variable* const> sources,
    UnconnectedGradients unconnected, const std::optional<Tensor>& output_gradient) {
  return Gradient(std::span<const Tensor>(&target, 1), sources, unconnected,
                  OneOrNone(output_gradient));
}

std::vector<std::optional<Tensor>> GradientTape::Gradient(
    const Tensor& target, std::span<const Tensor> sources, UnconnectedGradients unconnected,
    const std::optional<Tensor>& output_gradient) {
  return Gradient(std::span<const Tensor>(&target, 1), sources, unconnected,
                  OneOrNone(output_gradient));
}

namespace {

// The dense gradients of a Differentiate call that kept no slices.
std::vector<std::optional<Tensor>> DenseOnly(std::vector<std::optional<GradientValue>> values) {
  std::vector<std::optional<Tensor>> dense(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].has_value()) dense[i] = std::get<Tensor>(std::move(*values[i]));
  }
  return dense;
}

}  // namespace

std::vector<std::optional<Tensor>> GradientTape::Gradient(
    std::span<const Tensor> targets, std::span<const Variable* const> sources,
    UnconnectedGradients unconnected, std::span<const Tensor> output_gradients) {
  std::vector<Source> resolved = VariableSources(*impl_, sources);
  return DenseOnly(impl_->DifferentiateAndRelease(
      this, impl_->ResolveTargets(targets, output_gradients), resolved, unconnected));
}

std::vector<std::optional<Tensor>> GradientTape::Gradient(
    std::span<const Tensor> targets, std::span<const Tensor> sources,
    UnconnectedGradients unconnected, std::span<const Tensor> output_gradients) {
  return DenseOnly(impl_->DifferentiateAndRelease(
      this, impl_->ResolveTargets(targets, output_gradients), TensorSources(sources), unconnected));
}

std::vector<std::optional<GradientValue>> GradientTape::GradientKeepingSlices(
    const Tensor& target, std::span<const Variable* const> sources,
    UnconnectedGradients unconnected) {
  std::vector<Source> resolved = VariableSources(*impl_, sources);
  return impl_->DifferentiateAndRelease(this, impl_->ResolveTargets({&target, 1}, {}), resolved,
                                        unconnected, /*keep_slices=*/true);
}

std::vector<std::optional<GradientValue>> GradientTape::Impl::DifferentiateAndRelease(
    GradientTape* tape, const std::vector<Target>& targets, const std::vector<Source>& sources,
    UnconnectedGradients unconnected, bool keep_slices) {
  // A non-persistent tape is spent either way; its records should not
  // outlive the call.
  struct ReleaseAtExit {
    Impl* impl;
    GradientTape* tape;
    ~ReleaseAtExit() {
      if (impl->used) impl->Release(tape);
    }
  } release{this, tape};
  return Differentiate(tape, targets, sources, unconnected, keep_slices);
}

std::optional<Tensor> GradientTape::Gradient(const Tensor& target, const Variable& source) {
  const Variable* sources[] = {&source};
  return Gradient(target, std::span<const Variable* const>(sources))[0];
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
