#include "ops/binary_ops.h"

#include <algorithm>
#include <cmath>

#include "ops/array_ops.h"
#include "ops/execute.h"
#include "ops/internal/broadcast.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/eigen_view.h"
#include "ops/internal/scalar_like.h"
#include "ops/parallel.h"
#include "ops/shape_op.h"
#include "ops/unary_ops.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using internal::DTypeSet;

// Each functor maps two equally long Eigen array expressions to one.
struct AddFn {
  static auto Apply(const auto& a, const auto& b) { return a + b; }
};
struct SubFn {
  static auto Apply(const auto& a, const auto& b) { return a - b; }
};
struct MulFn {
  static auto Apply(const auto& a, const auto& b) { return a * b; }
};
struct DivFn {
  static auto Apply(const auto& a, const auto& b) { return a / b; }
};
// Scalar std::pow: Pow is rarely hot, and Eigen's AVX-512 pow packet trips a
// GCC 12 -Wuninitialized false positive in the intrinsics headers.
struct PowFn {
  static auto Apply(const auto& a, const auto& b) {
    using T = typename std::decay_t<decltype(a)>::Scalar;
    return a.binaryExpr(b, [](T x, T y) { return std::pow(x, y); });
  }
};
struct MaximumFn {
  static auto Apply(const auto& a, const auto& b) { return a.max(b); }
};
struct MinimumFn {
  static auto Apply(const auto& a, const auto& b) { return a.min(b); }
};
struct EqualFn {
  static auto Apply(const auto& a, const auto& b) { return a == b; }
};

template <DTypeSet kSet, bool kBoolOutput>
OutputSpec InferBinary(std::span<const Tensor> in, const Attrs&) {
  internal::CheckSameDType(in[0], in[1]);
  internal::CheckDTypeIn(in[0], "x", kSet);
  return {internal::BroadcastShape(in[0].shape(), in[1].shape()),
          kBoolOutput ? DType::kBool : in[0].dtype()};
}

// Integer division by zero is undefined behaviour in C++; TensorFlow reports it.
template <typename T>
void CheckNoIntegerDivisionByZero(const Tensor& x, const Tensor& y) {
  if constexpr (std::is_integral_v<T>) {
    auto d = y.data<T>();
    if (std::find(d.begin(), d.end(), T(0)) != d.end()) {
      throw InvalidArgumentError(StrCat("RealDiv: Integer division by zero (x ", x.shape(), " / y ",
                                        y.shape(), ", dtype ", x.dtype(), ")"));
    }
  }
}

template <typename F, DTypeSet kSet, bool kBoolOutput>
Tensor BinaryKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& x = in[0];
  const Tensor& y = in[1];
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<kSet>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using O = std::conditional_t<kBoolOutput, bool, T>;
    using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;
    if constexpr (std::is_same_v<F, DivFn>) CheckNoIntegerDivisionByZero<T>(x, y);
    const T* xp = x.data<T>().data();
    const T* yp = y.data<T>().data();
    O* op = internal::MutableData<O>(out);
    auto run = [&](int64_t xo, int64_t yo, int64_t oo, int64_t n, int64_t xs, int64_t ys) {
      if (n == 1) {  // one element (a scalar, or a broadcast run of one): no loop set-up
        using One = Eigen::Array<T, 1, 1>;
        Eigen::Map<Eigen::Array<O, 1, 1>>(op + oo) =
            F::Apply(Eigen::Map<const One>(xp + xo), Eigen::Map<const One>(yp + yo));
        return;
      }
      internal::ArrayMap<O> o(op + oo, n);
      if (xs == 1 && ys == 1) {
        o = F::Apply(internal::ConstArrayMap<T>(xp + xo, n),
                     internal::ConstArrayMap<T>(yp + yo, n));
      } else if (xs == 1) {
        o = F::Apply(internal::ConstArrayMap<T>(xp + xo, n), Vec::Constant(n, yp[yo]));
      } else if (ys == 1) {
        o = F::Apply(Vec::Constant(n, xp[xo]), internal::ConstArrayMap<T>(yp + yo, n));
      } else {
        o = F::Apply(Vec::Constant(n, xp[xo]), Vec::Constant(n, yp[yo]));
      }
    };
    // Fast path: same shapes (or one element each) are one contiguous run,
    // split over the pool when large (ops/parallel.h).
    const int64_t n = spec.shape.num_elements();
    auto contiguous = [&](int64_t xs, int64_t ys) {
      if (n <= internal::kElementwiseGrain) {  // one block: what ParallelFor would run, inline
        if (n > 0) run(0, 0, 0, n, xs, ys);
        return;
      }
      internal::ParallelFor(n, internal::kElementwiseGrain, internal::kParallelElementwiseMin,
                            [&](int64_t b, int64_t e) { run(b * xs, b * ys, b, e - b, xs, ys); });
    };
    if (x.shape() == y.shape()) {
      contiguous(1, 1);
    } else if (y.num_elements() == 1 && x.shape() == spec.shape) {
      contiguous(1, 0);
    } else if (x.num_elements() == 1 && y.shape() == spec.shape) {
      contiguous(0, 1);
    } else {
      internal::ForEachRun(internal::MakeBroadcastPlan(x.shape(), y.shape(), spec.shape), run);
    }
  });
  return out;
}

