#include "ops/nn_ops.h"

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/execute.h"
#include "ops/internal/broadcast.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/eigen_view.h"
#include "ops/reduction_ops.h"
#include "ops/unary_ops.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using internal::DTypeSet;
using Grads = std::vector<std::optional<Tensor>>;

OutputSpec InferLastAxis(std::span<const Tensor> in, const Attrs&) {
  internal::CheckDTypeIn(in[0], "logits", DTypeSet::kFloat);
  if (in[0].rank() < 1) {
    throw InvalidArgumentError(StrCat("logits must have rank >= 1, got shape ", in[0].shape()));
  }
  return {in[0].shape(), in[0].dtype()};
}

// Rows x classes views of the last axis; softmax is computed per row with the
// row maximum subtracted, so exp never overflows.
template <bool kLog>
Tensor SoftmaxKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& x = in[0];
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  const int64_t cols = x.shape().dim(x.rank() - 1);
  if (x.num_elements() == 0) return out;
  const int64_t rows = x.num_elements() / cols;
  internal::Dispatch<DTypeSet::kFloat>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    internal::ConstArray2DMap<T> xm(x.data<T>().data(), rows, cols);
    internal::Array2DMap<T> om(internal::MutableData<T>(out), rows, cols);
    om = xm.colwise() - xm.rowwise().maxCoeff();  // shifted logits
    if constexpr (kLog) {
      om.colwise() -= om.exp().rowwise().sum().log();
    } else {
      om = om.exp();
      om.colwise() /= om.rowwise().sum();
    }
  });
  return out;
}

// TF's _SoftmaxGrad: (g - sum(g * y, -1)) * y.
Grads SoftmaxGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& y = call.output;
  Tensor dot = ReduceSum(Mul(grad, y), {-1}, /*keepdims=*/true);
  return {Mul(Sub(grad, dot), y)};
}

// TF's _LogSoftmaxGrad: g - sum(g, -1) * softmax(x).
Grads LogSoftmaxGradient(const OpCall& call, const Tensor& grad) {
  Tensor softmax = Exp(call.output);
  return {Sub(grad, Mul(ReduceSum(grad, {-1}, /*keepdims=*/true), softmax))};
}

// Inputs in TensorFlow's order: (features = logits, labels).
OutputSpec InferSparseXent(std::span<const Tensor> in, const Attrs&) {
  const Tensor& logits = in[0];
  const Tensor& labels = in[1];
  internal::CheckDTypeIn(logits, "logits", DTypeSet::kFloat);
  internal::CheckDTypeIn(labels, "labels", DTypeSet::kIndex);
  if (logits.rank() != 2 || labels.rank() != 1 || labels.shape().dim(0) != logits.shape().dim(0)) {
    throw InvalidArgumentError(
        StrCat("expected logits [batch, classes] and labels [batch], got "
               "logits ",
               logits.shape(), " and labels ", labels.shape()));
  }
  return {Shape{logits.shape().dim(0)}, logits.dtype()};
}

Tensor SparseXentKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& logits = in[0];
  const Tensor& labels = in[1];
  const int64_t rows = logits.shape().dim(0);
  const int64_t cols = logits.shape().dim(1);
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kFloat>(logits.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = logits.data<T>().data();
    T* loss = internal::MutableData<T>(out);
    internal::Dispatch<DTypeSet::kIndex>(labels.dtype(), [&](auto label_tag) {
      using L = typename decltype(label_tag)::type;
      auto label = labels.data<L>();
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t c = static_cast<int64_t>(label[r]);
        if (c < 0 || c >= cols) {
          throw InvalidArgumentError(
              StrCat("SparseSoftmaxCrossEntropyWithLogits: Received a label value of ", c,
                     " which is outside the valid range of [0, ", cols, ") at labels[", r,
                     "] (labels shape ", labels.shape(), ", logits shape ", logits.shape(), ")"));
        }
        internal::ConstArrayMap<T> row(x + r * cols, cols);
        const T m = row.maxCoeff();
        // -log softmax(x)[c] = log(sum exp(x - m)) - (x[c] - m).
        loss[r] = std::log((row - m).exp().sum()) - (x[r * cols + c] - m);
      }
    });
  });
  return out;
}

// (softmax(logits) - one_hot(labels)) * grad[:, None]; labels get none.
Grads SparseXentGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& logits = call.inputs[0];
  const Tensor& labels = call.inputs[1];
  Tensor onehot = OneHot(labels, logits.shape().dim(1), 1.0, 0.0, logits.dtype());
  Tensor g = Reshape(grad, {grad.shape().dim(0), 1});
  return {Mul(Sub(Softmax(logits), onehot), g), std::nullopt};
}

// ---- BiasAdd ---------------------------------------------------------------------------

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

const OpDef kSoftmaxOp = {.type = "Softmax",
                          .num_inputs = 1,
                          .infer = InferLastAxis,
                          .compute = SoftmaxKernel<false>,
                          .gradient = SoftmaxGradient};
const OpDef kLogSoftmaxOp = {.type = "LogSoftmax",
                             .num_inputs = 1,
                             .infer = InferLastAxis,
                             .compute = SoftmaxKernel<true>,
                             .gradient = LogSoftmaxGradient};
constexpr TypeAttr kSparseXentTypes[] = {{"T", 0}, {"Tlabels", 1}};

const OpDef kSparseSoftmaxCrossEntropyOp = {.type = "SparseSoftmaxCrossEntropyWithLogits",
                                            .num_inputs = 2,
                                            .infer = InferSparseXent,
                                            .compute = SparseXentKernel,
                                            .gradient = SparseXentGradient,
                                            .type_attrs = kSparseXentTypes};

Tensor Softmax(const Tensor& logits) { return Execute(kSoftmaxOp, logits); }
Tensor LogSoftmax(const Tensor& logits) { return Execute(kLogSoftmaxOp, logits); }
Tensor SparseSoftmaxCrossEntropyWithLogits(const Tensor& labels, const Tensor& logits) {
  return Execute(kSparseSoftmaxCrossEntropyOp, logits, labels);
}

const OpDef kBiasAddOp = {.type = "BiasAdd",
                          .num_inputs = 2,
                          .infer = InferBiasAdd,
                          .compute = BiasAddKernel,
                          .gradient = BiasAddGradient};

Tensor BiasAdd(const Tensor& value, const Tensor& bias) { return Execute(kBiasAddOp, value, bias); }

}  // namespace eager
