#pragma once

// RunPlan: what a Session works out once for one kind of Session::Run call
// (its fetches, and which tensors are fed) and reuses for every later call
// of that kind: the nodes to run, in dependency order, their inputs found
// (as earlier steps of the plan, or feeds), and their OpDefs. A training
// loop runs the same fetches many times; its runs then look up no name and
// walk no graph. Not part of the public API.
//
// Compact on purpose (issue 27: graphs of millions of nodes): a step is 12
// bytes, an input 8, and a plan refers to the Graph's node records (their
// names, attributes) instead of copying them, so a plan of a chain of
// binary ops is some 28 bytes per node. A run's own bookkeeping is flat
// arrays over the plan's steps, not over the graph's nodes.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "ops/op_def.h"
#include "runtime/attrs.h"
#include "runtime/graph.h"

namespace eager::internal {

class LoopFramesCache;  // ops/internal/loop_frames.h

// A node index and an output index (-1: the node as an operation).
using Endpoint = std::pair<int, int>;

// Where one input of a step comes from: output `port` of an earlier step,
// or (from < 0) feed number ~from of the plan.
struct PlanInput {
  static constexpr int32_t kControl = -1;  // `port` of a control input

  int32_t from = 0;
  int32_t port = 0;  // output index, or kControl

  bool fed() const { return from < 0; }
  size_t feed() const { return static_cast<size_t>(-1 - int64_t{from}); }
  size_t step() const { return static_cast<size_t>(from); }
  bool control() const { return port == kControl; }
};

// One node to run. Its inputs are RunPlan::inputs from the previous step's
// inputs_end up to its own, in the node's order (data inputs, then control).
struct PlanStep {
  static constexpr uint16_t kNoOp = 0xffff;  // eager lacks the node's op type
  // The node passed the checks made before its kernel first runs (layout,
  // attributes against TF's signature); not set while they throw.
  static constexpr uint8_t kChecked = 1;
  // Its kernel's attributes differ from the node's (TF's defaults added):
  // the Session keeps them, by node. Otherwise the kernel gets node.attrs.
  static constexpr uint8_t kOwnAttrs = 2;
  // Its inputs' dtypes matched its type attributes when it first ran.
  static constexpr uint8_t kTypesChecked = 4;
  // It stands for a chain of nodes run by one fused kernel: its FusedStep
  // in RunPlan::fused says which (ops/internal/graph_fusion.h).
  static constexpr uint8_t kFused = 8;

  int32_t node = 0;         // index in the graph
  uint32_t inputs_end = 0;  // into RunPlan::inputs
  uint16_t op = kNoOp;      // into RunPlan::ops
  uint8_t flags = 0;
};

// One fused step of a plan: the graph nodes it stands for, with what their
// kernels need. The step itself is the chain's last node (its outputs and
// the errors of a run name it).
struct FusedStep {
  int32_t step = 0;                 // in RunPlan::steps
  int32_t producer = 0;             // graph node: Conv2D or MatMul
  int32_t bias_add = 0;             // graph node: BiasAdd, Add or AddV2; -1: none (batch_norm's)
  int32_t batch_norm = -1;          // graph node: FusedBatchNormV3 after a Conv2D, or -1
  int32_t activation = -1;          // graph node, or -1
  bool bias_first = false;          // Add(bias, product) rather than Add(product, bias)
  bool relu_inside = false;         // the activation is Relu, done by the fused kernel
  const OpDef* fused_op = nullptr;  // kFusedConv2DOp or kFusedMatMulOp
  const OpDef* producer_op = nullptr;
  const OpDef* bias_op = nullptr;
  const OpDef* activation_op = nullptr;                // nullptr without an activation
  Attrs fused_attrs;                                   // the producer's, with "relu"
  Attrs producer_attrs, bias_attrs, activation_attrs;  // each node's kernel attrs
  Attrs batch_norm_attrs;                              // with TF's defaults
  // A per-channel Mul then Add/AddV2 after a Conv2D [+ BiasAdd] (Keras 3's
  // inference BatchNormalization, tf.nn.batch_normalization): graph nodes,
  // or -1; which operand of each is the vector; their ops and attrs.
  int32_t scale_mul = -1, offset_add = -1;
  bool scale_first = false, offset_first = false;
  const OpDef* mul_op = nullptr;
  const OpDef* add_op = nullptr;
  Attrs mul_attrs, add_attrs;
};

struct RunPlan {
  std::vector<Endpoint> fetches;  // the key: the fetches asked for, in order,
  std::vector<Endpoint> feeds;    // and the fed tensors, sorted, unique
  std::vector<PlanStep> steps;    // inputs before the steps that read them
  std::vector<PlanInput> inputs;
  std::vector<const OpDef*> ops;   // the distinct OpDefs of the steps
  std::vector<PlanInput> results;  // per fetch: its step (port -1 for an operation) or feed
  bool has_control_flow = false;   // a Switch or Merge is among the steps
  std::vector<FusedStep> fused;    // by step, of the steps with PlanStep::kFused
  bool fusion_done = false;        // FuseRunPlan has seen this plan
  bool devices_checked = false;    // every step's device is one this process has

  std::span<const PlanInput> InputsOf(size_t step) const {
    const size_t begin = step == 0 ? 0 : steps[step - 1].inputs_end;
    return std::span<const PlanInput>(inputs).subspan(begin, steps[step].inputs_end - begin);
  }
  // The FusedStep of a step with PlanStep::kFused.
  const FusedStep& FusedAt(size_t step) const {
    const auto it = std::lower_bound(
        fused.begin(), fused.end(), step,
        [](const FusedStep& f, size_t s) { return static_cast<size_t>(f.step) < s; });
    return *it;
  }
  // nullptr when eager lacks the op type.
  const OpDef* OpOf(size_t step) const {
    const uint16_t op = steps[step].op;
    return op == PlanStep::kNoOp ? nullptr : ops[op];
  }
};

// The plan for running `fetches` (endpoints of `graph`) with the tensors
// `feeds` (sorted, unique) fed: the fetches' nodes and, transitively, the
// producers of their data and control inputs, except a fed tensor's
// producer (run only when something else needs it). Throws, naming the
// nodes, InvalidArgumentError for an input naming no node or a cycle, and
// UnimplementedError listing every node whose op type eager lacks (TF
// builds every kernel of the pruned graph before running any) unless it
// sits behind a Switch (up to its Merge), where it may not run.
// With `frames`, a TF1 while loop is one step (ops/internal/loop_frames.h):
// its replacement node records are planned instead of the graph's.
RunPlan BuildRunPlan(const Graph& graph, std::vector<Endpoint> fetches, std::vector<Endpoint> feeds,
                     LoopFramesCache* frames = nullptr);

// A Session's plans, most recently used first. Bounded, so that running
// many different fetches (every node of a large graph in turn) keeps no
// plan per call: at most kMaxPlans, of at most twice the graph's nodes
// (plus kSpareSteps) in all; the least recently used go first, never the
// one just asked for.
class RunPlanCache {
 public:
  static constexpr size_t kMaxPlans = 16;
  static constexpr size_t kSpareSteps = 65536;

  // The plan for `fetches` and `feeds` (sorted, unique), built when not
  // cached. A plan that fails to build is not kept (the graph may get the
  // missing node later). The reference stays valid until the next Get.
  RunPlan& Get(const Graph& graph, const std::vector<Endpoint>& fetches,
               const std::vector<Endpoint>& feeds, LoopFramesCache* frames = nullptr);
  size_t size() const { return plans_.size(); }

 private:
  std::vector<std::unique_ptr<RunPlan>> plans_;
};

}  // namespace eager::internal
