#include "ops/graph_ops.h"

#include "ops/execute.h"
#include "ops/internal/graph_builder.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using Grads = std::vector<std::optional<Tensor>>;

OutputSpec InferIdentity(std::span<const Tensor> in, const Attrs&) {
  return {in[0].shape(), in[0].dtype()};
}

Tensor IdentityKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec&) {
  return internal::WithShape(in[0], in[0].shape());
}

Grads IdentityGradient(const OpCall&, const Tensor& grad) { return {grad}; }

// ---- Graph-only kernels (a Session runs them) ----------------------------------

NodeOutputs RunConst(const NodeContext& c) { return {{c.node.Attr<Tensor>("value")}}; }

// IdentityN: its inputs, as they are (a variable reference input's value).
NodeOutputs RunIdentityN(const NodeContext& c) {
  if (!c.refs.empty() || c.inputs.empty()) {
    throw InvalidArgumentError(StrCat("node '", c.node.name, "' (IdentityN) takes 1 or more ",
                                      "value inputs, has ", c.inputs.size(), " values and ",
                                      c.refs.size(), " references"));
  }
  return {std::vector<Tensor>(c.inputs.begin(), c.inputs.end())};
}

NodeOutputs RunPlaceholder(const NodeContext& c) {
  throw InvalidArgumentError(StrCat("You must feed a value for placeholder tensor '", c.node.name,
                                    ":0' with dtype ", c.node.output_specs.at(0).dtype,
                                    " and shape ", c.node.output_specs.at(0).shape));
}

NodeOutputs RunPlaceholderWithDefault(const NodeContext& c) {
  EAGER_CHECK(c.inputs.size() == 1, "node '", c.node.name, "' (", c.node.op,
              ") needs 1 input, has ", c.inputs.size());
  return {{c.inputs[0]}};
}

NodeOutputs RunVariableV2(const NodeContext& c) {
  Variable* v = c.graph.VariableForNode(c.node.name);
  if (v == nullptr) {
    throw FailedPreconditionError(
        StrCat("node '", c.node.name, "' (", c.node.op,
               ") has no Variable object to hold its value; create it with Graph::ImportVariable"));
  }
  return {.values = {}, .ref = v};
}

// IsVariableInitialized: whether its VariableV2 reference holds a value
// (tf.compat.v1.is_variable_initialized, report_uninitialized_variables).
NodeOutputs RunIsVariableInitialized(const NodeContext& c) {
  EAGER_CHECK(c.refs.size() == 1 && c.inputs.empty(), "node '", c.node.name, "' (", c.node.op,
              ") takes 1 variable reference, has ", c.refs.size(), " references and ",
              c.inputs.size(), " values");
  return {{Tensor(c.RefVariable(0).is_initialized())}};
}

// Assign / AssignAdd / AssignSub: inputs (ref, value).
template <void (Variable::*kUpdate)(const Tensor&)>
NodeOutputs RunAssign(const NodeContext& c) {
  EAGER_CHECK(c.refs.size() == 1 && c.inputs.size() == 1, "node '", c.node.name, "' (", c.node.op,
              ") needs 2 inputs, has ", c.refs.size() + c.inputs.size());
  Variable& v = c.RefVariable(0);
  const AttrValue* validate = c.attrs.Find("validate_shape");
  if (validate != nullptr && !std::get<bool>(*validate) && c.inputs[0].shape() != v.shape()) {
    // TF gives the variable the value's shape; eager's Variables keep theirs.
    throw UnimplementedError(StrCat("node '", c.node.name, "' (", c.node.op,
                                    "): attribute 'validate_shape' = false with a value of shape ",
                                    c.inputs[0].shape(), " for a variable of shape ", v.shape(),
                                    " (eager's variables keep their shape)"));
  }
  (v.*kUpdate)(c.inputs[0]);
  return {{v.stored_value()}};
}

NodeOutputs RunNoOp(const NodeContext&) { return {}; }

// The current graph and the record of `variable` in it, or throws naming both.
const GraphVariable& VariableInGraph(Graph& graph, const Variable& variable, const char* op) {
  const GraphVariable* record = graph.FindVariable(&variable);
  if (record == nullptr) {
    throw InvalidArgumentError(StrCat(op, ": variable '", variable.shared_name(),
                                      "' does not belong to the default graph (it was created ",
                                      variable.in_graph() ? "in another graph" : "eagerly", ")"));
  }
  return *record;
}

