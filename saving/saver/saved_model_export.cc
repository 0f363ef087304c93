#include "saving/saver/saved_model_export.h"

#include <string_view>

#include "runtime/errors.h"
#include "runtime/graph.h"
#include "runtime/variable.h"

namespace eager::internal {
namespace {

// What SavedModelBuilder asks of a session here: only its graph (the
// variables' values are in the Variable objects already).
struct GraphOnly {
  Graph* g;
  Graph& graph() const { return *g; }
};

Tensor AddPlaceholder(Graph& graph, const std::string& name, const TensorSpec& spec) {
  Node node{.name = graph.UniqueName(name), .op = "Placeholder"};
  node.attrs = {{"dtype", spec.dtype}, {"shape", spec.shape}};
  node.output_specs = {{spec.shape, spec.dtype}};
  return graph.Output(graph.AddNode(std::move(node)));
}

// An Identity named `name` over `result`, so that the signature's tensors
// read as its keys ("probabilities:0").
Tensor AddNamedOutput(Graph& graph, const std::string& key, const std::string& name,
                      const Tensor& result) {
  if (!result.is_symbolic()) {
    throw InvalidArgumentError(
        StrCat("SavedModelExport: signature '", key, "' output '", name,
               "' is an eager tensor, not computed from the signature's inputs in the trace"));
  }
  const Node& producer = graph.OperationOf(result).node();  // throws for another graph's tensor
  const NodeInput input = ParseNodeInput(result.name());
  Node node{.name = graph.UniqueName(name), .op = "Identity"};
  node.inputs = {NodeInputName(producer.name, input.index)};
  node.attrs = {{"T", result.dtype()}};
  node.output_specs = {
      {producer.output_specs.at(static_cast<size_t>(input.index)).shape, result.dtype()}};
  return graph.Output(graph.AddNode(std::move(node)));
}

// Why a trace failed, for the message: reading a graph tensor's value is a
// branch or loop on data, which a graph cannot hold as C++.
std::string Hint(const Error& e) {
  if (e.code() == ErrorCode::kFailedPrecondition &&
      std::string_view(e.what()).find("is a symbolic graph tensor") != std::string_view::npos) {
    return " (the traced C++ reads a tensor's value, e.g. a value-dependent branch or loop: a "
           "graph has no values while tracing; express it with ops)";
  }
  return "";
}

GraphSignature Trace(Graph& graph, const std::string& key, const Signature& signature,
                     const TracedCall& call) {
  EAGER_CHECK(!signature.outputs.empty(), "SavedModelExport: signature '", key,
              "' names no outputs");
  GraphSignature out;
  out.method_name = signature.method_name;
  std::vector<Tensor> inputs;
  for (const auto& [name, spec] : signature.inputs) {
    EAGER_CHECK(!out.inputs.contains(name), "SavedModelExport: signature '", key, "' has input '",
                name, "' twice");
    inputs.push_back(AddPlaceholder(graph, name, spec));
    out.inputs.emplace(name, inputs.back());
  }
  std::vector<Tensor> results;
  {
    const Graph::CaptureVariables capture(graph, signature.read_instead);
    try {
      results = call(inputs);
    } catch (const Error& e) {
      ThrowError(e.code(),
                 StrCat("SavedModelExport: tracing signature '", key, "': ", e.what(), Hint(e)));
    }
  }
  if (results.size() != signature.outputs.size()) {
    std::string names;
    for (const std::string& n : signature.outputs) names += StrCat(names.empty() ? "" : ", ", n);
    throw InvalidArgumentError(StrCat("SavedModelExport: the traced call returned ", results.size(),
                                      " tensors; signature '", key, "' names ",
                                      signature.outputs.size(), " outputs (", names, ")"));
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string& name = signature.outputs[i];
    EAGER_CHECK(!out.outputs.contains(name), "SavedModelExport: signature '", key, "' has output '",
                name, "' twice");
    out.outputs.emplace(name, AddNamedOutput(graph, key, name, results[i]));
  }
  return out;
}

}  // namespace

std::string ExportTraced(const TracedCall& call, const std::string& export_dir,
                         const std::map<std::string, Signature>& signatures,
                         const std::vector<std::string>& tags) {
  EAGER_CHECK(!signatures.empty(), "SavedModelExport: no signature to export");
  SavedModelBuilder builder(export_dir);  // refuses an existing export before any work
  Graph graph;
  std::map<std::string, GraphSignature> traced;
  {
    const Graph::AsDefault in(graph);
    // The default signature is traced first, so its nodes get the plain
    // names ("images:0", "logits:0") that a client of TF Serving asks for;
    // the others follow in key order and are uniquified after it.
    auto serving = signatures.find(kDefaultServingSignature);
    if (serving != signatures.end()) {
      traced.emplace(serving->first, Trace(graph, serving->first, serving->second, call));
    }
    for (const auto& [key, signature] : signatures) {
      if (key != kDefaultServingSignature) traced.emplace(key, Trace(graph, key, signature, call));
    }
  }
  // A captured variable holds its source's value; one created by the trace
  // (a layer built on its first call, inside the graph) has none, and the
  // layer now refers to a graph variable: say so rather than saving nothing.
  for (const Variable* v : graph.GlobalVariables()) {
    if (!v->is_initialized()) {
      throw FailedPreconditionError(
          StrCat("SavedModelExport: the trace created variable '", v->shared_name(),
                 "' (a layer built on its first call); call the model eagerly once, so that its "
                 "layers are built, before exporting"));
    }
  }
  GraphOnly session{&graph};
  builder.AddMetaGraphAndVariables(session, tags, traced);
  return builder.Save();
}

}  // namespace eager::internal
