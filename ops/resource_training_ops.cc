#include "ops/resource_training_ops.h"

#include <cmath>
#include <span>

#include "ops/fp_contract_off.h"
#include "ops/internal/apply_op.h"
#include "ops/op_def.h"
#include "ops/training_ops.h"
#include "runtime/flush_denormal.h"
#include "runtime/tensor_access.h"
#include "runtime/variable.h"

namespace eager {
namespace {

void CheckArity(const NodeContext& c, size_t refs, size_t tensors) {
  EAGER_CHECK(c.refs.size() == refs && c.inputs.size() == tensors, "node '", c.node.name, "' (",
              c.node.op, ") needs ", refs, " resource inputs and ", tensors, " tensors, has ",
              c.refs.size(), " and ", c.inputs.size());
}

bool BoolAttr(const NodeContext& c, const char* name, bool otherwise) {
  return c.attrs.Has(name) ? c.attrs.GetBool(name) : otherwise;
}

// The ref-variable ops' kernels do the same update; the resource ops have
// no output.
template <const OpDef& kRefOp, size_t kRefs, size_t kTensors>
NodeOutputs RunAsRefOp(const NodeContext& c) {
  CheckArity(c, kRefs, kTensors);
  kRefOp.run(c);
  return {};
}

NodeOutputs RunAdam(const NodeContext& c) {
  CheckArity(c, 3, 7);
  if (BoolAttr(c, "use_nesterov", false)) {
    throw UnimplementedError(StrCat("node '", c.node.name, "' (", c.node.op,
                                    "): use_nesterov = true is not implemented"));
  }
  internal::RunApplyAdam(c.RefVariable(0), c.RefVariable(1), c.RefVariable(2), c.inputs);
  return {};
}

constexpr const char* kMomentumNames[] = {"lr", "grad", "momentum"};

NodeOutputs RunKerasMomentum(const NodeContext& c) {
  CheckArity(c, 2, 3);
  Variable& var = c.RefVariable(0);
  Variable& accum = c.RefVariable(1);
  const Variable* slots[] = {&accum};
  internal::CheckApplyArguments(c.node.op, var, slots, "accum", c.inputs, kMomentumNames, 1);
  const bool nesterov = BoolAttr(c, "use_nesterov", false);
  Tensor new_var = internal::CopyOfVariable(var);
  Tensor new_accum = internal::CopyOfVariable(accum);
  const internal::ScopedFlushDenormal flush;  // a kernel: TF's kernel mode
  VisitFloatDType(var.dtype(), c.node.op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T lr = c.inputs[0].data<T>()[0];
    const T* g = c.inputs[1].data<T>().data();
    const T momentum = c.inputs[2].data<T>()[0];
    T* x = internal::MutableData<T>(new_var);
    T* a = internal::MutableData<T>(new_accum);
    for (int64_t i = 0; i < new_var.num_elements(); ++i) {
      a[i] = a[i] * momentum - g[i] * lr;
      x[i] += nesterov ? a[i] * momentum - g[i] * lr : a[i];
    }
  });
  accum.Assign(new_accum);
  var.Assign(new_var);
  return {};
}

constexpr const char* kRMSPropNames[] = {"lr", "rho", "momentum", "epsilon", "grad"};

NodeOutputs RunRMSProp(const NodeContext& c) {
  CheckArity(c, 3, 5);
  Variable& var = c.RefVariable(0);
  Variable& ms = c.RefVariable(1);
  Variable& mom = c.RefVariable(2);
  const Variable* slots[] = {&ms, &mom};
  internal::CheckApplyArguments(c.node.op, var, slots, "slot", c.inputs, kRMSPropNames, 4);
  Tensor new_var = internal::CopyOfVariable(var);
  Tensor new_ms = internal::CopyOfVariable(ms);
  Tensor new_mom = internal::CopyOfVariable(mom);
  const internal::ScopedFlushDenormal flush;
  VisitFloatDType(var.dtype(), c.node.op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto scalar = [&](size_t i) { return c.inputs[i].data<T>()[0]; };
    const T lr = scalar(0), rho = scalar(1), momentum = scalar(2), epsilon = scalar(3);
    const T* g = c.inputs[4].data<T>().data();
    T* x = internal::MutableData<T>(new_var);
    T* s = internal::MutableData<T>(new_ms);
    T* m = internal::MutableData<T>(new_mom);
    for (int64_t i = 0; i < new_var.num_elements(); ++i) {
      s[i] += (g[i] * g[i] - s[i]) * (T(1) - rho);
      m[i] = m[i] * momentum + (g[i] * lr) / std::sqrt(s[i] + epsilon);
      x[i] -= m[i];
    }
  });
  ms.Assign(new_ms);
  mom.Assign(new_mom);
  var.Assign(new_var);
  return {};
}

constexpr const char* kAdagradNames[] = {"lr", "epsilon", "grad"};

