#include "autodiff/internal/inline_call.h"

#include <map>
#include <string_view>

#include "runtime/attrs.h"
#include "runtime/errors.h"
#include "runtime/function_library.h"

namespace eager::internal {
namespace {

// Ops that change state: their copy would repeat the change.
bool Assigns(std::string_view op) {
  return op.starts_with("Assign") || op.starts_with("ResourceApply") ||
         op.starts_with("ResourceScatter") || op.starts_with("Apply") || op == "DestroyResourceOp";
}

}  // namespace

bool IsInlinableCall(const std::string& op) {
  return op == "PartitionedCall" || op == "StatefulPartitionedCall";
}

bool IsIf(const std::string& op) { return op == "If" || op == "StatelessIf"; }

InlinedCall InlineCall(Graph& graph, int call, const std::string& prefix) {
  const Node& node = graph.node(call);  // chunks never move: stays valid
  const std::string* name = AttrAs<std::string>(node.FindAttr("f"));
  if (name == nullptr) {
    throw InvalidArgumentError(
        StrCat("Gradients: call node '", node.name, "' has no function name (attribute 'f')"));
  }
  std::vector<std::string> inputs;
  for (const std::string& input : node.inputs) {
    if (!ParseNodeInput(input).control) inputs.push_back(input);
  }
  return InlineFunction(graph, node, *name, inputs, prefix);
}

InlinedCall InlineFunction(Graph& graph, const Node& node, const std::string& function,
                           const std::vector<std::string>& inputs, const std::string& prefix) {
  const std::string* name = &function;
  if (graph.functions() == nullptr) {
    throw NotFoundError(StrCat("Gradients: node '", node.name, "' calls function '", *name,
                               "', but its graph has no function library"));
  }
  const FunctionDefinition& f = graph.functions()->Get(*name, node.name);
  const auto fail = [&](auto&&... what) {
    return UnimplementedError(StrCat("Gradients: node '", node.name, "' (", node.op,
                                     ") calls function '", f.name, "', ", what...));
  };
  if (f.outputs.size() != 1) {
    throw fail("which has ", f.outputs.size(),
               " outputs; gradients through calls of one output only");
  }
  if (inputs.size() != f.inputs.size()) {
    throw InvalidArgumentError(StrCat("Gradients: node '", node.name, "' calls function '", f.name,
                                      "' with ", inputs.size(), " inputs; it takes ",
                                      f.inputs.size()));
  }
  const FunctionBody body = InstantiateFunction(f, graph.functions());
  const Graph& g = *body.graph;

  InlinedCall result;
  // Body node name -> the node standing for it in `graph`, and for _Args
  // the exact tensor ("x:1").
  std::map<std::string, std::string, std::less<>> renamed;
  std::map<std::string, std::string, std::less<>> arg_tensor;
  std::map<int, size_t> handle_producers;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const NodeInput in = ParseNodeInput(inputs[i]);
    const int producer = graph.FindNodeIndex(in.node);
    if (producer < 0) {
      throw InvalidArgumentError(StrCat("Gradients: node '", node.name, "' has input '", inputs[i],
                                        "', but there is no node '", in.node, "'"));
    }
    if (f.inputs[i].tf_type == kTfResourceType) {
      if (!handle_producers.emplace(producer, i).second) {
        throw fail("passing the handle of node '", in.node, "' twice");
      }
      result.args.push_back(producer);
      arg_tensor[f.inputs[i].name] = inputs[i];
      continue;
    }
    Node identity{.name = prefix + f.inputs[i].name, .op = "Identity"};
    identity.inputs = {inputs[i]};
    const Node& p = graph.node(producer);
    if (static_cast<size_t>(in.index) < p.output_specs.size()) {
      identity.attrs = {{"T", p.output_specs[static_cast<size_t>(in.index)].dtype}};
      identity.output_specs = {p.output_specs[static_cast<size_t>(in.index)]};
    }
    result.args.push_back(graph.AddNode(std::move(identity)));
    arg_tensor[f.inputs[i].name] = prefix + f.inputs[i].name;
  }
  const auto rename = [&](const std::string& input) {
    const NodeInput in = ParseNodeInput(input);
    if (auto it = arg_tensor.find(in.node); it != arg_tensor.end()) return it->second;
    return NodeInputName(prefix + in.node, in.index);
  };
  for (int n = 0; n < g.num_nodes(); ++n) {
    const Node& b = g.node(n);
    if (b.op == "_Arg") continue;
    if (Assigns(b.op)) throw fail("which assigns variables (node '", b.name, "', ", b.op, ")");
    Node copy = b;
    copy.name = prefix + b.name;
    copy.inputs.clear();
    for (const std::string& input : b.inputs) {
      if (!ParseNodeInput(input).control) copy.inputs.push_back(rename(input));
    }
    graph.AddNode(std::move(copy));
  }
  // The output through an Identity: a node whose output 0 it is.
  const std::string out = rename(body.outputs.at(0));
  Node identity{.name = graph.names().UniqueName(prefix + "output"), .op = "Identity"};
  identity.inputs = {out};
  const Node& producer = graph.node(graph.FindNodeIndex(ParseNodeInput(out).node));
  const size_t index = static_cast<size_t>(ParseNodeInput(out).index);
  if (index < producer.output_specs.size()) {
    identity.attrs = {{"T", producer.output_specs[index].dtype}};
    identity.output_specs = {producer.output_specs[index]};
  }
  result.output = graph.AddNode(std::move(identity));
  return result;
}

}  // namespace eager::internal
