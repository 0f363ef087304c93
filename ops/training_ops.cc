#include "ops/training_ops.h"

#include <span>

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
  return {{internal::RunApplyAdam(c.RefVariable(0), c.RefVariable(1), c.RefVariable(2), c.inputs)}};
}

// ---- ApplyGradientDescent, ApplyMomentum -----------------------------------------------

constexpr const char* kGdNames[] = {"alpha", "delta"};
constexpr const char* kMomentumNames[] = {"lr", "grad", "momentum"};

void CheckMomentum(const Variable& var, const Variable& accum, std::span<const Tensor> t) {
  const Variable* slots[] = {&accum};
  internal::CheckApplyArguments("ApplyMomentum", var, slots, "accum", t, kMomentumNames, 1);
}

Tensor RunGradientDescent(Variable& var, std::span<const Tensor> t) {
  internal::CheckApplyArguments("ApplyGradientDescent", var, {}, "", t, kGdNames, 1);
  Tensor new_var = internal::CopyOfVariable(var);
  const internal::ScopedFlushDenormal flush;  // a kernel: TF's kernel mode
  VisitFloatDType(var.dtype(), "ApplyGradientDescent", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T alpha = t[0].data<T>()[0];
    const T* g = t[1].data<T>().data();
    T* x = internal::MutableData<T>(new_var);
    for (int64_t i = 0; i < new_var.num_elements(); ++i) x[i] -= alpha * g[i];
  });
  var.Assign(new_var);
  return var.stored_value();
}

Tensor RunMomentum(Variable& var, Variable& accum, std::span<const Tensor> t, bool nesterov) {
  CheckMomentum(var, accum, t);
  Tensor new_var = internal::CopyOfVariable(var);
  Tensor new_accum = internal::CopyOfVariable(accum);
  const internal::ScopedFlushDenormal flush;  // a kernel: TF's kernel mode
  VisitFloatDType(var.dtype(), "ApplyMomentum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T lr = t[0].data<T>()[0];
    const T* g = t[1].data<T>().data();
    const T momentum = t[2].data<T>()[0];
    T* x = internal::MutableData<T>(new_var);
    T* a = internal::MutableData<T>(new_accum);
    for (int64_t i = 0; i < new_var.num_elements(); ++i) {
      a[i] = a[i] * momentum + g[i];
      x[i] -= nesterov ? g[i] * lr + a[i] * momentum * lr : lr * a[i];
    }
  });
  accum.Assign(new_accum);
  var.Assign(new_var);
  return var.stored_value();
}

NodeOutputs RunGradientDescentNode(const NodeContext& c) {
  EAGER_CHECK(c.refs.size() == 1 && c.inputs.size() == 2, "node '", c.node.name, "' (", c.node.op,
              ") needs 3 inputs, has ", c.refs.size() + c.inputs.size());
  return {{RunGradientDescent(c.RefVariable(0), c.inputs)}};
}

NodeOutputs RunMomentumNode(const NodeContext& c) {
  EAGER_CHECK(c.refs.size() == 2 && c.inputs.size() == 3, "node '", c.node.name, "' (", c.node.op,
              ") needs 5 inputs, has ", c.refs.size() + c.inputs.size());
  const bool nesterov = c.attrs.Has("use_nesterov") && c.attrs.GetBool("use_nesterov");
  return {{RunMomentum(c.RefVariable(0), c.RefVariable(1), c.inputs, nesterov)}};
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
                       scalar(2), T(1) - scalar(3), T(1) - scalar(4), scalar(0), scalar(1),
                       scalar(5));
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

const OpDef kApplyGradientDescentOp = {.type = "ApplyGradientDescent",
                                       .num_inputs = 3,
                                       .run = RunGradientDescentNode,
                                       .ref_inputs = 0b1};
const OpDef kApplyMomentumOp = {
    .type = "ApplyMomentum", .num_inputs = 5, .run = RunMomentumNode, .ref_inputs = 0b11};

Tensor ApplyGradientDescent(Variable& var, const Tensor& alpha, const Tensor& delta) {
  const Tensor tensors[] = {alpha, delta};
  if (Graph::Current() == nullptr) return RunGradientDescent(var, tensors);
  internal::CheckApplyArguments("ApplyGradientDescent", var, {}, "", tensors, kGdNames, 1);
  Variable* refs[] = {&var};
  return internal::AddApplyNode("ApplyGradientDescent", refs, tensors, Attrs{});
}

Tensor ApplyMomentum(Variable& var, Variable& accum, const Tensor& lr, const Tensor& grad,
                     const Tensor& momentum, bool use_nesterov) {
  const Tensor tensors[] = {lr, grad, momentum};
  if (Graph::Current() == nullptr) return RunMomentum(var, accum, tensors, use_nesterov);
  CheckMomentum(var, accum, tensors);
  Variable* refs[] = {&var, &accum};
  return internal::AddApplyNode("ApplyMomentum", refs, tensors,
                                Attrs{{"use_nesterov", use_nesterov}});
}

}  // namespace eager
