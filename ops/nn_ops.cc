#include "ops/nn_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/execute.h"
#include "ops/internal/broadcast.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/eigen_view.h"
#include "ops/internal/graph_builder.h"
#include "ops/internal/memory_limit.h"
#include "ops/reduction_ops.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
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

// ---- TopKV2 ----
// TF's TopKV2 has two outputs, eager's ops one: eagerly the indices are one
// call ("_TopKIndices", not differentiable) and the values another
// ("_TopKValues": input gathered at the indices along the last axis), whose
// gradient is TF's _TopKGrad: grad scattered into zeros at the indices. A
// graph holds TF's one TopKV2 node (RunTopKV2).

// Rows x columns of `input` for top k; throws TF's errors for a scalar, a
// negative k or one past the last dimension.
void CheckTopK(const Shape& shape, int64_t k) {
  if (shape.rank() < 1) {
    throw InvalidArgumentError(StrCat("input must be at least 1-dimensional, got shape ", shape));
  }
  if (k < 0) throw InvalidArgumentError(StrCat("Need k >= 0, got ", k));
  const int64_t cols = shape.dim(shape.rank() - 1);
  if (cols != Shape::kUnknownDim && cols < k) {
    throw InvalidArgumentError(StrCat("input must have at least k columns. Had ", cols, ", needed ",
                                      k, " (input shape ", shape, ")"));
  }
}

Shape TopKShape(const Shape& shape, int64_t k) {
  std::vector<int64_t> dims = shape.ToVector();
  dims.back() = k;
  return Shape::Partial(dims);
}

OutputSpec InferTopKIndices(std::span<const Tensor> in, const Attrs& attrs) {
  internal::CheckDTypeIn(in[0], "input", DTypeSet::kNumeric);
  if (in[0].shape().unknown_rank()) return {Shape::UnknownRank(), DType::kInt32};
  const int64_t k = attrs.GetInt("k");
  CheckTopK(in[0].shape(), k);
  return {TopKShape(in[0].shape(), k), DType::kInt32};
}

// Per row, the k largest by value, ties by the lower index first (TF's
// order); sorted or not, eager returns them in that order.
Tensor TopKIndicesKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& x = in[0];
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  const int64_t k = spec.shape.dim(spec.shape.rank() - 1);
  const int64_t cols = x.shape().dim(x.rank() - 1);
  if (spec.shape.num_elements() == 0) return out;
  const int64_t rows = x.num_elements() / cols;
  int32_t* o = internal::MutableData<int32_t>(out);
  internal::Dispatch<DTypeSet::kNumeric>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<int32_t> order(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = x.data<T>().data() + r * cols;
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [row](int32_t a, int32_t b) {
        return row[a] > row[b] || (row[a] == row[b] && a < b);
      });
      std::copy(order.begin(), order.begin() + k, o + r * k);
    }
  });
  return out;
}

OutputSpec InferTopKValues(std::span<const Tensor> in, const Attrs&) {
  internal::CheckDTypeIn(in[0], "input", DTypeSet::kNumeric);
  if (in[1].dtype() != DType::kInt32) {
    throw InvalidArgumentError(StrCat("indices must be int32, got ", in[1].dtype()));
  }
  const Shape& x = in[0].shape();
  const Shape& i = in[1].shape();
  if (x.unknown_rank() || i.unknown_rank()) return {i, in[0].dtype()};
  bool same_rows = x.rank() == i.rank() && x.rank() >= 1;
  for (int d = 0; same_rows && d + 1 < x.rank(); ++d) {
    same_rows =
        x.dim(d) == i.dim(d) || x.dim(d) == Shape::kUnknownDim || i.dim(d) == Shape::kUnknownDim;
  }
  if (!same_rows) {
    throw InvalidArgumentError(StrCat("indices ", i, " must have the rows of input ", x));
  }
  return {i, in[0].dtype()};
}

Tensor TopKValuesKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& x = in[0];
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  const int64_t k = spec.shape.dim(spec.shape.rank() - 1);
  const int64_t cols = x.shape().dim(x.rank() - 1);
  if (spec.shape.num_elements() == 0) return out;
  const int64_t rows = spec.shape.num_elements() / k;
  const int32_t* idx = in[1].data<int32_t>().data();
  internal::Dispatch<DTypeSet::kNumeric>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = x.data<T>().data();
    T* o = internal::MutableData<T>(out);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < k; ++j) {
        const int32_t c = idx[r * k + j];
        if (c < 0 || c >= cols) {
          throw InvalidArgumentError(
              StrCat("index ", c, " at row ", r, " is outside [0, ", cols, ")"));
        }
        o[r * k + j] = src[r * cols + c];
      }
    }
  });
  return out;
}

