#include "ops/matmul.h"

#include <algorithm>
#include <type_traits>

#include "ops/execute.h"
#include "ops/internal/blocked_gemm.h"
#include "ops/internal/broadcast.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/eigen_view.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using internal::DTypeSet;
using Grads = std::vector<std::optional<Tensor>>;

OutputSpec InferMatMul(std::span<const Tensor> in, const Attrs& attrs) {
  const Tensor& a = in[0];
  const Tensor& b = in[1];
  internal::CheckSameDType(a, b, "a", "b");
  internal::CheckDTypeIn(a, "a", DTypeSet::kNumeric);
  if (a.rank() != 2 || b.rank() != 2) {
    throw InvalidArgumentError(
        StrCat("expected rank-2 matrices, got a: ", a.shape(), " and b: ", b.shape()));
  }
  const bool ta = attrs.GetBool("transpose_a");
  const bool tb = attrs.GetBool("transpose_b");
  const int64_t k_a = a.shape().dim(ta ? 0 : 1);
  const int64_t k_b = b.shape().dim(tb ? 1 : 0);
  if (k_a != k_b) {
    throw InvalidArgumentError(StrCat("Matrix size-incompatible: In[0]: ", a.shape(), ", In[1]: ",
                                      b.shape(), " (transpose_a=", ta, ", transpose_b=", tb,
                                      "): inner dimensions ", k_a, " and ", k_b, " differ"));
  }
  return {Shape{a.shape().dim(ta ? 1 : 0), b.shape().dim(tb ? 0 : 1)}, a.dtype()};
}

Tensor MatMulKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Tensor& a = in[0];
  const Tensor& b = in[1];
  const bool ta = attrs.GetBool("transpose_a");
  const bool tb = attrs.GetBool("transpose_b");
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  const int64_t m = spec.shape.dim(0);
  const int64_t n = spec.shape.dim(1);
  const int64_t k = a.shape().dim(ta ? 0 : 1);
  internal::Dispatch<DTypeSet::kNumeric>(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto c = internal::MutableMatrixView<T>(out, m, n);
    if (m == 0 || n == 0) return;
    if (k == 0) {
      c.setZero();  // an empty inner dimension sums nothing
      return;
    }
    // float and double: OpenBLAS (benchmarks/README.md says why: 1.4-1.9x
    // Eigen's GEMM on this machine's AVX-512 cores), beta = 0, so the output
    // is written, never zero-filled first. Integers: Eigen's GEMM over
    // row-major maps; a transposed operand is a transposed view, never a copy.
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const T* ap = a.data<T>().data();
      const T* bp = b.data<T>().data();
      T* cp = internal::MutableData<T>(out);
      const int64_t lda = a.shape().dim(1);
      const int64_t ldb = b.shape().dim(1);
      // The larger output dimension is cut into blocks, each one
      // single-threaded GEMM, chosen so that any thread count gives the
      // same bits (ops/internal/gemm.h).
      internal::BlockedGemm<T>(ta, tb, m, n, k, ap, lda, bp, ldb, cp,
                               [](int64_t, int64_t, int64_t, int64_t) {});
      return;
    }
    auto am = internal::MatrixView<T>(a, a.shape().dim(0), a.shape().dim(1));
    auto bm = internal::MatrixView<T>(b, b.shape().dim(0), b.shape().dim(1));
    if (!ta && !tb) {
      c.noalias() = am * bm;
    } else if (!ta && tb) {
      c.noalias() = am * bm.transpose();
    } else if (ta && !tb) {
      c.noalias() = am.transpose() * bm;
    } else {
      c.noalias() = am.transpose() * bm.transpose();
    }
  });
  return out;
}

