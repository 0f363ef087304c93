#include "ops/training_ops.h"

#include "ops/apply_adam.h"
#include "ops/internal/apply_op.h"
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
  const Variable* slots[] = {&m, &v};
  internal::CheckApplyArguments("ApplyAdam", var, slots, "slot", tensors, kInputNames,
                                tensors.size() - 1);
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
  Tensor new_var = internal::CopyOfVariable(var);
  Tensor new_m = internal::CopyOfVariable(m);
  Tensor new_v = internal::CopyOfVariable(v);
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
  Variable* refs[] = {&var, &m, &v};
  return internal::AddApplyNode("ApplyAdam", refs, tensors, Attrs{{"use_nesterov", false}});
}

}  // namespace eager