// TF's _TopKGrad: grad[r, j] goes to input[r, indices[r, j]], zeros elsewhere
// (the indices of a row are distinct, so the segment sum only places them).
Grads TopKValuesGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor& indices = call.inputs[1];
  const int64_t cols = x.shape().dim(x.rank() - 1);
  const int64_t k = indices.shape().dim(indices.rank() - 1);
  std::vector<int64_t> flat(static_cast<size_t>(indices.num_elements()));
  const auto idx = indices.data<int32_t>();
  for (size_t i = 0; i < flat.size(); ++i) {
    flat[i] = static_cast<int64_t>(i) / k * cols + idx[i];
  }
  const Tensor positions = Tensor::FromVector<int64_t>(std::move(flat), indices.shape());
  return {Reshape(UnsortedSegmentSum(grad, positions, x.num_elements()), x.shape().ToVector()),
          std::nullopt};
}

NodeOutputs RunTopKV2(const NodeContext& c) {
  if (!c.refs.empty() || c.inputs.size() != 2) {
    throw InvalidArgumentError(StrCat("node '", c.node.name, "' (TopKV2) takes 2 inputs (input, ",
                                      "k), has ", c.refs.size() + c.inputs.size()));
  }
  const Tensor& k = c.inputs[1];
  if (k.rank() != 0 || (k.dtype() != DType::kInt32 && k.dtype() != DType::kInt64)) {
    throw InvalidArgumentError(StrCat("k must be an int32 or int64 scalar, got a ", k.dtype(),
                                      " tensor of shape ", k.shape()));
  }
  if (const DType* index_type = AttrAs<DType>(c.node.FindAttr("index_type"));
      index_type != nullptr && *index_type != DType::kInt32) {
    throw UnimplementedError(StrCat("node '", c.node.name, "' (TopKV2) has index_type ",
                                    *index_type, "; eager computes int32 indices only"));
  }
  const int64_t kv = k.dtype() == DType::kInt32 ? k.data<int32_t>()[0] : k.data<int64_t>()[0];
  try {
    CheckTopK(c.inputs[0].shape(), kv);
  } catch (const InvalidArgumentError& e) {
    throw InvalidArgumentError(StrCat("node '", c.node.name, "' (TopKV2): ", e.what()));
  }
  const bool sorted = c.attrs.GetBool("sorted");
  Tensor indices =
      RunKernel(kTopKIndicesOp, c.inputs.first(1), Attrs{{"k", kv}, {"sorted", sorted}});
  const Tensor both[] = {c.inputs[0], indices};
  Tensor values = RunKernel(kTopKValuesOp, both);
  return {{std::move(values), std::move(indices)}};
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

const OpDef kTopKV2Op = {.type = "TopKV2", .num_inputs = 2, .run = RunTopKV2, .num_outputs = 2};
const OpDef kTopKIndicesOp = {.type = "_TopKIndices",
                              .num_inputs = 1,
                              .infer = InferTopKIndices,
                              .compute = TopKIndicesKernel,
                              .gradient = nullptr,  // integer indices
                              .eager_only = true};
const OpDef kTopKValuesOp = {.type = "_TopKValues",
                             .num_inputs = 2,
                             .infer = InferTopKValues,
                             .compute = TopKValuesKernel,
                             .gradient = TopKValuesGradient,
                             .eager_only = true};

TopKOutputs TopK(const Tensor& input, int64_t k, bool sorted) {
  try {
    internal::CheckDTypeIn(input, "input", DTypeSet::kNumeric);
    if (!input.shape().unknown_rank()) CheckTopK(input.shape(), k);
  } catch (const InvalidArgumentError& e) {
    throw InvalidArgumentError(StrCat("TopKV2: ", e.what()));
  }
  Graph* graph = Graph::Current();
  if (graph == nullptr) {
    Tensor indices = Execute(kTopKIndicesOp, input, Attrs{{"k", k}, {"sorted", sorted}});
    Tensor values = Execute(kTopKValuesOp, input, indices);
    return {std::move(values), std::move(indices)};
  }
  if (k > std::numeric_limits<int32_t>::max()) {
    throw InvalidArgumentError(StrCat("TopKV2: k = ", k, " does not fit its int32 input"));
  }
  Node node{.name = graph->UniqueName("TopKV2"), .op = "TopKV2"};
  node.inputs = {internal::GraphInput(*graph, input),
                 internal::GraphInput(*graph, Tensor(static_cast<int32_t>(k)), "TopKV2/k")};
  node.attrs = {{"T", input.dtype()},
                {"sorted", sorted},
                {"Tk", DType::kInt32},
                {"index_type", DType::kInt32}};
  const Shape shape =
      input.shape().unknown_rank() ? Shape::UnknownRank() : TopKShape(input.shape(), k);
  node.output_specs = {{shape, input.dtype()}, {shape, DType::kInt32}};
  const int index = graph->AddNode(std::move(node));
  return {graph->Output(index, 0), graph->Output(index, 1)};
}

// ---- L2Loss (weight decay in TF1 graphs) -----------------------------------------------

namespace {

OutputSpec InferL2Loss(std::span<const Tensor> in, const Attrs&) {
  internal::CheckDTypeIn(in[0], "t", DTypeSet::kFloat);
  return {Shape{}, in[0].dtype()};
}
// TF's kernel: (t.square() * 0.5).sum().
Tensor L2LossKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kFloat>(in[0].dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    *internal::MutableData<T>(out) = (internal::FlatView<T>(in[0]).square() * T(0.5)).sum();
  });
  return out;
}
// TF's _L2LossGrad: t * grad.
Grads L2LossGradient(const OpCall& call, const Tensor& grad) { return {Mul(call.inputs[0], grad)}; }

}  // namespace