// Assign / AssignAdd / AssignSub as a node: inputs (ref, value).
Tensor AddAssignNode(Graph& graph, Variable& variable, const Tensor& value, const char* op) {
  const GraphVariable& record = VariableInGraph(graph, variable, op);
  if (value.dtype() != variable.dtype() || !value.shape().IsCompatibleWith(variable.shape())) {
    throw InvalidArgumentError(StrCat(op, ": variable '", variable.shared_name(), "' has dtype ",
                                      variable.dtype(), " and shape ", variable.shape(),
                                      ", but the value is a ", value.dtype(), " tensor of shape ",
                                      value.shape()));
  }
  const std::string value_input = internal::GraphInput(graph, value);
  if (graph.IsResourceVariable(variable)) {
    // ResourceVariable.assign*(read_value=True): the update, then a read
    // that waits for it.
    Node update{.name = graph.UniqueName(StrCat(op, "VariableOp")), .op = StrCat(op, "VariableOp")};
    update.inputs = {record.variable_node, value_input};
    update.attrs = {{"dtype", variable.dtype()}};
    if (std::string_view(op) == "Assign") update.attrs.Set("validate_shape", false);
    const Operation updated(&graph, graph.AddNode(std::move(update)));
    const Graph::ControlDependencies after(graph, {updated});
    Node read{.name = graph.UniqueName("ReadVariableOp"), .op = "ReadVariableOp"};
    read.inputs = {record.variable_node};
    read.attrs = {{"dtype", variable.dtype()}};
    read.output_specs = {{variable.shape(), variable.dtype()}};
    return graph.Output(graph.AddNode(std::move(read)));
  }
  Node node{.name = graph.UniqueName(op), .op = op};
  node.inputs = {record.variable_node, value_input};
  node.attrs = {{"T", variable.dtype()},
                {"_class", std::vector<std::string>{"loc:@" + record.variable_node}},
                {"use_locking", std::string_view(op) == "Assign"}};
  if (std::string_view(op) == "Assign") node.attrs.Set("validate_shape", true);
  node.output_specs = {{variable.shape(), variable.dtype()}};
  return graph.Output(graph.AddNode(std::move(node)));
}

Operation AddNoOp(Graph& graph, std::string_view name, const std::vector<std::string>& deps) {
  // As TF, a name ending in "/" (a scope's) is used as is.
  Node node{.name = !name.empty() && name.back() == '/'
                        ? std::string(name.substr(0, name.size() - 1))
                        : graph.UniqueName(name),
            .op = "NoOp"};
  for (const std::string& d : deps) node.inputs.push_back("^" + d);
  return Operation(&graph, graph.AddNode(std::move(node)));
}

}  // namespace

const OpDef kIdentityOp = {.type = "Identity",
                           .num_inputs = 1,
                           .infer = InferIdentity,
                           .compute = IdentityKernel,
                           .gradient = IdentityGradient};

const OpDef kIdentityNOp = {.type = "IdentityN",
                            .num_inputs = OpDef::kVariadic,
                            .run = RunIdentityN,
                            .num_outputs = OpDef::kVariadic};
const OpDef kConstOp = {.type = "Const", .run = RunConst};
const OpDef kPlaceholderOp = {.type = "Placeholder", .run = RunPlaceholder};
const OpDef kPlaceholderWithDefaultOp = {
    .type = "PlaceholderWithDefault", .num_inputs = 1, .run = RunPlaceholderWithDefault};
const OpDef kVariableV2Op = {.type = "VariableV2", .run = RunVariableV2};
const OpDef kAssignOp = {
    .type = "Assign", .num_inputs = 2, .run = RunAssign<&Variable::Assign>, .ref_inputs = 1};
const OpDef kAssignAddOp = {
    .type = "AssignAdd", .num_inputs = 2, .run = RunAssign<&Variable::AssignAdd>, .ref_inputs = 1};
const OpDef kAssignSubOp = {
    .type = "AssignSub", .num_inputs = 2, .run = RunAssign<&Variable::AssignSub>, .ref_inputs = 1};
const OpDef kIsVariableInitializedOp = {.type = "IsVariableInitialized",
                                        .num_inputs = 1,
                                        .run = RunIsVariableInitialized,
                                        .ref_inputs = 1};
const OpDef kNoOpOp = {.type = "NoOp", .run = RunNoOp, .num_outputs = 0};

