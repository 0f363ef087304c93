#include "ops/internal/apply_op.h"

#include <cstring>
#include <vector>

#include "ops/internal/graph_builder.h"
#include "runtime/tensor_access.h"

namespace eager::internal {

void CheckApplyArguments(std::string_view op, const Variable& var,
                         std::span<const Variable* const> slots, std::string_view slot_label,
                         std::span<const Tensor> tensors, std::span<const char* const> names,
                         size_t grad_index) {
  const auto fail = [&](const std::string& what) {
    return InvalidArgumentError(StrCat(op, " on variable '", var.shared_name(), "': ", what));
  };
  if (var.dtype() != DType::kFloat32 && var.dtype() != DType::kFloat64) {
    throw fail(StrCat("dtype ", var.dtype(), " is not supported; expected float32 or float64"));
  }
  for (const Variable* slot : slots) {
    if (slot->dtype() != var.dtype() || slot->shape() != var.shape()) {
      throw fail(StrCat(slot_label, " '", slot->shared_name(), "' is ", slot->dtype(), " ",
                        slot->shape(), ", expected ", var.dtype(), " ", var.shape()));
    }
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    const bool is_grad = i == grad_index;
    const bool shape_ok = is_grad ? t.shape().IsCompatibleWith(var.shape())
                                  : !t.shape().IsFullyDefined() || t.num_elements() == 1;
    if (t.dtype() != var.dtype() || !shape_ok) {
      throw fail(StrCat(names[i], " is a ", t.dtype(), " tensor of shape ", t.shape(),
                        "; expected ", var.dtype(), is_grad ? " of the variable's shape " : "",
                        is_grad ? var.shape().ToString() : " scalar"));
    }
  }
}

Tensor CopyOfVariable(const Variable& variable) {
  if (!variable.is_initialized()) {
    throw FailedPreconditionError(
        StrCat("Attempting to use uninitialized value ", variable.shared_name()));
  }
  const Tensor value = variable.stored_value();
  Tensor copy = NewTensor(value.shape(), value.dtype());
  std::memcpy(MutableRawData(copy), RawData(value), value.bytes().size());
  return copy;
}

std::string RefInput(std::string_view op, Graph& graph, const Variable& variable) {
  const GraphVariable* record = graph.FindVariable(&variable);
  if (record == nullptr) {
    throw InvalidArgumentError(StrCat(op, ": variable '", variable.shared_name(),
                                      "' does not belong to the default graph"));
  }
  return record->variable_node;
}

Tensor AddApplyNode(std::string_view op, std::span<Variable* const> refs,
                    std::span<const Tensor> tensors, const Attrs& attrs) {
  Graph& graph = *Graph::Current();
  const Variable& var = *refs[0];
  Node node{.name = graph.UniqueName(op), .op = std::string(op)};
  for (const Variable* r : refs) node.inputs.push_back(RefInput(op, graph, *r));
  for (const Tensor& t : tensors) node.inputs.push_back(GraphInput(graph, t));
  node.attrs = {{"T", var.dtype()},
                {"_class", std::vector<std::string>{"loc:@" + node.inputs[0]}},
                {"use_locking", false}};
  for (const auto& [name, value] : attrs.items()) node.attrs.Set(name, value);
  node.output_specs = {{var.shape(), var.dtype()}};
  return graph.Output(graph.AddNode(std::move(node)));
}

Operation AddResourceApplyNode(std::string_view op, std::span<Variable* const> refs,
                               std::span<const Tensor> tensors, const Attrs& attrs) {
  Graph& graph = *Graph::Current();
  Node node{.name = graph.UniqueName(op), .op = std::string(op)};
  for (const Variable* r : refs) {
    node.inputs.push_back(RefInput(op, graph, *r));
    if (!graph.IsResourceVariable(*r)) {
      throw InvalidArgumentError(StrCat(op, ": variable '", r->shared_name(),
                                        "' is not a resource variable (its node '",
                                        node.inputs.back(), "' is not a VarHandleOp)"));
    }
  }
  for (const Tensor& t : tensors) node.inputs.push_back(GraphInput(graph, t));
  node.attrs = {{"T", refs[0]->dtype()}, {"use_locking", false}};
  for (const auto& [name, value] : attrs.items()) node.attrs.Set(name, value);
  return Operation(&graph, graph.AddNode(std::move(node)));
}

}  // namespace eager::internal
