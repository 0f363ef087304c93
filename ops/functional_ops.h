#pragma once

// TF 2's function calls in graph mode: the nodes through which a graph runs
// a function of its library (runtime/function_library.h).
//
//   PartitionedCall / StatefulPartitionedCall   args... -> the function's outputs (attr f)
//   If / StatelessIf                            cond, args... -> then_branch(args) or
//                                               else_branch(args)
//   Case / StatelessCase                        branch_index, args... ->
//                                               branches[branch_index](args); an index out
//                                               of range runs the last branch, as TF's
//   While / StatelessWhile                      vars... -> vars = body(vars) while cond(vars)
//   _Arg                                        a function body's input argument
//
// A call runs its function's body graph (InstantiateFunction) in a Session
// of its own, made on the node's first run and kept in the node's state
// (NodeContext::state): a function is planned once per calling node and
// Session, not per call. The call's inputs reach the body's `_Arg` nodes
// through a call frame (TF's CallFrameInterface), pushed on this thread for
// the body's run; a resource input (a variable handle: the Variable itself,
// ops/resource_variable_ops.h) stays a handle inside the body, so the body's
// ReadVariableOp and AssignVariableOp reach the caller's variables
// (captured variables of a tf.function). The call's outputs are the body's
// `ret` tensors, in the signature's order; its control outputs (control_ret:
// every stateful op of a TF 2 function) run too.
//
// Errors name the calling node and the function: a graph without a library
// or a function it lacks (NotFoundError), inputs that do not match the
// function's signature in number or kind (InvalidArgumentError), and calls
// nested deeper than kMaxFunctionCallDepth (InvalidArgumentError: a
// function library that recurses, which TF refuses too, must not overflow
// the stack). An error inside the body keeps its kind and gets the call's
// node context after the body node's.
//
// Case's branch_index must be an int32 scalar, and the branch must return
// as many outputs as the node's Tout lists (InvalidArgumentError naming the
// node and the branch otherwise).
//
// If's predicate and While's cond result are true as TF's are: a scalar
// that is nonzero (a non-empty string), any other tensor that has
// elements. A loop runs until its cond is false, as TF's; a Session with
// SessionOptions::max_loop_iterations stops one that goes on longer with
// ResourceExhaustedError naming the node and its functions (a crafted file
// must not hang a server), and one with SessionOptions::
// operation_timeout_in_ms stops a loop still running when the Run's time is
// up with DeadlineExceededError naming the node. A loop's resource variables stay handles from
// one iteration to the next; a function that returns a handle it did not
// get as an argument is UnimplementedError.

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ops/session.h"
#include "runtime/resource.h"

namespace eager {

struct OpDef;

// Calls nested deeper than this are refused (each level is a Session run on
// the C++ stack).
inline constexpr int kMaxFunctionCallDepth = 64;

extern const OpDef kArgOp;
extern const OpDef kPartitionedCallOp;
extern const OpDef kStatefulPartitionedCallOp;
extern const OpDef kIfOp;
extern const OpDef kStatelessIfOp;
extern const OpDef kCaseOp;
extern const OpDef kStatelessCaseOp;
extern const OpDef kWhileOp;
extern const OpDef kStatelessWhileOp;

namespace internal {
// Lowers this thread's bound on a While's iterations to `iterations` (if
// positive and lower; none without a scope) until destroyed: what
// Session::Run sets from SessionOptions::max_loop_iterations, so that the
// bodies' own Sessions keep the caller's bound.
class ScopedLoopLimit {
 public:
  explicit ScopedLoopLimit(int64_t iterations);
  ~ScopedLoopLimit();
  ScopedLoopLimit(const ScopedLoopLimit&) = delete;
  ScopedLoopLimit& operator=(const ScopedLoopLimit&) = delete;

 private:
  int64_t previous_;
};

// This thread's bound on a loop's iterations (SessionOptions::
// max_loop_iterations of the Runs in progress); 0: none.
int64_t LoopIterationLimit();

// Sets this thread's loop deadline to `timeout_ms` from now (if positive and
// earlier than the one in force; none without a scope) until destroyed:
// what Session::Run sets from SessionOptions::operation_timeout_in_ms, so
// that the bodies' own Sessions keep the caller's deadline.
class ScopedLoopDeadline {
 public:
  explicit ScopedLoopDeadline(int64_t timeout_ms);
  ~ScopedLoopDeadline();
  ScopedLoopDeadline(const ScopedLoopDeadline&) = delete;
  ScopedLoopDeadline& operator=(const ScopedLoopDeadline&) = delete;

 private:
  int64_t previous_deadline_ns_;
  int64_t previous_timeout_ms_;
};

// Throws DeadlineExceededError "<loop> did not end within the Run's
// deadline..." when this thread's loop deadline has passed; `loop` names
// the loop's node (and its functions or frame), `iterations` says how far
// it got. Called by every loop once per iteration.
void CheckLoopDeadline(const std::string& loop, int64_t iterations);

// One argument of a body's run: a value, or a resource handle.
using CallArgument = std::variant<Tensor, Resource*>;

// Runs `fetches` of `session`, a body graph whose _Arg nodes take `args`
// (what a call does; TF1's while loops run their frames so,
// ops/while_loop_ops.h). `name` names the body in _Arg's errors. Calls
// nested deeper than kMaxFunctionCallDepth throw InvalidArgumentError.
std::vector<std::optional<Tensor>> RunWithArguments(Session& session,
                                                    const std::vector<Fetch>& fetches,
                                                    const std::string& name,
                                                    const std::vector<CallArgument>& args);
}  // namespace internal

}  // namespace eager