Tensor Placeholder(DType dtype, const Shape& shape, std::string_view name) {
  Graph* graph = Graph::Current();
  if (graph == nullptr) {
    throw FailedPreconditionError(StrCat("Placeholder '", name, "' (", dtype, ", shape ", shape,
                                         ") is graph-only: create it inside Graph::AsDefault "
                                         "and feed it to Session::Run"));
  }
  Node node{.name = graph->UniqueName(name), .op = "Placeholder"};
  node.attrs = {{"dtype", dtype}, {"shape", shape}};
  node.output_specs = {{shape, dtype}};
  return graph->Output(graph->AddNode(std::move(node)));
}

Tensor Constant(const Tensor& value, std::string_view name) {
  Graph* graph = Graph::Current();
  if (graph == nullptr) return value;
  if (value.is_symbolic()) {
    throw InvalidArgumentError(
        StrCat("Constant '", name, "': '", value.name(), "' is a graph tensor, not a value"));
  }
  return graph->Output(internal::AddConstNode(*graph, value, name));
}

Tensor Identity(const Tensor& x) { return Execute(kIdentityOp, {x}); }

std::vector<Tensor> IdentityN(const std::vector<Tensor>& values) {
  if (values.empty()) throw InvalidArgumentError("IdentityN: needs at least one input, got none");
  Graph* graph = Graph::Current();
  if (graph == nullptr) {
    std::vector<Tensor> out;
    out.reserve(values.size());
    for (const Tensor& v : values) out.push_back(Identity(v));
    return out;
  }
  Node node{.name = graph->UniqueName("IdentityN"), .op = "IdentityN"};
  std::vector<DType> types;
  for (const Tensor& v : values) {
    node.inputs.push_back(internal::GraphInput(*graph, v));
    node.output_specs.push_back({v.shape(), v.dtype()});
    types.push_back(v.dtype());
  }
  node.attrs = {{"T", types}};
  const int index = graph->AddNode(std::move(node));
  std::vector<Tensor> out;
  out.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    out.push_back(graph->Output(index, static_cast<int>(i)));
  }
  return out;
}

Tensor Assign(Variable& variable, const Tensor& value) {
  if (Graph* graph = Graph::Current()) return AddAssignNode(*graph, variable, value, "Assign");
  variable.Assign(value);
  return variable.value();
}

Tensor AssignAdd(Variable& variable, const Tensor& delta) {
  if (Graph* graph = Graph::Current()) return AddAssignNode(*graph, variable, delta, "AssignAdd");
  variable.AssignAdd(delta);
  return variable.value();
}

Tensor AssignSub(Variable& variable, const Tensor& delta) {
  if (Graph* graph = Graph::Current()) return AddAssignNode(*graph, variable, delta, "AssignSub");
  variable.AssignSub(delta);
  return variable.value();
}

Operation NoOp(std::string_view name) {
  Graph* graph = Graph::Current();
  return graph == nullptr ? Operation() : AddNoOp(*graph, name, {});
}

Operation Group(const std::vector<Operation>& ops, std::string_view name) {
  Graph* graph = Graph::Current();
  if (graph == nullptr) return Operation();
  std::vector<std::string> deps;
  for (const Operation& op : ops) {
    if (op.is_none()) continue;
    EAGER_CHECK(op.graph() == graph, "Group '", name, "': operation '", op.name(),
                "' belongs to another graph");
    deps.push_back(op.name());
  }
  return AddNoOp(*graph, name, deps);
}

Operation OperationOf(const Tensor& tensor) {
  if (!tensor.is_symbolic()) {
    throw InvalidArgumentError(StrCat("OperationOf: an eager ", tensor.dtype(), " tensor of shape ",
                                      tensor.shape(), " has no operation"));
  }
  Graph* graph = Graph::Current();
  EAGER_CHECK(graph != nullptr, "OperationOf('", tensor.name(),
              "'): call it while the tensor's graph is the default");
  return graph->OperationOf(tensor);
}

Operation GlobalVariablesInitializer() {
  Graph* graph = Graph::Current();
  if (graph == nullptr) return Operation();
  return VariablesInitializer(graph->GlobalVariables(), "init");
}

Operation VariablesInitializer(const std::vector<Variable*>& variables, std::string_view name) {
  Graph* graph = Graph::Current();
  if (graph == nullptr) return Operation();
  std::vector<std::string> deps;
  for (const Variable* v : variables) {
    EAGER_CHECK(v != nullptr, "VariablesInitializer: null variable");
    const GraphVariable& record = VariableInGraph(*graph, *v, "VariablesInitializer");
    if (!record.initializer.empty()) deps.push_back(record.initializer);
  }
  return AddNoOp(*graph, name, deps);
}

}  // namespace eager