NodeOutputs RunAdagradV2(const NodeContext& c) {
  CheckArity(c, 2, 3);
  Variable& var = c.RefVariable(0);
  Variable& accum = c.RefVariable(1);
  const Variable* slots[] = {&accum};
  internal::CheckApplyArguments(c.node.op, var, slots, "accum", c.inputs, kAdagradNames, 2);
  const bool update_slots = BoolAttr(c, "update_slots", true);
  Tensor new_var = internal::CopyOfVariable(var);
  Tensor new_accum = internal::CopyOfVariable(accum);
  const internal::ScopedFlushDenormal flush;
  VisitFloatDType(var.dtype(), c.node.op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T lr = c.inputs[0].data<T>()[0];
    const T epsilon = c.inputs[1].data<T>()[0];
    const T* g = c.inputs[2].data<T>().data();
    T* x = internal::MutableData<T>(new_var);
    T* a = internal::MutableData<T>(new_accum);
    for (int64_t i = 0; i < new_var.num_elements(); ++i) {
      if (update_slots) a[i] += g[i] * g[i];
      x[i] -= g[i] * lr / (std::sqrt(a[i]) + epsilon);
    }
  });
  accum.Assign(new_accum);
  var.Assign(new_var);
  return {};
}

}  // namespace

const OpDef kResourceApplyGradientDescentOp = {.type = "ResourceApplyGradientDescent",
                                               .num_inputs = 3,
                                               .run = RunAsRefOp<kApplyGradientDescentOp, 1, 2>,
                                               .num_outputs = 0,
                                               .ref_inputs = 0b1};
const OpDef kResourceApplyMomentumOp = {.type = "ResourceApplyMomentum",
                                        .num_inputs = 5,
                                        .run = RunAsRefOp<kApplyMomentumOp, 2, 3>,
                                        .num_outputs = 0,
                                        .ref_inputs = 0b11};
const OpDef kResourceApplyKerasMomentumOp = {.type = "ResourceApplyKerasMomentum",
                                             .num_inputs = 5,
                                             .run = RunKerasMomentum,
                                             .num_outputs = 0,
                                             .ref_inputs = 0b11};
const OpDef kResourceApplyAdamOp = {.type = "ResourceApplyAdam",
                                    .num_inputs = 10,
                                    .run = RunAdam,
                                    .num_outputs = 0,
                                    .ref_inputs = 0b111};
const OpDef kResourceApplyRMSPropOp = {.type = "ResourceApplyRMSProp",
                                       .num_inputs = 8,
                                       .run = RunRMSProp,
                                       .num_outputs = 0,
                                       .ref_inputs = 0b111};
const OpDef kResourceApplyAdagradV2Op = {.type = "ResourceApplyAdagradV2",
                                         .num_inputs = 5,
                                         .run = RunAdagradV2,
                                         .num_outputs = 0,
                                         .ref_inputs = 0b11};

Operation ResourceApplyGradientDescent(Variable& var, const Tensor& alpha, const Tensor& delta) {
  if (Graph::Current() == nullptr) {
    ApplyGradientDescent(var, alpha, delta);
    return {};
  }
  const Tensor tensors[] = {alpha, delta};
  constexpr const char* kNames[] = {"alpha", "delta"};
  internal::CheckApplyArguments("ResourceApplyGradientDescent", var, {}, "", tensors, kNames, 1);
  Variable* refs[] = {&var};
  return internal::AddResourceApplyNode("ResourceApplyGradientDescent", refs, tensors, Attrs{});
}

Operation ResourceApplyMomentum(Variable& var, Variable& accum, const Tensor& lr,
                                const Tensor& grad, const Tensor& momentum, bool use_nesterov) {
  if (Graph::Current() == nullptr) {
    ApplyMomentum(var, accum, lr, grad, momentum, use_nesterov);
    return {};
  }
  const Tensor tensors[] = {lr, grad, momentum};
  const Variable* slots[] = {&accum};
  internal::CheckApplyArguments("ResourceApplyMomentum", var, slots, "accum", tensors,
                                kMomentumNames, 1);
  Variable* refs[] = {&var, &accum};
  return internal::AddResourceApplyNode("ResourceApplyMomentum", refs, tensors,
                                        Attrs{{"use_nesterov", use_nesterov}});
}

Operation ResourceApplyAdam(Variable& var, Variable& m, Variable& v, const Tensor& beta1_power,
                            const Tensor& beta2_power, const Tensor& lr, const Tensor& beta1,
                            const Tensor& beta2, const Tensor& epsilon, const Tensor& grad) {
  if (Graph::Current() == nullptr) {
    ApplyAdam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad);
    return {};
  }
  const Tensor tensors[] = {beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad};
  constexpr const char* kNames[] = {"beta1_power", "beta2_power", "lr",  "beta1",
                                    "beta2",       "epsilon",     "grad"};
  const Variable* slots[] = {&m, &v};
  internal::CheckApplyArguments("ResourceApplyAdam", var, slots, "slot", tensors, kNames, 6);
  Variable* refs[] = {&var, &m, &v};
  return internal::AddResourceApplyNode("ResourceApplyAdam", refs, tensors,
                                        Attrs{{"use_nesterov", false}});
}

}  // namespace eager
