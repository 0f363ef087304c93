#pragma once

// Session: runs parts of a Graph (tf.compat.v1.Session).
//
//   eager::Session sess(graph);
//   sess.Run(eager::GlobalVariablesInitializer());       // an Operation
//   eager::Tensor sum = sess.Run(result);                 // a symbolic Tensor -> its value
//   auto values = sess.Run({loss, train_op}, {{x, batch}});  // mixed; feeds
//   sess.Run("add:0");                                    // by name
//
// Run evaluates only the nodes the fetches need (their data and control
// inputs, transitively; a fed tensor's producer is not run) and each of them
// once per call, in dependency order. Every node type is an OpDef of the one
// op table (ops/op_def.h), found by the node's TF op type (FindOp: "Add"
// from an older graph runs AddV2's): ops with a kernel run through RunKernel
// as in eager mode; graph-only ones through their node kernel (Const,
// Placeholder (must be fed), PlaceholderWithDefault (its input unless fed),
// VariableV2 (its output is the Variable object, read when a consumer runs;
// uninitialized throws FailedPreconditionError "Attempting to use
// uninitialized value v2"), Assign/AssignAdd/AssignSub and ApplyAdam (write
// the Variables their reference inputs reach, also through a RefSwitch),
// NoOp). Only tf.cond's Switch/RefSwitch and Merge are the Session's own,
// with TF's dead tensors (ops/control_flow_ops.h): a node on an untaken
// branch does not run, and fetching its output throws InvalidArgumentError.
// TF1's while loops (Enter ... Exit frames) run as one step each, at the
// loop's first Exit (ops/while_loop_ops.h); a graph without them is planned
// as before. A kernel gets the node's attributes with TF's defaults for any
// the node omits (runtime/op_signature.h).
//
// Errors name the node: a missing feed ("You must feed a value for
// placeholder tensor 'x' ..."), a feed of the wrong dtype or shape, an op
// type eager does not implement (UnimplementedError, raised only when such a
// node must run), and any kernel error, which gets TF's "[[{{node add}}]]"
// suffix and keeps its kind.
//
// Variables' state lives in the Variable objects, so Sessions on one graph
// share it; a stateful kernel's own (RandomUniform's generator) is the
// Session's, one per node, kept across Run calls (NodeContext::state).
// The graph must outlive the Session. Not thread-safe.
//
// Plans are fused as TF's grappler remapper fuses a graph: a Conv2D or
// MatMul, its bias add and a Relu/Relu6/Elu/LeakyRelu run as one step of
// eager's _FusedConv2D/_FusedMatMul, and an inference batch normalization
// after a Conv2D is folded into its filter and bias, when nothing else in
// the run reads the tensors between them (ops/internal/graph_fusion.h says
// when, and why that computes the same values; SessionOptions::fuse_ops
// turns it off).
//
// What a Session keeps: for each kind of call (its fetches and fed
// tensors) a plan (ops/internal/run_plan.h) of the nodes it runs, in
// order, with their inputs found and their OpDefs, made when a Run first
// needs it and reused by every later call of that kind (a training loop
// finds no name and walks no graph after its first step); the Session
// keeps the most recently used plans, some 28 bytes per node they run
// (12 per node and 8 per input), and refers to the Graph's node records
// rather than copying them. Nodes never change once added, and nodes added
// to the graph later are found by the plans of later calls. A run's own
// bookkeeping is flat arrays over its plan, dropped when it returns; it
// recurses on nothing, so graphs millions of nodes deep run.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace eager {

namespace internal {
struct SessionState;  // ops/session.cc
}  // namespace internal

// One thing to fetch or feed: a graph tensor, an operation, or a name
// ("add:0" is a tensor, "init" an operation).
class Fetch {
 public:
  Fetch(const Tensor& tensor) : tensor_(tensor) {}              // NOLINT
  Fetch(const Operation& operation) : operation_(operation) {}  // NOLINT
  Fetch(std::string name) : name_(std::move(name)) {}           // NOLINT
  Fetch(const char* name) : name_(name) {}                      // NOLINT