using Grads = std::vector<std::optional<Tensor>>;

// Each input's gradient is built only when the tape wants it
// (call.NeedsGradient): the bias of a Dense layer needs a reduction over the
// batch, its activations do not, and a constant operand needs nothing.
template <typename F>
std::optional<Tensor> IfNeeded(const OpCall& call, size_t i, F&& compute) {
  if (!call.NeedsGradient(i)) return std::nullopt;
  return compute();
}

Grads AddGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.inputs[1];
  return {IfNeeded(call, 0, [&] { return internal::SumToInput(grad, x, y, 0); }),
          IfNeeded(call, 1, [&] { return internal::SumToInput(grad, x, y, 1); })};
}

Grads SubGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.inputs[1];
  return {IfNeeded(call, 0, [&] { return internal::SumToInput(grad, x, y, 0); }),
          IfNeeded(call, 1, [&] { return internal::SumToInput(Neg(grad), x, y, 1); })};
}

Grads MulGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.inputs[1];
  return {IfNeeded(call, 0, [&] { return internal::SumToInput(Mul(grad, y), x, y, 0); }),
          IfNeeded(call, 1, [&] { return internal::SumToInput(Mul(grad, x), x, y, 1); })};
}

// d(x/y) = dx / y - dy * x / y^2 (TF's _RealDivGrad).
Grads DivGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.inputs[1];
  return {IfNeeded(call, 0, [&] { return internal::SumToInput(Div(grad, y), x, y, 0); }),
          IfNeeded(call, 1, [&] {
            return internal::SumToInput(Mul(grad, Neg(Div(Div(x, y), y))), x, y, 1);
          })};
}

// TF's _PowGrad: dz/dx = y * x^(y-1); dz/dy = z * log(x) where x > 0, else 0.
Grads PowGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.inputs[1];
  const Tensor& z = call.output;
  return {IfNeeded(call, 0,
                   [&] {
                     Tensor one = internal::ScalarLike(1.0, y.dtype());
                     Tensor gx = Mul(grad, Mul(y, Pow(x, Sub(y, one))));
                     return internal::SumToInput(gx, x, y, 0);
                   }),
          IfNeeded(call, 1, [&] {
            Tensor gy = Mul(grad, Mul(z, Log(x)));
            // Broadcast x to gy's shape so the mask lines up, then select.
            // (from Shape(gy) when gy's shape is known only when a graph runs).
            Tensor x_full = x.shape() == gy.shape()       ? x
                            : gy.shape().IsFullyDefined() ? BroadcastTo(x, gy.shape())
                                                          : BroadcastTo(x, ShapeOf(gy));
            return internal::SumToInput(ReluGrad(gy, x_full) /* where(x > 0, gy, 0) */, x, y, 1);
          })};
}