const OpDef kL2LossOp = {.type = "L2Loss",
                         .num_inputs = 1,
                         .infer = InferL2Loss,
                         .compute = L2LossKernel,
                         .gradient = L2LossGradient};
Tensor L2Loss(const Tensor& t) { return Execute(kL2LossOp, {t}); }

// ---- SoftmaxCrossEntropyWithLogits (TF1's dense-label cross entropy) -------------------

namespace {

// Graph-only: features and labels [batch, classes] of one float dtype, each
// dimension equal or 1 in one of them (TF's broadcast); outputs loss [batch]
// and backprop [batch, classes], in the order of TF's kernel:
// shifted = x - max(x), loss = sum(labels * (log(sum(exp(shifted))) - shifted)),
// backprop = exp(shifted) / sum(exp(shifted)) - labels.
NodeOutputs RunSoftmaxXent(const NodeContext& c) {
  const auto where = [&] { return StrCat("node '", c.node.name, "' (", c.node.op, ")"); };
  EAGER_CHECK(c.inputs.size() == 2 && c.refs.empty(), where(), " takes 2 inputs, has ",
              c.inputs.size() + c.refs.size());
  const Tensor& x = c.inputs[0];
  const Tensor& labels = c.inputs[1];
  internal::CheckDTypeIn(x, "features", DTypeSet::kFloat);
  if (labels.dtype() != x.dtype() || x.rank() != 2 || labels.rank() != 2) {
    throw InvalidArgumentError(StrCat(where(), ": logits and labels must be 2-dimensional ",
                                      "tensors of one float dtype, got ", x.dtype(), " ", x.shape(),
                                      " and ", labels.dtype(), " ", labels.shape()));
  }
  int64_t dims[2];
  for (int d = 0; d < 2; ++d) {
    const int64_t a = x.shape().dim(d), b = labels.shape().dim(d);
    if (a != b && a != 1 && b != 1) {
      throw InvalidArgumentError(
          StrCat(where(), ": logits and labels must be broadcastable: ", "logits_size=", x.shape(),
                 " labels_size=", labels.shape()));
    }
    dims[d] = a == 1 ? b : a;
  }
  const int64_t batch = dims[0], classes = dims[1];
  internal::CheckTensorBytes(c.node.op, Shape{batch, classes}, x.dtype());
  Tensor loss = internal::NewTensor(Shape{batch}, x.dtype());
  Tensor backprop = internal::NewTensor(Shape{batch, classes}, x.dtype());
  internal::Dispatch<DTypeSet::kFloat>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = x.data<T>().data();
    const T* lp = labels.data<T>().data();
    T* lo = internal::MutableData<T>(loss);
    T* bp = internal::MutableData<T>(backprop);
    const int64_t xc = x.shape().dim(1) == 1 ? 0 : 1, lc = labels.shape().dim(1) == 1 ? 0 : 1;
    const int64_t xr = x.shape().dim(0) == 1 ? 0 : x.shape().dim(1);
    const int64_t lr = labels.shape().dim(0) == 1 ? 0 : labels.shape().dim(1);
    for (int64_t b = 0; b < batch; ++b) {
      const T* row = xp + b * xr;
      const T* lab = lp + b * lr;
      T* out = bp + b * classes;
      T max = row[0];
      for (int64_t j = 1; j < classes; ++j) max = std::max(max, row[j * xc]);
      T sum = 0;
      for (int64_t j = 0; j < classes; ++j) {
        out[j] = row[j * xc] - max;
        sum += std::exp(out[j]);
      }
      const T log_sum = std::log(sum);
      T l = 0;
      for (int64_t j = 0; j < classes; ++j) l += lab[j * lc] * (log_sum - out[j]);
      lo[b] = l;
      for (int64_t j = 0; j < classes; ++j) out[j] = std::exp(out[j]) / sum - lab[j * lc];
    }
  });
  return {{std::move(loss), std::move(backprop)}};
}

}  // namespace

const OpDef kSoftmaxCrossEntropyOp = {.type = "SoftmaxCrossEntropyWithLogits",
                                      .num_inputs = 2,
                                      .run = RunSoftmaxXent,
                                      .num_outputs = 2};

}  // namespace eager
