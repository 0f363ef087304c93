#include "ops/fused_matmul.h"

#include "ops/binary_ops.h"
#include "ops/execute.h"
#include "ops/internal/blocked_gemm.h"
#include "ops/internal/broadcast.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/eigen_view.h"
#include "ops/matmul.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using internal::DTypeSet;
using Grads = std::vector<std::optional<Tensor>>;

// MatMul's shape rule on (a, b), then the bias against the product's columns.
OutputSpec InferFusedMatMul(std::span<const Tensor> in, const Attrs& attrs) {
  const OutputSpec spec = kMatMulOp.infer(in.first(2), attrs);
  internal::CheckDTypeIn(in[0], "a", DTypeSet::kFloat);
  internal::CheckSameDType(in[0], in[2], "a", "bias");
  const Tensor& bias = in[2];
  if (bias.rank() != 1 || bias.shape().dim(0) != spec.shape.dim(1)) {
    throw InvalidArgumentError(StrCat("bias must be a vector as long as the product's ",
                                      spec.shape.dim(1), " columns; got bias ", bias.shape(),
                                      " for a product of shape ", spec.shape));
  }
  return spec;
}

// c[rows, cols) (row stride ldc) = relu?(c + bias[cols)), in place. The same
// Eigen expressions, so the same per-element rounding, as AddV2's and Relu's
// kernels.
template <typename T>
void BiasAndRelu(T* c, int64_t ldc, const T* bias, int64_t rows, int64_t cols, bool relu) {
  const internal::ConstArrayMap<T> b(bias, cols);
  for (int64_t r = 0; r < rows; ++r) {
    internal::ArrayMap<T> row(c + r * ldc, cols);
    if (relu) {
      row = (row + b).max(T(0));
    } else {
      row += b;
    }
  }
}

// The product as MatMul computes it (the same GEMM calls on the same blocks,
// ops/internal/gemm.h), each block followed by its bias and ReLU.
Tensor FusedMatMulKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Tensor& a = in[0];
  const Tensor& b = in[1];
  const bool ta = attrs.GetBool("transpose_a");
  const bool tb = attrs.GetBool("transpose_b");
  const bool relu = attrs.GetBool("relu");
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  const int64_t m = spec.shape.dim(0);
  const int64_t n = spec.shape.dim(1);
  const int64_t k = a.shape().dim(ta ? 0 : 1);
  internal::Dispatch<DTypeSet::kFloat>(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* cp = internal::MutableData<T>(out);
    const T* bias = in[2].data<T>().data();
    if (m == 0 || n == 0) return;
    if (k == 0) {  // an empty inner dimension sums nothing
      internal::MutableFlatView<T>(out).setZero();
      BiasAndRelu(cp, n, bias, m, n, relu);
      return;
    }
    const T* ap = a.data<T>().data();
    const T* bp = b.data<T>().data();
    const int64_t lda = a.shape().dim(1);
    const int64_t ldb = b.shape().dim(1);
    internal::BlockedGemm<T>(ta, tb, m, n, k, ap, lda, bp, ldb, cp,
                             [&](int64_t row, int64_t rows, int64_t col, int64_t cols) {
                               BiasAndRelu(cp + row * n + col, n, bias + col, rows, cols, relu);
                             });
  });
  return out;
}

// The unfused ops' gradients, in their order: Relu's (ReluGrad against the
// output, as TF), AddV2's for the bias (the sum over the batch), MatMul's.
Grads FusedMatMulGradient(const OpCall& call, const Tensor& grad) {
  const Tensor g = call.attrs.GetBool("relu") ? ReluGrad(grad, call.output) : grad;
  OpCall matmul;
  matmul.op = &kMatMulOp;
  matmul.inputs = {call.inputs[0], call.inputs[1]};
  matmul.attrs = call.attrs;
  matmul.skip_gradient = call.skip_gradient & 3u;
  Grads grads = kMatMulOp.gradient(matmul, g);
  grads.resize(3);
  if (call.NeedsGradient(2)) grads[2] = internal::SumToShape(g, call.inputs[2].shape());
  return grads;
}

}  // namespace

const OpDef kFusedMatMulOp = {.type = "_FusedMatMul",
                              .num_inputs = 3,
                              .infer = InferFusedMatMul,
                              .compute = FusedMatMulKernel,
                              .gradient = FusedMatMulGradient,
                              .eager_only = true};

Tensor FusedMatMul(const Tensor& a, const Tensor& b, const Tensor& bias, bool relu,
                   bool transpose_a, bool transpose_b) {
  if (Graph::Current() != nullptr) {  // TF's nodes; grappler would fuse them
    const Tensor y = Add(MatMul(a, b, transpose_a, transpose_b), bias);
    return relu ? Relu(y) : y;
  }
  return Execute(kFusedMatMulOp, {a, b, bias},
                 Attrs{{"transpose_a", transpose_a}, {"transpose_b", transpose_b}, {"relu", relu}});
}

}  // namespace eager
