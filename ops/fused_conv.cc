#include "ops/fused_conv.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "ops/execute.h"
#include "ops/internal/broadcast.h"
#include "ops/internal/conv2d_forward.h"
#include "ops/internal/dispatch.h"
#include "ops/nn_ops.h"
#include "ops/parallel.h"
#include "ops/recorder.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using internal::DTypeSet;
using Grads = std::vector<std::optional<Tensor>>;

// Conv2D's shape rule on (input, filter), then the bias against the
// output's channels.
OutputSpec InferFusedConv2D(std::span<const Tensor> in, const Attrs& attrs) {
  const OutputSpec spec = kConv2DOp.infer(in.first(2), attrs);
  internal::CheckSameDType(in[0], in[2], "input", "bias");
  const Tensor& bias = in[2];
  const int64_t channels = spec.shape.dim(3);
  if (bias.rank() != 1 || bias.shape().dim(0) != channels) {
    throw InvalidArgumentError(StrCat("bias must be a vector as long as the filter's ", channels,
                                      " output channels; got bias ", bias.shape(), " for filter ",
                                      in[1].shape()));
  }
  return spec;
}

Tensor FusedConv2DKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  return internal::Conv2DForward(in[0], in[1], &in[2], attrs.GetBool("relu"), attrs, spec);
}

// Rows of the gradient summed per block, whatever the thread count.
constexpr int64_t kRowsPerBlock = 256;

// dz = relu ? (y > 0 ? dy : 0) : dy (ReluGrad's rule; not written when
// !relu) and db[c] = the sum of dz[., c] over `rows` rows of `channels`,
// in one pass. Each block of kRowsPerBlock rows is summed in T on its own;
// the blocks' sums are added in block order in double.
template <typename T>
void ReluBiasGrad(const T* dy, const T* y, T* dz, int64_t rows, int64_t channels, T* db) {
  const int64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  std::vector<T> partial(static_cast<size_t>(blocks * channels), T(0));
  const int64_t grain = std::max<int64_t>(
      1, internal::kElementwiseGrain / std::max<int64_t>(1, kRowsPerBlock * channels));
  internal::ParallelFor(blocks, grain, 2, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      T* sum = partial.data() + b * channels;
      const int64_t last = std::min(rows, (b + 1) * kRowsPerBlock);
      for (int64_t r = b * kRowsPerBlock; r < last; ++r) {
        const T* g = dy + r * channels;
        if (y == nullptr) {
          for (int64_t c = 0; c < channels; ++c) sum[c] += g[c];
          continue;
        }
        const T* out = y + r * channels;
        T* d = dz + r * channels;
        for (int64_t c = 0; c < channels; ++c) {
          const T v = out[c] > T(0) ? g[c] : T(0);
          d[c] = v;
          sum[c] += v;
        }
      }
    }
  });
  for (int64_t c = 0; c < channels; ++c) {
    double total = 0;
    for (int64_t b = 0; b < blocks; ++b) total += static_cast<double>(partial[b * channels + c]);
    db[c] = static_cast<T>(total);
  }
}

// {ReluGrad(grad, y) or grad, its sum over all but the last axis} in one
// pass; bias_shape is the bias's.
std::pair<Tensor, Tensor> FusedReluBiasGrad(const Tensor& grad, const Tensor& y, bool relu,
                                            const Shape& bias_shape) {
  const int64_t channels = bias_shape.dim(0);
  const int64_t rows = channels > 0 ? grad.num_elements() / channels : 0;
  Tensor dz = relu ? internal::NewTensor(grad.shape(), grad.dtype()) : grad;
  Tensor db = internal::NewTensor(bias_shape, grad.dtype());
  internal::Dispatch<DTypeSet::kFloat>(grad.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ReluBiasGrad<T>(grad.data<T>().data(), relu ? y.data<T>().data() : nullptr,
                    relu ? internal::MutableData<T>(dz) : nullptr, rows, channels,
                    internal::MutableData<T>(db));
  });
  return {dz, db};
}

Grads FusedConv2DGradient(const OpCall& call, const Tensor& grad) {
  const bool relu = call.attrs.GetBool("relu");
  const Shape& bias_shape = call.inputs[2].shape();
  Tensor dz = grad;
  std::optional<Tensor> db;
  if (IsRecording()) {  // ops an outer tape can differentiate
    if (relu) dz = ReluGrad(grad, call.output);
    if (call.NeedsGradient(2)) db = internal::SumToShape(dz, bias_shape);
  } else if (call.NeedsGradient(2) || relu) {
    std::tie(dz, db) = FusedReluBiasGrad(grad, call.output, relu, bias_shape);
    if (!call.NeedsGradient(2)) db.reset();
  }
  OpCall conv;
  conv.op = &kConv2DOp;
  conv.inputs = {call.inputs[0], call.inputs[1]};
  conv.attrs = call.attrs;
  conv.skip_gradient = call.skip_gradient & 3u;
  Grads grads = kConv2DOp.gradient(conv, dz);
  grads.resize(3);
  grads[2] = std::move(db);
  return grads;
}

}  // namespace

const OpDef kFusedConv2DOp = {.type = "_FusedConv2D",
                              .num_inputs = 3,
                              .infer = InferFusedConv2D,
                              .compute = FusedConv2DKernel,
                              .gradient = FusedConv2DGradient,
                              .eager_only = true};

Tensor FusedConv2D(const Tensor& input, const Tensor& filter, const Tensor& bias, bool relu,
                   const Conv2DOptions& options) {
  if (Graph::Current() != nullptr) {  // TF's nodes; grappler would fuse them
    const Tensor y = BiasAdd(Conv2D(input, filter, options), bias);
    return relu ? Relu(y) : y;
  }
  Attrs attrs{{"strides", options.strides},     {"use_cudnn_on_gpu", true},
              {"padding", options.padding},     {"data_format", std::string("NHWC")},
              {"dilations", options.dilations}, {"relu", relu}};
  return Execute(kFusedConv2DOp, {input, filter, bias}, attrs);
}

}  // namespace eager
