#include "ops/fused_normalization.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "ops/binary_ops.h"
#include "ops/execute.h"
#include "ops/fp_contract_off.h"
#include "ops/internal/eigen_view.h"
#include "ops/parallel.h"
#include "ops/recorder.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using Grads = std::vector<std::optional<Tensor>>;
using internal::ArrayMap;
using internal::ConstArrayMap;

// x as [rows, channels].
struct Rows {
  int64_t rows;
  int64_t channels;
};
Rows RowsOf(const Tensor& x) {
  const int64_t channels = x.shape().dim(x.rank() - 1);
  return {channels == 0 ? 0 : x.num_elements() / channels, channels};
}

// Rows per block: fixed by the channel count alone, so the partial sums,
// combined in block order, give the same bits on any thread count.
int64_t BlockRows(int64_t channels) {
  return std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(channels, 1));
}

// Runs fn(row_begin, row_end, partial) for each block of rows, partial the
// block's `width` doubles (zeroed), then sums the blocks' partials in order.
template <typename F>
std::vector<double> BlockSums(int64_t rows, int64_t width, int64_t block_rows, F fn) {
  const int64_t blocks = (rows + block_rows - 1) / block_rows;
  std::vector<double> partial(static_cast<size_t>(blocks * width), 0.0);
  internal::ParallelFor(blocks, 1, 2, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      fn(b * block_rows, std::min(rows, (b + 1) * block_rows), partial.data() + b * width);
    }
  });
  std::vector<double> sum(static_cast<size_t>(width), 0.0);
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t i = 0; i < width; ++i) sum[i] += partial[b * width + i];
  }
  return sum;
}

void CheckX(const Tensor& x, const char* op) {
  if (x.rank() < 1 || (x.dtype() != DType::kFloat32 && x.dtype() != DType::kFloat64)) {
    throw InvalidArgumentError(
        StrCat(op, ": expected a float input [..., channels], got ", x.dtype(), " ", x.shape()));
  }
}

void CheckScaleShift(const Tensor& x, const Tensor& scale, const Tensor& shift) {
  CheckX(x, "_ChannelScaleShift");
  const int64_t channels = x.shape().dim(x.rank() - 1);
  for (const Tensor* t : {&scale, &shift}) {
    if (t->rank() != 1 || t->shape().dim(0) != channels || t->dtype() != x.dtype()) {
      throw InvalidArgumentError(StrCat("_ChannelScaleShift: expected scale and shift ", x.dtype(),
                                        " [", channels, "] for x ", x.shape(), "; got scale ",
                                        scale.dtype(), " ", scale.shape(), " and shift ",
                                        shift.dtype(), " ", shift.shape()));
    }
  }
}

OutputSpec InferMoments(std::span<const Tensor> in, const Attrs&) {
  CheckX(in[0], "_BatchMoments");
  return {Shape{2, in[0].shape().dim(in[0].rank() - 1)}, in[0].dtype()};
}
OutputSpec InferScaleShift(std::span<const Tensor> in, const Attrs&) {
  CheckScaleShift(in[0], in[1], in[2]);
  return {in[0].shape(), in[0].dtype()};
}

std::vector<int64_t> BatchAxes(const Tensor& x) {
  std::vector<int64_t> axes(static_cast<size_t>(x.rank() - 1));
  std::iota(axes.begin(), axes.end(), 0);
  return axes;
}

// Row `row` of a [2, channels] matrix as a vector.
Tensor RowOf(const Tensor& m, int64_t row) {
  return StridedSlice(m, {row, 0}, {row + 1, 0}, {1, 1}, {.begin = 2, .end = 2, .shrink_axis = 1});
}

// The unfused ops, for graph mode and dtypes other than float32.
Tensor UnfusedMoments(const Tensor& x) {
  const std::vector<int64_t> axes = BatchAxes(x);
  const Tensor mean = ReduceMean(x, axes);
  const Tensor variance = ReduceMean(SquaredDifference(x, StopGradient(mean)), axes);
  return Pack({mean, variance}, 0);
}

