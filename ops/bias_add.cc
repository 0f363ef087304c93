#include "ops/bias_add.h"

#include "ops/execute.h"
#include "ops/internal/broadcast.h"
#include "ops/internal/dispatch.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using Grads = std::vector<std::optional<Tensor>>;

OutputSpec InferBiasAdd(std::span<const Tensor> in, const Attrs&) {
  const Tensor& value = in[0];
  const Tensor& bias = in[1];
  internal::CheckDTypeIn(value, "value", internal::DTypeSet::kNumeric);
  internal::CheckSameDType(value, bias, "value", "bias");
  if (value.rank() < 2 || bias.rank() != 1 ||
      bias.shape().dim(0) != value.shape().dim(value.rank() - 1)) {
    throw InvalidArgumentError(
        StrCat("BiasAdd needs value of rank >= 2 and a bias of rank 1 as long as value's last "
               "dimension; got value ",
               value.shape(), " and bias ", bias.shape()));
  }
  return {value.shape(), value.dtype()};
}

Tensor BiasAddKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& value = in[0];
  const Tensor& bias = in[1];
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  const int64_t channels = bias.num_elements();
  const int64_t n = value.num_elements();
  internal::Dispatch<internal::DTypeSet::kNumeric>(value.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = value.data<T>().data();
    const T* b = bias.data<T>().data();
    T* y = internal::MutableData<T>(out);
    for (int64_t i = 0; i < n; i += channels) {
      for (int64_t c = 0; c < channels; ++c) y[i + c] = x[i + c] + b[c];
    }
  });
  return out;
}

// TF's _BiasAddGrad: the gradient itself, and its sum over every axis but
// the last (BiasAddGrad).
Grads BiasAddGradient(const OpCall& call, const Tensor& grad) {
  Grads out(2);
  if (call.NeedsGradient(0)) out[0] = grad;
  if (call.NeedsGradient(1)) out[1] = internal::SumToShape(grad, call.inputs[1].shape());
  return out;
}

}  // namespace

const OpDef kBiasAddOp = {.type = "BiasAdd",
                          .num_inputs = 2,
                          .infer = InferBiasAdd,
                          .compute = BiasAddKernel,
                          .gradient = BiasAddGradient};

Tensor BiasAdd(const Tensor& value, const Tensor& bias) { return Execute(kBiasAddOp, value, bias); }

}  // namespace eager