// TF's _MatMulGrad, one case per transpose combination, so that no explicit
// transpose is ever materialized. An input nobody differentiates (the
// images of a first layer) costs nothing.
Grads MatMulGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& a = call.inputs[0];
  const Tensor& b = call.inputs[1];
  const bool ta = call.attrs.GetBool("transpose_a");
  const bool tb = call.attrs.GetBool("transpose_b");
  Grads grads(2);
  if (call.NeedsGradient(0)) {
    if (!ta) {
      grads[0] = tb ? MatMul(grad, b, false, false) : MatMul(grad, b, false, true);
    } else {
      grads[0] = tb ? MatMul(b, grad, true, true) : MatMul(b, grad, false, true);
    }
  }
  if (call.NeedsGradient(1)) {
    if (!tb) {
      grads[1] = ta ? MatMul(a, grad, false, false) : MatMul(a, grad, true, false);
    } else {
      grads[1] = ta ? MatMul(grad, a, true, true) : MatMul(grad, a, true, false);
    }
  }
  return grads;
}

}  // namespace

const OpDef kMatMulOp = {.type = "MatMul",
                         .num_inputs = 2,
                         .infer = InferMatMul,
                         .compute = MatMulKernel,
                         .gradient = MatMulGradient};

Tensor MatMul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  return Execute(kMatMulOp, a, b,
                 Attrs{{"transpose_a", transpose_a}, {"transpose_b", transpose_b}});
}

// ---- BatchMatMulV2 -----------------------------------------------------------------------
// Keras's attention and EinsumDense graphs: matrix products over the last
// two dimensions, the batch dimensions before them broadcast (NumPy's
// matmul), adj_x / adj_y transposing a side (real dtypes: the adjoint).

namespace {

Shape BatchPart(const Shape& s) {
  return Shape(std::span<const int64_t>(s.dims().data(), static_cast<size_t>(s.rank() - 2)));
}

OutputSpec InferBatchMatMul(std::span<const Tensor> in, const Attrs& attrs) {
  const Tensor& x = in[0];
  const Tensor& y = in[1];
  internal::CheckSameDType(x, y, "x", "y");
  internal::CheckDTypeIn(x, "x", DTypeSet::kNumeric);
  if (x.rank() < 2 || y.rank() < 2) {
    throw InvalidArgumentError(
        StrCat("x and y must have rank >= 2, got x: ", x.shape(), " and y: ", y.shape()));
  }
  const bool ax = attrs.GetBool("adj_x");
  const bool ay = attrs.GetBool("adj_y");
  const int64_t k_x = x.shape().dim(x.rank() - (ax ? 2 : 1));
  const int64_t k_y = y.shape().dim(y.rank() - (ay ? 1 : 2));
  if (k_x != k_y) {
    throw InvalidArgumentError(StrCat("Matrix size-incompatible: In[0]: ", x.shape(),
                                      ", In[1]: ", y.shape(), " (adj_x=", ax, ", adj_y=", ay,
                                      "): inner dimensions ", k_x, " and ", k_y, " differ"));
  }
  std::vector<int64_t> dims =
      internal::BroadcastShape(BatchPart(x.shape()), BatchPart(y.shape())).ToVector();
  dims.push_back(x.shape().dim(x.rank() - (ax ? 1 : 2)));
  dims.push_back(y.shape().dim(y.rank() - (ay ? 2 : 1)));
  return {Shape(dims), x.dtype()};
}

// The offset (in matrices) of batch `b` of the output in an operand of
// batch shape `part`, broadcast to the output's batch shape `out`.
int64_t BatchOffset(int64_t b, const Shape& part, const Shape& out) {
  int64_t offset = 0, stride = 1;
  for (int d = out.rank() - 1; d >= 0; --d) {
    const int64_t index = b % out.dim(d);
    b /= out.dim(d);
    const int pd = part.rank() - (out.rank() - d);
    if (pd < 0) continue;
    if (part.dim(pd) != 1) offset += index * stride;
    stride *= part.dim(pd);
  }
  return offset;
}

Tensor BatchMatMulKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Tensor& x = in[0];
  const Tensor& y = in[1];
  const bool ax = attrs.GetBool("adj_x");
  const bool ay = attrs.GetBool("adj_y");
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  const int r = spec.shape.rank();
  const int64_t m = spec.shape.dim(r - 2);
  const int64_t n = spec.shape.dim(r - 1);
  const int64_t k = x.shape().dim(x.rank() - (ax ? 2 : 1));
  const int64_t xr = x.shape().dim(x.rank() - 2), xc = x.shape().dim(x.rank() - 1);
  const int64_t yr = y.shape().dim(y.rank() - 2), yc = y.shape().dim(y.rank() - 1);
  const Shape out_batch = BatchPart(spec.shape);
  const Shape x_batch = BatchPart(x.shape());
  const Shape y_batch = BatchPart(y.shape());
  const int64_t batches = out_batch.num_elements();
  internal::Dispatch<DTypeSet::kNumeric>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* cp = internal::MutableData<T>(out);
    if (m == 0 || n == 0) return;
    using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    for (int64_t b = 0; b < batches; ++b) {
      const T* ap = x.data<T>().data() + BatchOffset(b, x_batch, out_batch) * xr * xc;
      const T* bp = y.data<T>().data() + BatchOffset(b, y_batch, out_batch) * yr * yc;
      T* c = cp + b * m * n;
      if (k == 0) {
        std::fill(c, c + m * n, T(0));
        continue;
      }
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        internal::BlockedGemm<T>(ax, ay, m, n, k, ap, xc, bp, yc, c,
                                 [](int64_t, int64_t, int64_t, int64_t) {});
      } else {
        Eigen::Map<const Matrix> am(ap, xr, xc);
        Eigen::Map<const Matrix> bm(bp, yr, yc);
        Eigen::Map<Matrix> cm(c, m, n);
        if (!ax && !ay) {
          cm.noalias() = am * bm;
        } else if (!ax && ay) {
          cm.noalias() = am * bm.transpose();
        } else if (ax && !ay) {
          cm.noalias() = am.transpose() * bm;
        } else {
          cm.noalias() = am.transpose() * bm.transpose();
        }
      }
    }
  });
  return out;
}