template <typename T>
Tensor MomentsKernelImpl(std::span<const Tensor> in, const Attrs& /*attrs*/,
                         const OutputSpec& spec) {
  const Tensor& x = in[0];
  const Rows dims = RowsOf(x);
  const int64_t rows = dims.rows, channels = dims.channels;
  const T* xd = x.data<T>().data();
  const int64_t block = BlockRows(channels);
  const std::vector<double> sum =
      BlockSums(rows, channels, block, [&](int64_t r0, int64_t r1, double* p) {
        for (int64_t r = r0; r < r1; ++r) {
          const T* row = xd + r * channels;
          for (int64_t c = 0; c < channels; ++c) p[c] += row[c];
        }
      });
  const double n = static_cast<double>(std::max<int64_t>(rows, 1));
  std::vector<double> mean(sum.size());
  for (size_t c = 0; c < sum.size(); ++c) mean[c] = sum[c] / n;
  const std::vector<double> squares =
      BlockSums(rows, channels, block, [&](int64_t r0, int64_t r1, double* p) {
        for (int64_t r = r0; r < r1; ++r) {
          const T* row = xd + r * channels;
          for (int64_t c = 0; c < channels; ++c) {
            const double d = static_cast<double>(row[c]) - mean[c];
            p[c] += d * d;
          }
        }
      });
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  T* o = internal::MutableData<T>(out);
  for (int64_t c = 0; c < channels; ++c) {
    o[c] = static_cast<T>(mean[c]);
    o[channels + c] = static_cast<T>(squares[c] / n);
  }
  return out;
}

Tensor MomentsKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  return in[0].dtype() == DType::kFloat64 ? MomentsKernelImpl<double>(in, attrs, spec)
                                          : MomentsKernelImpl<float>(in, attrs, spec);
}

// dx = dmean / n + dvariance * 2 (x - mean) / n.
template <typename T>
Grads MomentsGradientImpl(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Rows dims = RowsOf(x);
  const int64_t rows = dims.rows, channels = dims.channels;
  const double n = static_cast<double>(std::max<int64_t>(rows, 1));
  if (IsRecording()) {
    const Tensor mean = StopGradient(RowOf(call.output, 0));
    const Tensor inv_n = Tensor::Scalar<T>(static_cast<T>(1.0 / n));
    const Tensor two_n = Tensor::Scalar<T>(static_cast<T>(2.0 / n));
    const Tensor a = Mul(RowOf(grad, 0), inv_n);
    const Tensor b = Mul(RowOf(grad, 1), two_n);
    return {Add(Mul(Sub(x, mean), b), a)};
  }
  const T* g = grad.data<T>().data();
  const T* m = call.output.data<T>().data();
  std::vector<T> a(static_cast<size_t>(channels)), b(a.size());
  for (int64_t c = 0; c < channels; ++c) {
    a[c] = static_cast<T>(g[c] / n);
    b[c] = static_cast<T>(2.0 * g[channels + c] / n);
  }
  Tensor dx = internal::NewTensor(x.shape(), x.dtype());
  const T* xd = x.data<T>().data();
  T* dxd = internal::MutableData<T>(dx);
  const ConstArrayMap<T> av(a.data(), channels), bv(b.data(), channels), mv(m, channels);
  internal::ParallelFor(rows, BlockRows(channels), 2, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      ArrayMap<T>(dxd + r * channels, channels) =
          (ConstArrayMap<T>(xd + r * channels, channels) - mv) * bv + av;
    }
  });
  return {std::move(dx)};
}

Grads MomentsGradient(const OpCall& call, const Tensor& grad) {
  return call.inputs[0].dtype() == DType::kFloat64 ? MomentsGradientImpl<double>(call, grad)
                                                   : MomentsGradientImpl<float>(call, grad);
}

template <typename T>
Tensor ScaleShiftKernelImpl(std::span<const Tensor> in, const Attrs& /*attrs*/,
                            const OutputSpec& spec) {
  const Tensor& x = in[0];
  const Rows dims = RowsOf(x);
  const int64_t rows = dims.rows, channels = dims.channels;
  Tensor y = internal::NewTensor(spec.shape, spec.dtype);
  const T* xd = x.data<T>().data();
  T* yd = internal::MutableData<T>(y);
  const ConstArrayMap<T> a(in[1].data<T>().data(), channels);
  const ConstArrayMap<T> b(in[2].data<T>().data(), channels);
  internal::ParallelFor(rows, BlockRows(channels), 2, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      // x * a, rounded, then + b: Mul's and Add's roundings.
      ArrayMap<T>(yd + r * channels, channels) =
          ConstArrayMap<T>(xd + r * channels, channels) * a + b;
    }
  });
  return y;
}