  const std::optional<Tensor>& tensor() const { return tensor_; }
  const std::optional<Operation>& operation() const { return operation_; }
  const std::optional<std::string>& name() const { return name_; }

 private:
  std::optional<Tensor> tensor_;
  std::optional<Operation> operation_;
  std::optional<std::string> name_;
};

// Tensor -> value to use instead of computing it.
using Feeds = std::vector<std::pair<Fetch, Tensor>>;

// How a Session runs.
struct SessionOptions {
  // The most bytes one tensor that a node computes may take; a node whose
  // output would be larger throws ResourceExhaustedError naming the op, the
  // node and the shape before its kernel runs. 0: the machine's physical
  // memory (the limit without options). Not a bound on a run's total.
  int64_t memory_limit_bytes = 0;
  // Run Conv2D/MatMul + BiasAdd (+ Relu, Relu6, Elu, LeakyRelu) chains as
  // one fused kernel, as TF's grappler remapper does, and fold an inference
  // batch normalization after a Conv2D (FusedBatchNormV3, or Keras 3's
  // per-channel Mul and Add) into its filter and bias, when nothing else
  // reads their intermediate tensors (ops/internal/graph_fusion.h). The
  // values are the unfused nodes' (a convolution's to float32 rounding:
  // oneDNN adds its bias inside the kernel). false: every node runs alone,
  // in the functions the graph calls too (their bodies' Sessions).
  bool fuse_ops = true;
  // The most iterations one While node (ops/functional_ops.h) or one run of
  // a TF1 while loop (ops/while_loop_ops.h) may run; one that goes on
  // throws ResourceExhaustedError naming the node or the loop. 0: no bound
  // (TF's semantics). Functions the graph calls and loop bodies keep it.
  int64_t max_loop_iterations = 0;
  // TF's ConfigProto.operation_timeout_in_ms, as a bound on loops: a While
  // node or a TF1 while loop still running this many milliseconds after its
  // Run began stops with DeadlineExceededError naming the node or the loop
  // (checked once per iteration, so a bound a crafted loop cannot outrun
  // where max_loop_iterations would let slow iterations go on). 0: none.
  // Functions the graph calls and loop bodies keep the Run's deadline.
  int64_t operation_timeout_in_ms = 0;
  // TF's ConfigProto.allow_soft_placement. Eager computes on this process's
  // CPU; a node placed on another device type or index ("/device:GPU:0",
  // "/cpu:1") is InvalidArgumentError in TF's words when a Run needs it
  // (before anything runs), unless this is true: then it runs on the CPU.
  // A job, replica or task other than this process's is an error either
  // way. (ImportMetaGraph's clear_devices drops the devices instead; the
  // functions a graph calls are placed softly, as TF2's.)
  bool allow_soft_placement = false;
};

class Session {
 public:
  explicit Session(Graph& graph, SessionOptions options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // The value of one graph tensor.
  Tensor Run(const Tensor& fetch, const Feeds& feeds = {});
  Tensor Run(const char* tensor_name, const Feeds& feeds = {});
  // Runs one operation (a none Operation does nothing).
  void Run(const Operation& target, const Feeds& feeds = {});
  // Any mix: one result per fetch, nullopt for an operation.
  std::vector<std::optional<Tensor>> Run(const std::vector<Fetch>& fetches,
                                         const Feeds& feeds = {});

  Graph& graph() const { return graph_; }

  // How many graph nodes the last Run ran through a fused kernel (a fused
  // Conv2D + BiasAdd + Relu counts 3); 0 when none was fused, or when a
  // fused chain's Add turned out not to add a bias vector and its nodes
  // ran one by one. Includes the nodes fused inside the functions the run
  // called (a TF 2 SavedModel's signature is a call).
  int64_t last_run_fused_nodes() const;

 private:
  Graph& graph_;
  SessionOptions options_;
  std::unique_ptr<internal::SessionState> state_;
};

}  // namespace eager
