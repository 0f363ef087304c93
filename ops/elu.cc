#include "ops/elu.h"

#include "ops/binary_ops.h"
#include "ops/execute.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/elementwise.h"
#include "ops/unary_ops.h"

namespace eager {
namespace {

using internal::DTypeSet;
using Grads = std::vector<std::optional<Tensor>>;

OutputSpec InferElu(std::span<const Tensor> in, const Attrs&) {
  return internal::SameShapeSpec(in, DTypeSet::kFloat, "features");
}

// TF's functor: (x < 0).select(exp(x) - 1, x).
Tensor EluKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<1, DTypeSet::kFloat>(in, spec, [](const auto& x) {
    using T = internal::ScalarOf<decltype(x)>;
    return (x < T(0)).select(x.exp() - T(1), x);
  });
}

OutputSpec InferEluGrad(std::span<const Tensor> in, const Attrs&) {
  return internal::SameShapeSpec(in, DTypeSet::kFloat, "gradients", "outputs");
}

// TF's functor: (y < 0).select(g * (y + 1), g).
Tensor EluGradKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<2, DTypeSet::kFloat>(
      in, spec, [](const auto& g, const auto& y) {
        using T = internal::ScalarOf<decltype(g)>;
        return (y < T(0)).select(g * (y + T(1)), g);
      });
}

// From the output, as TF's _EluGrad.
Grads EluGradient(const OpCall& call, const Tensor& grad) { return {EluGrad(grad, call.output)}; }

// TF's _EluGradGrad: linear in `gradients`; in `outputs`, d(g (y + 1))/dy = g
// where y < 0 (selected by ReluGrad on -y), 0 elsewhere.
Grads EluGradGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& gradients = call.inputs[0];
  const Tensor& outputs = call.inputs[1];
  std::optional<Tensor> d_gradients, d_outputs;
  if (call.NeedsGradient(0)) d_gradients = EluGrad(grad, outputs);
  if (call.NeedsGradient(1)) d_outputs = ReluGrad(Mul(grad, gradients), Neg(outputs));
  return {d_gradients, d_outputs};
}

}  // namespace

const OpDef kEluOp = {.type = "Elu",
                      .num_inputs = 1,
                      .infer = InferElu,
                      .compute = EluKernel,
                      .gradient = EluGradient};
const OpDef kEluGradOp = {.type = "EluGrad",
                          .num_inputs = 2,
                          .infer = InferEluGrad,
                          .compute = EluGradKernel,
                          .gradient = EluGradGradient};

Tensor Elu(const Tensor& features) { return Execute(kEluOp, {features}); }
Tensor EluGrad(const Tensor& gradients, const Tensor& outputs) {
  return Execute(kEluGradOp, {gradients, outputs});
}

}  // namespace eager
