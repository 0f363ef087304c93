#pragma once

// LoopFrames: TF1's while loops (control flow v1: tf.compat.v1.while_loop
// under disable_control_flow_v2) found in a graph and lowered, at plan
// time, into steps that a Session's static plan can run. Not part of the
// public API.
//
// A v1 loop is a cycle in the graph. For each loop variable TF builds
//
//   Enter(x) -> Merge(Enter, NextIteration) -> Switch(Merge, LoopCond(pred))
//     Switch:0 -> Exit                   (the value after the last iteration)
//     Switch:1 -> body ... -> NextIteration -> back into the Merge
//
// and an Enter with is_constant = true for each loop invariant; every node
// between the Enters and the Exits is in the loop's frame (its Enters'
// frame_name), nested loops in frames of their own.
//
// Why lowering rather than a frame-aware dynamic scheduler (TF's executor):
// the Session runs a static, topologically ordered plan that is fast for
// every graph without loops, and the loop's semantics are exactly those of
// the functional While (ops/functional_ops.h), which already runs. So each
// outermost frame becomes one step of the plan, standing at the frame's
// first Exit node: its inputs are the Enters' inputs, its outputs the
// Exits' values (the other Exits read it); the frame's own nodes are out of
// the plan (reached from outside they throw). When that step runs, it
// builds once (BuildFrameBody) a graph of the frame's nodes in which each
// Enter and each loop variable's Merge is an _Arg, the loop's Switches are
// gone (their true branch is the Merge's value) and LoopCond is an
// Identity, and runs it in a Session of its own, as While runs its
// functions: cond (LoopCond's input), and while it is true, the body (the
// NextIterations' inputs). A loop nested in the body is a frame of the
// body's graph, lowered again by the body's Session. A graph without loop
// nodes pays a scan of its op types when a plan is built, nothing per run.
//
// The lowering also checks the frames, as TF's executor does when it
// builds its frames; each check throws InvalidArgumentError naming a node:
// a cycle that passes through no NextIteration, a node whose inputs come
// from different frames, an Exit, NextIteration or LoopCond outside a
// frame, Enters of one frame_name entered from different frames, a
// NextIteration that feeds no Merge (or more than one), a frame without
// exactly one LoopCond, an Exit that does not read a loop Switch.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/graph.h"

namespace eager::internal {

// Whether `op` is one of the node types of a v1 loop's frame (Enter, Exit,
// NextIteration, LoopCond and their Ref twins): graphs without any are
// planned as before.
bool IsLoopNodeType(std::string_view op);

// The op type of the step that runs a whole loop ("_EagerWhileLoop"), and of
// a frame's node reached from outside its loop ("_EagerInFrame").
inline constexpr std::string_view kWhileLoopStepType = "_EagerWhileLoop";
inline constexpr std::string_view kInFrameStepType = "_EagerInFrame";

// One frame: a loop's nodes.
struct LoopFrame {
  std::string name = {};             // the Enters' frame_name
  int parent = -1;                   // index of the enclosing frame; -1: the graph's top level
  std::vector<int> enters = {};      // its Enter nodes: those taking handles (RefEnter, or no "T"
                                     // attribute: a resource) first, then by node index
  std::vector<int> exits = {};       // its Exit nodes, by node index
  std::vector<int> merges = {};      // its loop variables' Merge nodes
  std::vector<int> nexts = {};       // per merge: its NextIteration
  std::vector<int> exit_merge = {};  // per exit: the index in `merges` of the variable it gives
  int loop_cond = -1;
  std::vector<int> members = {};  // its nodes and those of frames nested in it (top-level frames)
};

class LoopFrames {
 public:
  // The frames of `graph`, checked; nullptr when it has no loop node.
  static std::unique_ptr<LoopFrames> Analyze(const Graph& graph);

  // The node record a plan uses instead of node `n`'s, or nullptr for its
  // own: the loop step at an outermost frame's first Exit, an Identity of
  // that step's output at its other Exits, and a node of type
  // kInFrameStepType (no inputs) for the frame's nodes.
  const Node* Replacement(int n) const {
    if (n < 0 || static_cast<size_t>(n) >= slot_.size() || slot_[static_cast<size_t>(n)] < 0) {
      return nullptr;
    }
    return &replacements_[static_cast<size_t>(slot_[static_cast<size_t>(n)])];
  }
  const std::vector<LoopFrame>& frames() const { return frames_; }
  // The outermost frame whose loop step stands at node `exit`, or nullptr.
  const LoopFrame* FrameAt(int exit) const;

 private:
  std::vector<LoopFrame> frames_;
  std::vector<Node> replacements_;
  std::vector<int32_t> slot_;  // per node: index into replacements_, or -1
};

// A Session's LoopFrames of its graph, found again only when nodes were
// added, and only once some node of the graph has a loop node type (each
// node's type is looked at once).
class LoopFramesCache {
 public:
  // nullptr while the graph has no loop node. Throws Analyze's errors.
  const LoopFrames* For(const Graph& graph) {
    for (const int n = graph.num_nodes(); scanned_ < n; ++scanned_) {
      any_ = any_ || IsLoopNodeType(graph.node(scanned_).op);
    }
    if (!any_) return nullptr;
    if (analyzed_ != scanned_) {
      frames_ = LoopFrames::Analyze(graph);
      analyzed_ = scanned_;
    }
    return frames_.get();
  }

 private:
  int scanned_ = 0;
  bool any_ = false;
  int analyzed_ = -1;
  std::unique_ptr<LoopFrames> frames_;
};

// A frame's nodes as a graph of their own, run once per iteration.
struct FrameBody {
  std::unique_ptr<Graph> graph;
  // Arguments (_Arg index): the Enters, in LoopFrame::enters order, then the
  // loop variables' current values, in LoopFrame::merges order.
  size_t num_enters = 0;
  std::vector<size_t> initial_value;  // per variable: the Enter (index) that starts it
  std::string cond;                   // LoopCond's input, "name:port"
  std::vector<std::string> next;      // per variable: its NextIteration's input
  std::vector<std::string> next_ops;  // the NextIterations' control inputs
};

// REQUIRES: `frame` is an outermost frame of LoopFrames::Analyze(graph).
FrameBody BuildFrameBody(const Graph& graph, const LoopFrame& frame);

}  // namespace eager::internal
