#include "ops/elu.h"

#include "ops/binary_ops.h"
#include "ops/execute.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/eigen_view.h"
#include "ops/internal/parallel.h"
#include "ops/unary_ops.h"
#include "runtime/internal/tensor_access.h"

namespace eager {
namespace {

using internal::DTypeSet;
using Grads = std::vector<std::optional<Tensor>>;

OutputSpec InferElu(std::span<const Tensor> in, const Attrs&) {
  internal::CheckDTypeIn(in[0], "features", DTypeSet::kFloat);
  return {in[0].shape(), in[0].dtype()};
}

// TF's functor: (x < 0).select(exp(x) - 1, x).
Tensor EluKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kFloat>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].data<T>().data();
    T* o = internal::MutableData<T>(out);
    internal::ParallelFor(out.num_elements(), internal::kElementwiseGrain,
                          internal::kParallelElementwiseMin, [&](int64_t b, int64_t e) {
                            const auto a = internal::ConstArrayMap<T>(x + b, e - b);
                            internal::ArrayMap<T>(o + b, e - b) =
                                (a < T(0)).select(a.exp() - T(1), a);
                          });
  });
  return out;
}

OutputSpec InferEluGrad(std::span<const Tensor> in, const Attrs&) {
  internal::CheckSameDType(in[0], in[1], "gradients", "outputs");
  internal::CheckDTypeIn(in[0], "gradients", DTypeSet::kFloat);
  if (in[0].shape() != in[1].shape()) {
    throw InvalidArgumentError(StrCat("gradients and outputs must have the same shape, got ",
                                      in[0].shape(), " vs. ", in[1].shape()));
  }
  return {in[0].shape(), in[0].dtype()};
}

// TF's functor: (y < 0).select(g * (y + 1), g).
Tensor EluGradKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kFloat>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* g = in[0].data<T>().data();
    const T* y = in[1].data<T>().data();
    T* o = internal::MutableData<T>(out);
    internal::ParallelFor(out.num_elements(), internal::kElementwiseGrain,
                          internal::kParallelElementwiseMin, [&](int64_t b, int64_t e) {
                            const auto gs = internal::ConstArrayMap<T>(g + b, e - b);
                            const auto ys = internal::ConstArrayMap<T>(y + b, e - b);
                            internal::ArrayMap<T>(o + b, e - b) =
                                (ys < T(0)).select(gs * (ys + T(1)), gs);
                          });
  });
  return out;
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