// Maximum/Minimum route the gradient to x where x is selected (x == z, which
// includes ties) and to y elsewhere, as TF's _MaximumMinimumGrad with >=/<=.
Grads SelectGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.inputs[1];
  Tensor x_mask = Cast(Equal(x, call.output), grad.dtype());
  Tensor gx = Mul(grad, x_mask);
  return {IfNeeded(call, 0, [&] { return internal::SumToInput(gx, x, y, 0); }),
          IfNeeded(call, 1, [&] { return internal::SumToInput(Sub(grad, gx), x, y, 1); })};
}

}  // namespace

const OpDef kAddOp = {
    .type = "AddV2",
    .num_inputs = 2,
    .infer = InferBinary<DTypeSet::kNumeric, false>,
    .compute = BinaryKernel<AddFn, DTypeSet::kNumeric, false>,
    .gradient = AddGradient,
    .node_name = "add",
};
const OpDef kSubOp = {
    .type = "Sub",
    .num_inputs = 2,
    .infer = InferBinary<DTypeSet::kNumeric, false>,
    .compute = BinaryKernel<SubFn, DTypeSet::kNumeric, false>,
    .gradient = SubGradient,
    .node_name = "sub",
};
const OpDef kMulOp = {
    .type = "Mul",
    .num_inputs = 2,
    .infer = InferBinary<DTypeSet::kNumeric, false>,
    .compute = BinaryKernel<MulFn, DTypeSet::kNumeric, false>,
    .gradient = MulGradient,
    .node_name = "mul",
};
const OpDef kDivOp = {
    .type = "RealDiv",
    .num_inputs = 2,
    .infer = InferBinary<DTypeSet::kNumeric, false>,
    .compute = BinaryKernel<DivFn, DTypeSet::kNumeric, false>,
    .gradient = DivGradient,
    .node_name = "truediv",
};
const OpDef kPowOp = {
    .type = "Pow",
    .num_inputs = 2,
    .infer = InferBinary<DTypeSet::kFloat, false>,
    .compute = BinaryKernel<PowFn, DTypeSet::kFloat, false>,
    .gradient = PowGradient,
};
const OpDef kMaximumOp = {
    .type = "Maximum",
    .num_inputs = 2,
    .infer = InferBinary<DTypeSet::kNumeric, false>,
    .compute = BinaryKernel<MaximumFn, DTypeSet::kNumeric, false>,
    .gradient = SelectGradient,
};
const OpDef kMinimumOp = {
    .type = "Minimum",
    .num_inputs = 2,
    .infer = InferBinary<DTypeSet::kNumeric, false>,
    .compute = BinaryKernel<MinimumFn, DTypeSet::kNumeric, false>,
    .gradient = SelectGradient,
};
const OpDef kEqualOp = {
    .type = "Equal",
    .num_inputs = 2,
    .infer = InferBinary<DTypeSet::kNumericOrBool, true>,
    .compute = BinaryKernel<EqualFn, DTypeSet::kNumericOrBool, true>,
    .gradient = nullptr,  // a comparison: no gradient, as tf.equal
};

Tensor Add(const Tensor& x, const Tensor& y) { return Execute(kAddOp, x, y); }
Tensor Sub(const Tensor& x, const Tensor& y) { return Execute(kSubOp, x, y); }
Tensor Mul(const Tensor& x, const Tensor& y) { return Execute(kMulOp, x, y); }
Tensor Div(const Tensor& x, const Tensor& y) { return Execute(kDivOp, x, y); }
Tensor Pow(const Tensor& x, const Tensor& y) { return Execute(kPowOp, x, y); }
Tensor Maximum(const Tensor& x, const Tensor& y) { return Execute(kMaximumOp, x, y); }
Tensor Minimum(const Tensor& x, const Tensor& y) { return Execute(kMinimumOp, x, y); }
Tensor Equal(const Tensor& x, const Tensor& y) { return Execute(kEqualOp, x, y); }

}  // namespace eager
