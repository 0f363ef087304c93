#include "ops/while_loop_ops.h"

#include <memory>
#include <string>
#include <vector>

#include "ops/functional_ops.h"
#include "ops/internal/loop_frames.h"
#include "ops/op_def.h"
#include "ops/session.h"
#include "runtime/variable.h"

namespace eager {
namespace {

using internal::CallArgument;

std::string Where(const NodeContext& c) {
  return StrCat("node '", c.node.name, "' (", c.node.op, ")");
}

// A loop as its step runs it: the frame's body graph and the Session that
// runs it, made on the step's first run and kept across runs.
struct LoopState final : NodeState {
  std::unique_ptr<internal::LoopFrames> frames;  // of the calling graph, as planned
  const internal::LoopFrame* frame = nullptr;
  internal::FrameBody body;
  std::unique_ptr<Session> session;
  std::vector<Fetch> cond;  // LoopCond's input
  std::vector<Fetch> next;  // the NextIterations' inputs, then their control inputs
  std::string loop_cond;    // its name, for messages
};

LoopState& StateOf(const NodeContext& c) {
  if (*c.state != nullptr) return static_cast<LoopState&>(**c.state);
  auto state = std::make_unique<LoopState>();
  state->frames = internal::LoopFrames::Analyze(c.graph);
  const int at = c.graph.FindNodeIndex(c.node.name);
  state->frame = state->frames == nullptr ? nullptr : state->frames->FrameAt(at);
  if (state->frame == nullptr) {
    throw InternalError(StrCat(Where(c), " stands for no while loop of its graph"));
  }
  state->body = internal::BuildFrameBody(c.graph, *state->frame);
  state->session = std::make_unique<Session>(*state->body.graph);
  state->cond.emplace_back(state->body.cond);
  for (const std::string& t : state->body.next) state->next.emplace_back(t);
  for (const std::string& op : state->body.next_ops) state->next.emplace_back(op);
  state->loop_cond = c.graph.node(state->frame->loop_cond).name;
  *c.state = std::move(state);
  return static_cast<LoopState&>(**c.state);
}

// A variable's value after the loop: a handle carried through reads its variable.
Tensor ValueOf(const NodeContext& c, const CallArgument& v) {
  if (const Tensor* t = std::get_if<Tensor>(&v)) return *t;
  Resource* r = std::get<Resource*>(v);
  if (auto* variable = dynamic_cast<Variable*>(r)) return variable->stored_value();
  throw UnimplementedError(StrCat(Where(c), ": a loop variable holds the handle of ",
                                  r->resource_kind(), " '", r->resource_name(),
                                  "'; eager's loop outputs are values"));
}

NodeOutputs RunWhileLoop(const NodeContext& c) {
  LoopState& s = StateOf(c);
  const internal::LoopFrame& frame = *s.frame;
  const std::string loop = StrCat("while loop '", frame.name, "'");
  // The Enters' values, in the frame's order (handles first).
  std::vector<CallArgument> args;
  size_t next_ref = 0, next_value = 0;
  for (const uint8_t handle : c.input_is_handle) {
    if (handle != 0) {
      args.emplace_back(c.refs[next_ref++]);
    } else {
      args.emplace_back(c.inputs[next_value++]);
    }
  }
  if (args.size() != frame.enters.size()) {
    throw InvalidArgumentError(StrCat(Where(c), ": the ", loop, " has ", frame.enters.size(),
                                      " Enter nodes but gets ", args.size(), " inputs"));
  }
  for (size_t k = 0; k < frame.enters.size(); ++k) {
    const Node& enter = c.graph.node(frame.enters[k]);
    const bool wants_handle = enter.op == "RefEnter" || !enter.attrs.Has("T");
    if (wants_handle && !std::holds_alternative<Resource*>(args[k])) {
      throw InvalidArgumentError(StrCat("node '", enter.name, "' (", enter.op, ") of the ", loop,
                                        " takes a variable reference or resource handle; its "
                                        "input gives a value"));
    }
  }
  const size_t num_enters = args.size();
  for (size_t v : s.body.initial_value) args.push_back(args[v]);
  const int64_t limit = internal::LoopIterationLimit();
  const auto run = [&](const std::vector<Fetch>& fetches) {
    try {
      return internal::RunWithArguments(*s.session, fetches, frame.name, args);
    } catch (const Error& e) {
      ThrowError(e.code(), StrCat(e.what(), "\n\tin the ", loop, " of ", Where(c)));
    }
  };
  for (int64_t iteration = 0;; ++iteration) {
    const Tensor pred = *run(s.cond)[0];
    if (pred.dtype() != DType::kBool || pred.num_elements() != 1 || pred.rank() != 0) {
      throw InvalidArgumentError(StrCat("LoopCond '", s.loop_cond, "' of the ", loop,
                                        " must get a bool scalar, got a ", pred.dtype(),
                                        " tensor of shape ", pred.shape()));
    }
    if (!pred.data<bool>()[0]) break;
    if (limit > 0 && iteration >= limit) {
      throw ResourceExhaustedError(
          StrCat(Where(c), ": the ", loop, " (LoopCond '", s.loop_cond, "') did not end within ",
                 limit, " iterations, SessionOptions::max_loop_iterations; TF would go on"));
    }
    internal::CheckLoopDeadline(StrCat(Where(c), ": the ", loop, " (LoopCond '", s.loop_cond, "')"),
                                iteration);
    std::vector<std::optional<Tensor>> next = run(s.next);
    for (size_t v = 0; v < s.body.next.size(); ++v) args[num_enters + v] = std::move(*next[v]);
  }
  NodeOutputs out;
  out.values.reserve(frame.exits.size());
  for (const int v : frame.exit_merge) {
    out.values.push_back(ValueOf(c, args[num_enters + static_cast<size_t>(v)]));
  }
  return out;
}

NodeOutputs RunOutsideFrame(const NodeContext& c) {
  throw InvalidArgumentError(
      StrCat(Where(c), " runs only inside a while loop's frame, as part of its loop"));
}

NodeOutputs RunInFrame(const NodeContext& c) {
  throw InvalidArgumentError(
      StrCat(Where(c),
             " is inside a while loop: it runs only as part of its loop, whose Exit nodes "
             "give the loop's results; it cannot be fetched or run on its own"));
}

}  // namespace

const OpDef kEnterOp = {.type = "Enter", .num_inputs = 1, .run = RunOutsideFrame};
const OpDef kRefEnterOp = {
    .type = "RefEnter", .num_inputs = 1, .run = RunOutsideFrame, .ref_inputs = 1};
const OpDef kExitOp = {.type = "Exit", .num_inputs = 1, .run = RunOutsideFrame};
const OpDef kRefExitOp = {
    .type = "RefExit", .num_inputs = 1, .run = RunOutsideFrame, .ref_inputs = 1};
const OpDef kNextIterationOp = {.type = "NextIteration", .num_inputs = 1, .run = RunOutsideFrame};
const OpDef kRefNextIterationOp = {
    .type = "RefNextIteration", .num_inputs = 1, .run = RunOutsideFrame, .ref_inputs = 1};
const OpDef kLoopCondOp = {.type = "LoopCond", .num_inputs = 1, .run = RunOutsideFrame};
const OpDef kRefMergeOp = {.type = "RefMerge",
                           .num_inputs = OpDef::kVariadic,
                           .num_outputs = 2,
                           .ref_inputs = 1,
                           .flow = OpDef::Flow::kMerge};
const OpDef kWhileLoopStepOp = {.type = internal::kWhileLoopStepType,
                                .num_inputs = OpDef::kVariadic,
                                .eager_only = true,
                                .run = RunWhileLoop,
                                .num_outputs = OpDef::kVariadic,
                                .handle_inputs = true};
const OpDef kInFrameStepOp = {
    .type = internal::kInFrameStepType, .eager_only = true, .run = RunInFrame};

}  // namespace eager