// The gradient of an operand summed over the batch dimensions it was
// broadcast along (TF's reduce_sum over broadcast_gradient_args).
Tensor SumToOperand(const Tensor& g, const Tensor& operand) {
  if (g.shape() == operand.shape()) return g;
  if (!operand.shape().IsFullyDefined() || !g.shape().IsFullyDefined()) {
    throw UnimplementedError(StrCat("BatchMatMulV2's gradient over broadcast batch dimensions ",
                                    "needs shapes known when the graph is built; got ",
                                    operand.shape(), " and ", g.shape()));
  }
  return internal::SumToShape(g, operand.shape());
}

// TF's _BatchMatMulV2 gradient, one case per adjoint combination.
Grads BatchMatMulGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.inputs[1];
  const bool ax = call.attrs.GetBool("adj_x");
  const bool ay = call.attrs.GetBool("adj_y");
  Grads grads(2);
  if (call.NeedsGradient(0)) {
    const Tensor gx =
        !ax ? (ay ? BatchMatMulV2(grad, y, false, false) : BatchMatMulV2(grad, y, false, true))
            : (ay ? BatchMatMulV2(y, grad, true, true) : BatchMatMulV2(y, grad, false, true));
    grads[0] = SumToOperand(gx, x);
  }
  if (call.NeedsGradient(1)) {
    const Tensor gy =
        !ay ? (ax ? BatchMatMulV2(x, grad, false, false) : BatchMatMulV2(x, grad, true, false))
            : (ax ? BatchMatMulV2(grad, x, true, true) : BatchMatMulV2(grad, x, true, false));
    grads[1] = SumToOperand(gy, y);
  }
  return grads;
}

}  // namespace

const OpDef kBatchMatMulV2Op = {.type = "BatchMatMulV2",
                                .num_inputs = 2,
                                .infer = InferBatchMatMul,
                                .compute = BatchMatMulKernel,
                                .gradient = BatchMatMulGradient};

Tensor BatchMatMulV2(const Tensor& x, const Tensor& y, bool adj_x, bool adj_y) {
  return Execute(kBatchMatMulV2Op, x, y, Attrs{{"adj_x", adj_x}, {"adj_y", adj_y}});
}

}  // namespace eager
