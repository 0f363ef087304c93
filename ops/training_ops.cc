#include "ops/training_ops.h"

#include <cstring>
#include <string>
#include <vector>

#include "ops/apply_adam.h"
#include "ops/internal/graph_builder.h"
#include "ops/op_def.h"
#include "runtime/flush_denormal.h"
#include "runtime/graph.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

constexpr const char* kInputNames[] = {"beta1_power", "beta2_power", "lr",  "beta1",
                                       "beta2",       "epsilon",     "grad"};

void CheckArguments(const Variable& var, const Variable& m, const Variable& v,
                    std::span<const Tensor> tensors) {
  const auto fail = [&](const std::string& what) {
    return InvalidArgumentError(StrCat("ApplyAdam on variable '", var.shared_name(), "': ", what));
  };
  if (var.dtype() != DType::kFloat32 && var.dtype() != DType::kFloat64) {
    throw fail(StrCat("dtype ", var.dtype(), " is not supported; expected float32 or float64"));
  }
  for (const Variable* slot : {&m, &v}) {
    if (slot->dtype() != var.dtype() || slot->shape() != var.shape()) {
      throw fail(StrCat("slot '", slot->shared_name(), "' is ", slot->dtype(), " ", slot->shape(),
                        ", expected ", var.dtype(), " ", var.shape()));
    }
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    const bool is_grad = i + 1 == tensors.size();
    const bool shape_ok = is_grad ? t.shape().IsCompatibleWith(var.shape())
                                  : !t.shape().IsFullyDefined() || t.num_elements() == 1;
    if (t.dtype() != var.dtype() || !shape_ok) {
      throw fail(StrCat(kInputNames[i], " is a ", t.dtype(), " tensor of shape ", t.shape(),
                        "; expected ", var.dtype(), is_grad ? " of the variable's shape " : "",
                        is_grad ? var.shape().ToString() : " scalar"));
    }
  }
}

Tensor CopyOf(const Variable& variable) {
  if (!variable.is_initialized()) {
    throw FailedPreconditionError(
        StrCat("Attempting to use uninitialized value ", variable.shared_name()));
  }
  const Tensor value = variable.stored_value();
  Tensor copy = internal::NewTensor(value.shape(), value.dtype());
  std::memcpy(internal::MutableRawData(copy), internal::RawData(value), value.bytes().size());
  return copy;
}

std::string RefInput(Graph& graph, const Variable& variable) {
  const GraphVariable* record = graph.FindVariable(&variable);
  if (record == nullptr) {
    throw InvalidArgumentError(StrCat("ApplyAdam: variable '", variable.shared_name(),
                                      "' does not belong to the default graph"));
  }
  return record->variable_node;
}

NodeOutputs RunApplyAdamNode(const NodeContext& c) {
  EAGER_CHECK(c.refs.size() == 3 && c.inputs.size() == 7, "node '", c.node.name, "' (", c.node.op,
              ") needs 10 inputs, has ", c.refs.size() + c.inputs.size());
  return {{internal::RunApplyAdam(*c.refs[0], *c.refs[1], *c.refs[2], c.inputs)}};
}

}  // namespace

const OpDef kApplyAdamOp = {
    .type = "ApplyAdam", .num_inputs = 10, .run = RunApplyAdamNode, .ref_inputs = 0b111};

namespace internal {

Tensor RunApplyAdam(Variable& var, Variable& m, Variable& v, std::span<const Tensor> tensors) {
  EAGER_CHECK(tensors.size() == 7, "ApplyAdam on '", var.shared_name(), "' needs 7 tensors, got ",
              tensors.size());
  CheckArguments(var, m, v, tensors);
  Tensor new_var = CopyOf(var);
  Tensor new_m = CopyOf(m);
  Tensor new_v = CopyOf(v);
  const ScopedFlushDenormal flush;  // a kernel: TF's kernel mode
  VisitFloatDType(var.dtype(), "ApplyAdam", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto scalar = [&](size_t i) { return tensors[i].data<T>()[0]; };
    const Tensor& grad = tensors[6];
    ApplyAdamKernel<T>(static_cast<size_t>(new_var.num_elements()), grad.data<T>().data(),
                       MutableData<T>(new_var), MutableData<T>(new_m), MutableData<T>(new_v),
                       scalar(2), scalar(3), scalar(4), scalar(0), scalar(1), scalar(5));
  });
  m.Assign(new_m);
  v.Assign(new_v);
  var.Assign(new_var);
  return var.stored_value();
}

}  // namespace internal

Tensor ApplyAdam(Variable& var, Variable& m, Variable& v, const Tensor& beta1_power,
                 const Tensor& beta2_power, const Tensor& lr, const Tensor& beta1,
                 const Tensor& beta2, const Tensor& epsilon, const Tensor& grad) {
  const Tensor tensors[] = {beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad};
  Graph* graph = Graph::Current();
  if (graph == nullptr) return internal::RunApplyAdam(var, m, v, tensors);
  CheckArguments(var, m, v, tensors);
  Node node{.name = graph->UniqueName("ApplyAdam"), .op = "ApplyAdam"};
  const std::string var_node = RefInput(*graph, var);
  node.inputs = {var_node, RefInput(*graph, m), RefInput(*graph, v)};
  for (const Tensor& t : tensors) node.inputs.push_back(internal::GraphInput(*graph, t));
  node.attrs = {{"T", var.dtype()},
                {"_class", std::vector<std::string>{"loc:@" + var_node}},
                {"use_locking", false},
                {"use_nesterov", false}};
  node.output_dtypes = {var.dtype()};
  node.output_shapes = {var.shape()};
  return graph->Output(graph->AddNode(std::move(node)));
}

}  // namespace eager
