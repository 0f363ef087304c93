#include "ops/functional_ops.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "ops/op_def.h"
#include "ops/session.h"
#include "runtime/function_library.h"
#include "runtime/graph.h"
#include "runtime/variable.h"

namespace eager {
namespace internal {

namespace {
thread_local int64_t loop_limit = 0;  // 0: none
}  // namespace

ScopedLoopLimit::ScopedLoopLimit(int64_t iterations) : previous_(loop_limit) {
  if (iterations > 0 && (loop_limit == 0 || iterations < loop_limit)) loop_limit = iterations;
}
ScopedLoopLimit::~ScopedLoopLimit() { loop_limit = previous_; }

int64_t LoopIterationLimit() { return loop_limit; }

namespace {
// steady_clock nanoseconds; 0: no deadline.
thread_local int64_t loop_deadline_ns = 0;
thread_local int64_t loop_timeout_ms = 0;  // the timeout that set it, for messages

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

ScopedLoopDeadline::ScopedLoopDeadline(int64_t timeout_ms)
    : previous_deadline_ns_(loop_deadline_ns), previous_timeout_ms_(loop_timeout_ms) {
  if (timeout_ms <= 0) return;
  // Saturate: a timeout of years must not wrap the deadline into the past.
  constexpr int64_t kMaxMs = std::numeric_limits<int64_t>::max() / 2'000'000;
  const int64_t deadline = NowNs() + std::min(timeout_ms, kMaxMs) * 1'000'000;
  if (loop_deadline_ns == 0 || deadline < loop_deadline_ns) {
    loop_deadline_ns = deadline;
    loop_timeout_ms = timeout_ms;
  }
}
ScopedLoopDeadline::~ScopedLoopDeadline() {
  loop_deadline_ns = previous_deadline_ns_;
  loop_timeout_ms = previous_timeout_ms_;
}

void CheckLoopDeadline(const std::string& loop, int64_t iterations) {
  if (loop_deadline_ns == 0 || NowNs() < loop_deadline_ns) return;
  throw DeadlineExceededError(StrCat(
      loop, " did not end within the Run's deadline of ", loop_timeout_ms,
      " ms (SessionOptions::operation_timeout_in_ms); stopped after ", iterations, " iterations"));
}

}  // namespace internal

namespace {

// One argument or result of a call: a value, or a resource handle.
using CallArg = internal::CallArgument;

// A call's arguments belong to its frame: each _Arg node (one per argument,
// run once per call) moves its value out, so that the body holds the only
// reference to what the caller gave away (a While's loop variables).
struct CallFrame {
  const std::string* function = nullptr;
  std::vector<CallArg>* args = nullptr;
};

// The frames of the calls running on this thread, innermost last. A body's
// Session runs on the calling thread, so its _Arg nodes read the top one.
thread_local std::vector<CallFrame> frames;
thread_local int call_depth = 0;

// Entered for the run of one body: its frame on top, one level deeper.
class EnterCall {
 public:
  explicit EnterCall(CallFrame frame) {
    frames.push_back(frame);
    ++call_depth;
  }
  ~EnterCall() {
    frames.pop_back();
    --call_depth;
  }
  EnterCall(const EnterCall&) = delete;
  EnterCall& operator=(const EnterCall&) = delete;
};

std::string Where(const NodeContext& c) {
  return StrCat("node '", c.node.name, "' (", c.node.op, ")");
}

NodeOutputs RunArg(const NodeContext& c) {
  if (frames.empty()) {
    throw InvalidArgumentError(StrCat(Where(c),
                                      " is a function's input argument; it runs only inside a "
                                      "call of the function (StatefulPartitionedCall)"));
  }
  const CallFrame& frame = frames.back();
  const int64_t index = c.attrs.GetInt("index");
  if (index < 0 || static_cast<size_t>(index) >= frame.args->size()) {
    throw InvalidArgumentError(StrCat(Where(c), " of function '", *frame.function, "' has index ",
                                      index, "; the call passes ", frame.args->size(),
                                      " arguments"));
  }
  CallArg& arg = (*frame.args)[static_cast<size_t>(index)];
  if (Tensor* t = std::get_if<Tensor>(&arg)) return {{std::move(*t)}, nullptr};
  return {{}, std::get<Resource*>(arg)};
}

// One function as a calling node runs it: its body graph and the Session
// that runs it, planned on the node's first run and kept across runs.
struct FunctionRunner {
  const FunctionDefinition* f = nullptr;
  FunctionBody body;
  std::unique_ptr<Session> session;
  std::vector<Fetch> fetches;  // the value outputs, then the control outputs
  // Per output: the input argument a resource output passes through (a
  // loop's handle), or -1 for a value output.
  std::vector<int> passthrough;
};

struct CallState final : NodeState {
  std::map<std::string, std::unique_ptr<FunctionRunner>, std::less<>> runners;
};

// The runner of function `name` for node `c` (made on first use).
FunctionRunner& Runner(const NodeContext& c, const std::string& name) {
  const std::shared_ptr<const FunctionLibrary>& library = c.graph.functions();
  if (library == nullptr) {
    throw NotFoundError(
        StrCat(Where(c), " calls function '", name, "', but its graph has no function library"));
  }
  if (*c.state == nullptr) *c.state = std::make_unique<CallState>();
  auto& runners = static_cast<CallState&>(**c.state).runners;
  if (auto it = runners.find(name); it != runners.end()) return *it->second;
  const FunctionDefinition& f = library->Get(name, c.node.name);
  auto r = std::make_unique<FunctionRunner>();
  r->f = &f;
  r->body = InstantiateFunction(f, library);
  for (size_t i = 0; i < f.outputs.size(); ++i) {
    if (f.outputs[i].tf_type != kTfResourceType) {
      r->passthrough.push_back(-1);
      r->fetches.emplace_back(r->body.outputs[i]);
      continue;
    }
    // A handle result must be one of the arguments (a loop variable):
    // eager's handles are the caller's resources, a body makes none.
    const NodeInput out = ParseNodeInput(r->body.outputs[i]);
    int arg = -1;
    for (size_t a = 0; a < f.inputs.size(); ++a) {
      if (f.inputs[a].name == out.node) arg = static_cast<int>(a);
    }
    if (arg < 0) {
      throw UnimplementedError(StrCat("function '", f.name, "' returns the resource handle '",
                                      r->body.outputs[i], "' as output '", f.outputs[i].name,
                                      "', which is none of its arguments; eager passes handles "
                                      "only through"));
    }
    r->passthrough.push_back(arg);
  }
  for (const std::string& op : r->body.control_outputs) {
    r->fetches.emplace_back(r->body.graph->OperationByName(op));
  }
  // TF2 places functions softly: a body written on a GPU machine runs here.
  r->session =
      std::make_unique<Session>(*r->body.graph, SessionOptions{.allow_soft_placement = true});
  return *runners.emplace(name, std::move(r)).first->second;
}

// Checks `args` against the function's signature: count, handles where it
// takes resources, dtypes of values.
void CheckArgs(const NodeContext& c, const FunctionDefinition& f,
               const std::vector<CallArg>& args) {
  size_t handles = 0, want_handles = 0;
  for (const CallArg& a : args) handles += std::holds_alternative<Resource*>(a);
  for (const FunctionArg& a : f.inputs) want_handles += a.tf_type == kTfResourceType;
  if (args.size() != f.inputs.size() || handles != want_handles) {
    throw InvalidArgumentError(
        StrCat(Where(c), " calls function '", f.name, "' with ", handles, " variable handles and ",
               args.size() - handles, " values; the function takes ", want_handles, " handles and ",
               f.inputs.size() - want_handles, " values (", f.inputs.size(), " arguments)"));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const FunctionArg& arg = f.inputs[i];
    const bool handle = std::holds_alternative<Resource*>(args[i]);
    if (handle != (arg.tf_type == kTfResourceType)) {
      throw InvalidArgumentError(
          StrCat(Where(c), ": argument ", i, " ('", arg.name, "') of function '", f.name, "' is ",
                 handle ? "a value" : "a resource handle", "; the call passes ",
                 handle ? "a variable handle" : "a value"));
    }
    if (handle) continue;
    const DType got = std::get<Tensor>(args[i]).dtype();
    const std::optional<DType> want = DTypeFromTfDataType(arg.tf_type);
    if (want && got != *want) {
      throw InvalidArgumentError(StrCat(Where(c), ": argument '", arg.name, "' of function '",
                                        f.name, "' is ", *want, "; the call passes a ", got,
                                        " tensor"));
    }
  }
}

// Runs function `r` on `args` for node `c`: its outputs, in order. The
// body takes the argument values (a caller keeping them passes a copy).
std::vector<CallArg> Invoke(const NodeContext& c, FunctionRunner& r, std::vector<CallArg> args) {
  const FunctionDefinition& f = *r.f;
  CheckArgs(c, f, args);
  if (call_depth >= kMaxFunctionCallDepth) {
    throw InvalidArgumentError(StrCat(Where(c), " calls function '", f.name, "' at call depth ",
                                      call_depth + 1, ", deeper than ", kMaxFunctionCallDepth,
                                      ": the function library recurses (or nests too deeply)"));
  }
  std::vector<std::optional<Tensor>> values;
  try {
    const EnterCall enter({&f.name, &args});
    values = r.session->Run(r.fetches);
  } catch (const Error& e) {
    ThrowError(e.code(), StrCat(e.what(), "\n\tin function '", f.name, "' called by ", Where(c)));
  }
  std::vector<CallArg> out;
  out.reserve(r.passthrough.size());
  size_t next = 0;
  for (int arg : r.passthrough) {
    if (arg >= 0) {
      out.push_back(args[static_cast<size_t>(arg)]);
    } else {
      out.emplace_back(*values[next++]);
    }
  }
  return out;
}

// The node's data inputs from `first` on, in order: handles where the
// function `f` takes resources (the Session passed them as refs), values
// elsewhere; any left over after f's arguments follow (CheckArgs then
// reports the counts).
std::vector<CallArg> NodeArgs(const NodeContext& c, const FunctionDefinition& f, size_t first) {
  std::vector<CallArg> args;
  size_t next_ref = 0, next_value = first;
  for (const FunctionArg& arg : f.inputs) {
    if (arg.tf_type == kTfResourceType) {
      if (next_ref == c.refs.size()) break;
      args.emplace_back(c.refs[next_ref++]);
    } else {
      if (next_value == c.inputs.size()) break;
      args.emplace_back(c.inputs[next_value++]);
    }
  }
  for (; next_ref < c.refs.size(); ++next_ref) args.emplace_back(c.refs[next_ref]);
  for (; next_value < c.inputs.size(); ++next_value) args.emplace_back(c.inputs[next_value]);
  return args;
}

// The node's outputs. A handle result (a loop's variable, passed through)
// is a placeholder there (a float 0): a Session output is a value, and TF
// 2's graphs take the handle from the loop's input, never from its output.
NodeOutputs Outputs(std::vector<CallArg> results) {
  NodeOutputs out;
  out.values.reserve(results.size());
  for (CallArg& result : results) {
    if (Tensor* t = std::get_if<Tensor>(&result)) {
      out.values.push_back(std::move(*t));
    } else {
      out.values.emplace_back();
    }
  }
  return out;
}

const std::string& FunctionAttr(const NodeContext& c, const char* attr) {
  const std::string* name = AttrAs<std::string>(c.node.FindAttr(attr));
  if (name == nullptr) {
    throw InvalidArgumentError(StrCat(Where(c), " has no function name (attribute '", attr, "')"));
  }
  return *name;
}

NodeOutputs RunCall(const NodeContext& c) {
  FunctionRunner& r = Runner(c, FunctionAttr(c, "f"));
  return Outputs(Invoke(c, r, NodeArgs(c, *r.f, 0)));
}

// TF's truth of a predicate tensor (If, While's cond): a scalar's value is
// nonzero (a string's is non-empty); any other tensor is true when it has
// elements.
bool Truth(const NodeContext& c, const Tensor& t, std::string_view what) {
  if (t.shape().rank() != 0) return t.num_elements() > 0;
  switch (t.dtype()) {
    case DType::kBool:
      return t.data<bool>()[0];
    case DType::kFloat32:
      return t.data<float>()[0] != 0;
    case DType::kFloat64:
      return t.data<double>()[0] != 0;
    case DType::kInt32:
      return t.data<int32_t>()[0] != 0;
    case DType::kInt64:
      return t.data<int64_t>()[0] != 0;
    case DType::kString:
      return !t.data<std::string>()[0].empty();
    default:
      throw UnimplementedError(StrCat(Where(c), ": ", what, " is a ", t.dtype(),
                                      " scalar; eager takes bool, float, double, int32, int64 "
                                      "or string predicates"));
  }
}

NodeOutputs RunIf(const NodeContext& c) {
  if (c.inputs.empty()) {
    throw InvalidArgumentError(StrCat(Where(c), " has no predicate (input 0 'cond')"));
  }
  const bool taken = Truth(c, c.inputs[0], "the predicate");
  FunctionRunner& r = Runner(c, FunctionAttr(c, taken ? "then_branch" : "else_branch"));
  return Outputs(Invoke(c, r, NodeArgs(c, *r.f, 1)));
}

// TF's CaseOp: branch_index (an int32 scalar) picks the branch; one out
// of [0, number of branches) picks the last, the default branch of
// tf.switch_case.
NodeOutputs RunCase(const NodeContext& c) {
  const auto* branches = AttrAs<std::vector<std::string>>(c.node.FindAttr("branches"));
  if (branches == nullptr || branches->empty()) {
    throw InvalidArgumentError(
        StrCat(Where(c), " has no branch functions (attribute 'branches'); expected 1 or more"));
  }
  if (c.inputs.empty()) {
    throw InvalidArgumentError(StrCat(Where(c), " has no branch index (input 0 'branch_index')"));
  }
  const Tensor& index = c.inputs[0];
  if (index.dtype() != DType::kInt32 || index.rank() != 0) {
    throw InvalidArgumentError(StrCat(Where(c), ": branch_index must be an int32 scalar, got a ",
                                      index.dtype(), " tensor of shape ", index.shape()));
  }
  const int32_t i = index.data<int32_t>()[0];
  const size_t taken = i < 0 || static_cast<size_t>(i) >= branches->size() ? branches->size() - 1
                                                                           : static_cast<size_t>(i);
  FunctionRunner& r = Runner(c, (*branches)[taken]);
  std::vector<CallArg> results = Invoke(c, r, NodeArgs(c, *r.f, 1));
  if (const auto* tout = AttrAs<std::vector<DType>>(c.node.FindAttr("Tout"));
      tout != nullptr && tout->size() != results.size()) {
    throw InvalidArgumentError(StrCat(Where(c), ": branch ", taken, " ('", r.f->name, "') returns ",
                                      results.size(), " outputs; the node's Tout has ",
                                      tout->size()));
  }
  return Outputs(std::move(results));
}

NodeOutputs RunWhile(const NodeContext& c) {
  FunctionRunner& cond = Runner(c, FunctionAttr(c, "cond"));
  FunctionRunner& body = Runner(c, FunctionAttr(c, "body"));
  std::vector<CallArg> vars = NodeArgs(c, *body.f, 0);
  const int64_t limit = internal::loop_limit;
  for (int64_t iteration = 0;; ++iteration) {
    const std::vector<CallArg> pred = Invoke(c, cond, vars);  // a copy: vars go on
    if (pred.size() != 1 || !std::holds_alternative<Tensor>(pred[0])) {
      throw InvalidArgumentError(StrCat(Where(c), ": cond function '", cond.f->name,
                                        "' must return one tensor, returns ", pred.size(),
                                        " outputs"));
    }
    if (!Truth(c, std::get<Tensor>(pred[0]), StrCat("cond '", cond.f->name, "''s result"))) break;
    if (limit > 0 && iteration >= limit) {
      throw ResourceExhaustedError(
          StrCat(Where(c), ": the loop (cond '", cond.f->name, "', body '", body.f->name,
                 "') did not end within ", limit,
                 " iterations, SessionOptions::max_loop_iterations; TF would go on"));
    }
    internal::CheckLoopDeadline(
        StrCat(Where(c), ": the loop (cond '", cond.f->name, "', body '", body.f->name, "')"),
        iteration);
    // The body gets the loop variables, not a copy: a TensorList it sets an
    // item of each iteration is changed in place, not copied (ops/list_ops.h).
    const size_t num_vars = vars.size();
    std::vector<CallArg> next = Invoke(c, body, std::move(vars));
    if (next.size() != num_vars) {
      throw InvalidArgumentError(StrCat(Where(c), ": body function '", body.f->name, "' returns ",
                                        next.size(), " values for ", num_vars, " loop variables"));
    }
    vars = std::move(next);
  }
  return Outputs(std::move(vars));
}

}  // namespace

std::vector<std::optional<Tensor>> internal::RunWithArguments(
    Session& session, const std::vector<Fetch>& fetches, const std::string& name,
    const std::vector<CallArgument>& args) {
  if (call_depth >= kMaxFunctionCallDepth) {
    throw InvalidArgumentError(StrCat("'", name, "' runs at call depth ", call_depth + 1,
                                      ", deeper than ", kMaxFunctionCallDepth,
                                      ": loops and calls nest too deeply"));
  }
  // The body's _Arg nodes move their values out of the frame: give it a copy
  // (handles, not data), as the caller runs the body again with `args`.
  std::vector<CallArgument> frame_args = args;
  const EnterCall enter({&name, &frame_args});
  return session.Run(fetches);
}

const OpDef kArgOp = {.type = "_Arg", .run = RunArg};
const OpDef kPartitionedCallOp = {.type = "PartitionedCall",
                                  .num_inputs = OpDef::kVariadic,
                                  .run = RunCall,
                                  .num_outputs = OpDef::kVariadic,
                                  .handle_inputs = true};
const OpDef kStatefulPartitionedCallOp = {.type = "StatefulPartitionedCall",
                                          .num_inputs = OpDef::kVariadic,
                                          .run = RunCall,
                                          .num_outputs = OpDef::kVariadic,
                                          .handle_inputs = true};
const OpDef kIfOp = {.type = "If",
                     .num_inputs = OpDef::kVariadic,
                     .run = RunIf,
                     .num_outputs = OpDef::kVariadic,
                     .handle_inputs = true};
const OpDef kStatelessIfOp = {.type = "StatelessIf",
                              .num_inputs = OpDef::kVariadic,
                              .run = RunIf,
                              .num_outputs = OpDef::kVariadic,
                              .handle_inputs = true};
const OpDef kCaseOp = {.type = "Case",
                       .num_inputs = OpDef::kVariadic,
                       .run = RunCase,
                       .num_outputs = OpDef::kVariadic,
                       .handle_inputs = true};
const OpDef kStatelessCaseOp = {.type = "StatelessCase",
                                .num_inputs = OpDef::kVariadic,
                                .run = RunCase,
                                .num_outputs = OpDef::kVariadic,
                                .handle_inputs = true};
const OpDef kWhileOp = {.type = "While",
                        .num_inputs = OpDef::kVariadic,
                        .run = RunWhile,
                        .num_outputs = OpDef::kVariadic,
                        .handle_inputs = true};
const OpDef kStatelessWhileOp = {.type = "StatelessWhile",
                                 .num_inputs = OpDef::kVariadic,
                                 .run = RunWhile,
                                 .num_outputs = OpDef::kVariadic,
                                 .handle_inputs = true};

}  // namespace eager