Tensor ScaleShiftKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  return in[0].dtype() == DType::kFloat64 ? ScaleShiftKernelImpl<double>(in, attrs, spec)
                                          : ScaleShiftKernelImpl<float>(in, attrs, spec);
}

// dx = dy * a, da = sum(dy * x), db = sum(dy) over the batch axes.
template <typename T>
Grads ScaleShiftGradientImpl(const OpCall& call, const Tensor& dy) {
  const Tensor& x = call.inputs[0];
  const Tensor& scale = call.inputs[1];
  if (IsRecording()) {
    const std::vector<int64_t> axes = BatchAxes(x);
    Grads grads(3);
    if (call.NeedsGradient(0)) grads[0] = Mul(dy, scale);
    if (call.NeedsGradient(1)) grads[1] = ReduceSum(Mul(dy, x), axes);
    if (call.NeedsGradient(2)) grads[2] = ReduceSum(dy, axes);
    return grads;
  }
  const Rows dims = RowsOf(x);
  const int64_t rows = dims.rows, channels = dims.channels;
  const T* xd = x.data<T>().data();
  const T* g = dy.data<T>().data();
  const bool need_dx = call.NeedsGradient(0);
  Tensor dx = need_dx ? internal::NewTensor(x.shape(), x.dtype()) : Tensor();
  T* dxd = need_dx ? internal::MutableData<T>(dx) : nullptr;
  const ConstArrayMap<T> a(scale.data<T>().data(), channels);
  // One pass: dx, and per block sum(dy * x) then sum(dy) side by side.
  const std::vector<double> sums =
      BlockSums(rows, 2 * channels, BlockRows(channels), [&](int64_t r0, int64_t r1, double* p) {
        for (int64_t r = r0; r < r1; ++r) {
          const T* gr = g + r * channels;
          const T* xr = xd + r * channels;
          if (need_dx) {
            ArrayMap<T>(dxd + r * channels, channels) = ConstArrayMap<T>(gr, channels) * a;
          }
          for (int64_t c = 0; c < channels; ++c) {
            p[c] += static_cast<double>(gr[c]) * xr[c];
            p[channels + c] += gr[c];
          }
        }
      });
  const auto vector_of = [&](size_t offset) {
    Tensor v = internal::NewTensor(Shape{channels}, x.dtype());
    T* vd = internal::MutableData<T>(v);
    for (int64_t c = 0; c < channels; ++c) vd[c] = static_cast<T>(sums[offset + c]);
    return v;
  };
  Grads grads(3);
  if (need_dx) grads[0] = std::move(dx);
  if (call.NeedsGradient(1)) grads[1] = vector_of(0);
  if (call.NeedsGradient(2)) grads[2] = vector_of(static_cast<size_t>(channels));
  return grads;
}

Grads ScaleShiftGradient(const OpCall& call, const Tensor& dy) {
  return call.inputs[0].dtype() == DType::kFloat64 ? ScaleShiftGradientImpl<double>(call, dy)
                                                   : ScaleShiftGradientImpl<float>(call, dy);
}

bool Fused(const Tensor& x) { return Graph::Current() == nullptr && x.dtype() == DType::kFloat32; }

}  // namespace

const OpDef kBatchMomentsOp = {.type = "_BatchMoments",
                               .num_inputs = 1,
                               .infer = InferMoments,
                               .compute = MomentsKernel,
                               .gradient = MomentsGradient,
                               .eager_only = true};
const OpDef kChannelScaleShiftOp = {.type = "_ChannelScaleShift",
                                    .num_inputs = 3,
                                    .infer = InferScaleShift,
                                    .compute = ScaleShiftKernel,
                                    .gradient = ScaleShiftGradient,
                                    .eager_only = true};

Tensor BatchMoments(const Tensor& x) {
  CheckX(x, "_BatchMoments");
  if (!Fused(x)) return UnfusedMoments(x);
  return Execute(kBatchMomentsOp, x);
}

Tensor ChannelScaleShift(const Tensor& x, const Tensor& scale, const Tensor& shift) {
  CheckScaleShift(x, scale, shift);
  if (!Fused(x)) return Add(Mul(x, scale), shift);
  return Execute(kChannelScaleShiftOp, {x, scale, shift});
}

}  // namespace eager
