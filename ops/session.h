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
// once per call, in dependency order. Ops run through RunKernel with the
// kernels eager uses, found by the node's TF op type (FindOp: "Add" from an
// older graph runs AddV2's). Graph-only nodes: Const, Placeholder (must be
// fed), VariableV2 (reads the Variable object; uninitialized throws
// FailedPreconditionError "Attempting to use uninitialized value v2"),
// Assign/AssignAdd/AssignSub (write the Variable object; their variable
// may come through a RefSwitch), NoOp, PlaceholderWithDefault (its input
// unless fed), and tf.cond's Switch/RefSwitch and Merge with TF's dead
// tensors (ops/control_flow_ops.h): a node on an untaken branch does not
// run, and fetching its output throws InvalidArgumentError.
//
// Errors name the node: a missing feed ("You must feed a value for
// placeholder tensor 'x' ..."), a feed of the wrong dtype or shape, an op
// type eager does not implement (UnimplementedError, raised only when such a
// node must run), and any kernel error, which gets TF's "[[{{node add}}]]"
// suffix and keeps its kind.
//
// State lives in the Variable objects, so Sessions on one graph share it.
// The graph must outlive the Session. Not thread-safe. A Session resolves
// each node's input names ("x:1") to node indices once, when the node first
// runs, and keeps them: nodes never change once added, and nodes added to the
// graph later are resolved when they run.

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
struct ResolvedInputs;  // ops/session.cc
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

class Session {
 public:
  explicit Session(Graph& graph);
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

 private:
  Graph& graph_;
  std::unique_ptr<internal::ResolvedInputs> inputs_;
};

}  // namespace eager
