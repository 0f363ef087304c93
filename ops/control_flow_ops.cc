#include "ops/control_flow_ops.h"

#include <string>

#include "ops/internal/graph_builder.h"
#include "ops/op_def.h"
#include "runtime/graph.h"

namespace eager {
namespace {

Graph& GraphFor(const char* op) {
  Graph* graph = Graph::Current();
  if (graph == nullptr) {
    throw FailedPreconditionError(
        StrCat(op, " builds graph nodes (tf.cond); call it while a Graph is the default"));
  }
  return *graph;
}

// The dimensions on which `a` and `b` agree; unknown elsewhere.
Shape CommonShape(const Shape& a, const Shape& b) {
  if (a.unknown_rank() || b.unknown_rank() || a.rank() != b.rank()) return Shape::UnknownRank();
  std::vector<int64_t> dims;
  dims.reserve(static_cast<size_t>(a.rank()));
  for (int i = 0; i < a.rank(); ++i) {
    dims.push_back(a.dim(i) == b.dim(i) ? a.dim(i) : Shape::kUnknownDim);
  }
  return Shape::Partial(dims);
}

}  // namespace

const OpDef kSwitchOp = {
    .type = "Switch", .num_inputs = 2, .num_outputs = 2, .flow = OpDef::Flow::kSwitch};
const OpDef kRefSwitchOp = {.type = "RefSwitch",
                            .num_inputs = 2,
                            .num_outputs = 2,
                            .ref_inputs = 1,
                            .flow = OpDef::Flow::kSwitch};
const OpDef kMergeOp = {
    .type = "Merge", .num_inputs = OpDef::kVariadic, .num_outputs = 2, .flow = OpDef::Flow::kMerge};

SwitchOutputs Switch(const Tensor& data, const Tensor& pred) {
  Graph& graph = GraphFor("Switch");
  if (pred.dtype() != DType::kBool || (!pred.shape().unknown_rank() && pred.shape().rank() != 0)) {
    throw InvalidArgumentError(StrCat("Switch: pred must be a bool scalar, got a ", pred.dtype(),
                                      " tensor of shape ", pred.shape()));
  }
  Node node{.name = graph.UniqueName(kSwitchOp.type), .op = std::string(kSwitchOp.type)};
  node.inputs = {internal::GraphInput(graph, data), internal::GraphInput(graph, pred)};
  node.attrs = {{"T", data.dtype()}};
  node.output_specs = {{data.shape(), data.dtype()}, {data.shape(), data.dtype()}};
  const int index = graph.AddNode(std::move(node));
  return {graph.Output(index, 0), graph.Output(index, 1)};
}

MergeOutputs Merge(const std::vector<Tensor>& inputs) {
  Graph& graph = GraphFor("Merge");
  if (inputs.empty()) throw InvalidArgumentError("Merge: needs at least one input");
  Node node{.name = graph.UniqueName(kMergeOp.type), .op = std::string(kMergeOp.type)};
  Shape shape = inputs[0].shape();
  for (const Tensor& t : inputs) {
    if (t.dtype() != inputs[0].dtype()) {
      throw InvalidArgumentError(
          StrCat("Merge: inputs must have one dtype, got ", inputs[0].dtype(), " and ", t.dtype()));
    }
    shape = CommonShape(shape, t.shape());
    node.inputs.push_back(internal::GraphInput(graph, t));
  }
  node.attrs = {{"T", inputs[0].dtype()}, {"N", static_cast<int64_t>(inputs.size())}};
  node.output_specs = {{shape, inputs[0].dtype()}, {Shape{}, DType::kInt32}};
  const int index = graph.AddNode(std::move(node));
  return {graph.Output(index, 0), graph.Output(index, 1)};
}

}  // namespace eager
