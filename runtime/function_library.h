#pragma once

// FunctionLibrary: a GraphDef's `library` (TF's FunctionDefLibrary), the
// functions TF 2.x graphs call (tf.function's concrete functions, the
// branches of If and the bodies of While), in std types only, so that
// saving/ reads them and ops/ runs them without seeing each other.
//
//   FunctionDefinition f = ...;            // from a FunctionDef (saving/)
//   auto library = std::make_shared<FunctionLibrary>();
//   library->Add(std::move(f));
//   graph.SetFunctionLibrary(library);      // StatefulPartitionedCall nodes find it
//
// A FunctionDefinition keeps the FunctionDef as TF writes it: its
// signature's input and output arguments, its body nodes with inputs in
// TF's function-body notation ("x" for input argument x, "node:out_arg:i"
// for entry i of output argument out_arg of a body node, "^node"), `ret`
// (output argument -> body tensor) and `control_ret` (control output ->
// body node). InstantiateFunction turns it into a Graph a Session runs: an
// `_Arg` node per input argument (named as the argument, attribute "index";
// its value is the caller's, ops/functional_ops.h), the body nodes with
// their inputs in graph notation ("node:3"), and the fetches of its outputs
// and control outputs.
//
// Everything here is file-supplied: the instantiation walks no node
// recursively (it looks at each node's own inputs only), and names an
// unknown node, argument or output argument, with the function and the body
// node, as InvalidArgumentError.

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/graph.h"

namespace eager {

// An argument of a function's signature: a fixed type (TF's DataType number;
// 20 is DT_RESOURCE, a variable handle) or, in a polymorphic function, the
// attributes its type and length come from.
struct FunctionArg {
  std::string name = {};
  int tf_type = 0;
  std::string type_attr = {};
  std::string number_attr = {};
  std::string type_list_attr = {};
};

// TF's DataType number of a resource handle (types.proto DT_RESOURCE).
inline constexpr int kTfResourceType = 20;

// One FunctionDef.
struct FunctionDefinition {
  std::string name = {};  // "__inference_signature_wrapper_63"
  std::vector<FunctionArg> inputs = {};
  std::vector<FunctionArg> outputs = {};
  std::vector<std::string> control_outputs = {};
  std::vector<Node> nodes = {};                         // inputs in function-body notation
  std::map<std::string, std::string> ret = {};          // output argument -> body tensor
  std::map<std::string, std::string> control_ret = {};  // control output -> body node
  bool is_stateful = false;
};

class FunctionLibrary {
 public:
  // Adds `function`; InvalidArgumentError when one of that name is there.
  void Add(FunctionDefinition function);
  // The function called `name`, or nullptr.
  const FunctionDefinition* Find(std::string_view name) const;
  // The function called `name`; NotFoundError naming `caller` (a node) and
  // the closest function names when there is none.
  const FunctionDefinition& Get(std::string_view name, std::string_view caller) const;
  size_t size() const { return functions_.size(); }
  // Every function's name, sorted.
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, FunctionDefinition, std::less<>> functions_;
};

// A function as a graph: what a call runs.
struct FunctionBody {
  std::unique_ptr<Graph> graph;
  // Per output argument, in signature order (each one tensor): the tensor
  // name in graph notation ("dense/BiasAdd:0", "x:0" for an input passed
  // through).
  std::vector<std::string> outputs;
  // The control outputs' nodes (control_ret): TF 2's automatic control
  // dependencies list every stateful op there, so a call runs them.
  std::vector<std::string> control_outputs;
};

// `function` as a graph that shares `library` (its own calls find it).
// Throws InvalidArgumentError naming the function and the body node for an
// input or ret naming no node or argument, an output argument the node's op
// does not have, a body node named like an argument, or an output argument
// that is a list (N * T; concrete functions have none).
FunctionBody InstantiateFunction(const FunctionDefinition& function,
                                 std::shared_ptr<const FunctionLibrary> library);

}  // namespace eager
