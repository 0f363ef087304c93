#include "ops/matmul.h"

#include <algorithm>
#include <type_traits>

#include "ops/execute.h"
#include "ops/internal/blocked_gemm.h"
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

}  // namespace eager
