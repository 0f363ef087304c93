#include "ops/unary_ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/execute.h"
#include "ops/internal/broadcast.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/dynamic_shape.h"
#include "ops/internal/elementwise.h"
#include "ops/internal/scalar_like.h"
#include "ops/op_def.h"
#include "ops/shape_ops.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using internal::DTypeSet;
using Grads = std::vector<std::optional<Tensor>>;

// Each functor maps an Eigen array expression to one of the same length.
struct NegFn {
  static auto Apply(const auto& a) { return -a; }
};
struct ExpFn {
  static auto Apply(const auto& a) { return a.exp(); }
};
struct LogFn {
  static auto Apply(const auto& a) { return a.log(); }
};
// Correctly rounded, as TensorFlow's Sqrt: Eigen 3.4's array sqrt() on
// AVX-512 (EIGEN_FAST_MATH) is an rsqrt approximation with one Newton step,
// 1-2 bits off (sqrt(49) gave 7.0000005; tests/tf_graphs found it).
struct SqrtFn {
  static auto Apply(const auto& a) {
    return a.unaryExpr([](auto v) { return std::sqrt(v); });
  }
};
struct SquareFn {
  static auto Apply(const auto& a) { return a.square(); }
};
struct ReluFn {
  static auto Apply(const auto& a) { return a.max(internal::ScalarOf<decltype(a)>(0)); }
};
// 1 / (1 + exp(-x)), vectorized (Eigen's exp and a division). Eigen 3.4's
// float logistic() is a rational fit accurate only in absolute terms: for
// x < -8 it was 6,100 ulp off (sigmoid(-8.972) = 1.2689761e-4 came out
// 1.26983e-4), where TF 2.21 is within one ulp
// (tests/ops/transcendental_ulp_test.cc). exp(-x) overflows to inf below
// x = -88.7, giving 0, the flushed value of the subnormal there.
struct SigmoidFn {
  static auto Apply(const auto& a) {
    const auto one = internal::ScalarOf<decltype(a)>(1);
    return (one + (-a).exp()).inverse();
  }
};
struct TanhFn {
  static auto Apply(const auto& a) { return a.tanh(); }
};

template <DTypeSet kSet>
OutputSpec InferUnary(std::span<const Tensor> in, const Attrs&) {
  return internal::SameShapeSpec(in, kSet, "x");
}

template <typename F, DTypeSet kSet>
Tensor UnaryKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<1, kSet>(in, spec, [](const auto& x) { return F::Apply(x); });
}

// float64 tanh, vectorized: Eigen 3.4 has a packet tanh for float only, so
// a.tanh() on doubles called std::tanh per element. Here, per chunk,
// tanh(|x|) = -m / (2 + m) with m = expm1(-2|x|), and expm1(y) is Kahan's
// (exp(y) - 1) * y / log(exp(y)) (y itself where exp(y) rounds to 1),
// from Eigen's vectorized exp and log; |x| is capped at 20, past which
// tanh rounds to 1; the sign is x's, and NaN stays NaN.
void TanhFloat64(const double* x, double* out, Eigen::Index n) {
  constexpr Eigen::Index kChunk = 256;
  alignas(64) double y[kChunk], u[kChunk], log_u[kChunk];
  for (Eigen::Index start = 0; start < n; start += kChunk) {
    const Eigen::Index len = std::min(kChunk, n - start);
    using Array = Eigen::Array<double, Eigen::Dynamic, 1>;
    Eigen::Map<Array, Eigen::Aligned64> ys(y, len), us(u, len), logs(log_u, len);
    ys = Eigen::Map<const Array>(x + start, len).abs().min(20.0) * -2.0;
    us = ys.exp();
    logs = us.log();
    for (Eigen::Index i = 0; i < len; ++i) {
      const double m = u[i] == 1.0 ? y[i] : (u[i] - 1.0) * y[i] / log_u[i];
      const double t = std::copysign(-m / (2.0 + m), x[start + i]);
      out[start + i] = std::isnan(x[start + i]) ? x[start + i] : t;
    }
  }
}

Tensor TanhKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  if (in[0].dtype() != DType::kFloat64)
    return UnaryKernel<TanhFn, DTypeSet::kFloat>(in, attrs, spec);
  return internal::ElementwiseBlockKernel<1, DTypeSet::kFloat>(
      in, spec, [](auto& out, const auto& x) {
        using T = internal::ScalarOf<decltype(x)>;
        if constexpr (std::is_same_v<T, double>) {
          TanhFloat64(x.data(), out.data(), x.size());
        } else {
          out = x.tanh();
        }
      });
}

OutputSpec InferIdentity(std::span<const Tensor> in, const Attrs&) {
  return {in[0].shape(), in[0].dtype()};
}

// The same buffer under a fresh id: outputs of distinct calls stay distinct.
Tensor IdentityKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::WithShape(in[0], spec.shape);
}

OutputSpec InferReluGrad(std::span<const Tensor> in, const Attrs&) {
  return internal::SameShapeSpec(in, DTypeSet::kFloat, "gradients", "features");
}

Tensor ReluGradKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<2, DTypeSet::kFloat>(
      in, spec, [](const auto& gradients, const auto& features) {
        using T = internal::ScalarOf<decltype(gradients)>;
        return (features > T(0)).select(gradients, T(0));
      });
}

Grads NegGradient(const OpCall&, const Tensor& grad) { return {Neg(grad)}; }
Grads ExpGradient(const OpCall& call, const Tensor& grad) { return {Mul(grad, call.output)}; }
Grads LogGradient(const OpCall& call, const Tensor& grad) { return {Div(grad, call.inputs[0])}; }
// d sqrt(x) = dx / (2 sqrt(x)).
Grads SqrtGradient(const OpCall& call, const Tensor& grad) {
  return {Div(grad, Mul(internal::ScalarLike(2.0, grad), call.output))};
}
Grads SquareGradient(const OpCall& call, const Tensor& grad) {
  return {Mul(grad, Mul(internal::ScalarLike(2.0, grad), call.inputs[0]))};
}
// Uses the output as TF does: relu(x) > 0 exactly where x > 0, so 0 at 0.
Grads ReluGradient(const OpCall& call, const Tensor& grad) { return {ReluGrad(grad, call.output)}; }
// d sigmoid = y (1 - y); d tanh = 1 - y^2 (TF's SigmoidGrad / TanhGrad).
Grads SigmoidGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& y = call.output;
  return {Mul(grad, Mul(y, Sub(internal::ScalarLike(1.0, y), y)))};
}
Grads TanhGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& y = call.output;
  return {Mul(grad, Sub(internal::ScalarLike(1.0, y), Square(y)))};
}
// tf.stop_gradient: the gradient is cut, not zero-filled (nullopt).
Grads StopGradientGradient(const OpCall&, const Tensor&) { return {std::nullopt}; }

// TF's _PreventGradientGrad: taking the gradient is the error, with the
// node's message (TF raises LookupError when gradients() reaches it).
Grads PreventGradientGradient(const OpCall& call, const Tensor&) {
  const AttrValue* message = call.attrs.Find("message");
  const auto* text = message == nullptr ? nullptr : std::get_if<std::string>(message);
  throw InvalidArgumentError(StrCat("Gradient explicitly disabled (PreventGradient). Reason: ",
                                    text == nullptr ? std::string() : *text));
}
// Linear in `gradients`; piecewise constant (derivative 0) in `features`,
// which TF's _ReluGradGrad also leaves without a gradient.
Grads ReluGradGradient(const OpCall& call, const Tensor& grad) {
  return {ReluGrad(grad, call.inputs[1]), std::nullopt};
}

// ---- Elu, EluGrad ----------------------------------------------------------------------

// TF's functor: (x < 0).select(exp(x) - 1, x). Eigen's Array select runs
// coefficient by coefficient, so that expression called the scalar expf per
// element (9x Exp's time: benchmarks/ops_benchmark BM_Elu); instead
// exp(min(x, 0)) - 1 is computed vectorized into the output (for x < 0 the
// values of TF's vectorized select), then x is kept where x >= 0 or NaN
// (a loop the compiler vectorizes).
Tensor EluKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseBlockKernel<1, DTypeSet::kFloat>(
      in, spec, [](auto& out, const auto& x) {
        using T = internal::ScalarOf<decltype(x)>;
        out = x.min(T(0)).exp() - T(1);
        T* o = out.data();
        const T* xs = x.data();
        for (Eigen::Index i = 0; i < x.size(); ++i) o[i] = xs[i] < T(0) ? o[i] : xs[i];
      });
}

// TF's functor: (y < 0).select(g * (y + 1), g).
Tensor EluGradKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<2, DTypeSet::kFloat>(
      in, spec, [](const auto& g, const auto& y) {
        using T = internal::ScalarOf<decltype(g)>;
        return (y < T(0)).select(g * (y + T(1)), g);
      });
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

// ---- Floor -----------------------------------------------------------------------------

OutputSpec InferFloor(std::span<const Tensor> in, const Attrs&) {
  return internal::SameShapeSpec(in, DTypeSet::kFloat, "x");
}

Tensor FloorKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<1, DTypeSet::kFloat>(in, spec,
                                                          [](const auto& x) { return x.floor(); });
}

Grads FloorGradient(const OpCall&, const Tensor&) { return {std::nullopt}; }

// ---- Rsqrt, RsqrtGrad ------------------------------------------------------------------

OutputSpec InferRsqrt(std::span<const Tensor> in, const Attrs&) {
  return internal::SameShapeSpec(in, DTypeSet::kFloat, "x");
}

Tensor RsqrtKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<1, DTypeSet::kFloat>(in, spec,
                                                          [](const auto& x) { return x.rsqrt(); });
}

OutputSpec InferRsqrtGrad(std::span<const Tensor> in, const Attrs&) {
  return internal::SameShapeSpec(in, DTypeSet::kFloat, "y", "dy");
}

// TF's scalar_rsqrt_gradient_op: -0.5 * (dy * y) * (y * y).
Tensor RsqrtGradKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<2, DTypeSet::kFloat>(
      in, spec, [](const auto& y, const auto& dy) {
        using T = internal::ScalarOf<decltype(y)>;
        return T(-0.5) * (dy * y) * (y * y);
      });
}
// From the output, as TF's _RsqrtGrad.
Grads RsqrtGradient(const OpCall& call, const Tensor& grad) {
  return {RsqrtGrad(call.output, grad)};
}

// TF's _RsqrtGradGrad: d/dy = -1.5 * grad * dy * y^2, d/ddy = RsqrtGrad(y, grad).
Grads RsqrtGradGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& y = call.inputs[0];
  const Tensor& dy = call.inputs[1];
  std::optional<Tensor> d_y, d_dy;
  if (call.NeedsGradient(0))
    d_y = Mul(Mul(Mul(internal::ScalarLike(-1.5, grad), grad), dy), Square(y));
  if (call.NeedsGradient(1)) d_dy = RsqrtGrad(y, grad);
  return {d_y, d_dy};
}

}  // namespace

const OpDef kNegOp = {.type = "Neg",
                      .num_inputs = 1,
                      .infer = InferUnary<DTypeSet::kNumeric>,
                      .compute = UnaryKernel<NegFn, DTypeSet::kNumeric>,
                      .gradient = NegGradient};
const OpDef kExpOp = {.type = "Exp",
                      .num_inputs = 1,
                      .infer = InferUnary<DTypeSet::kFloat>,
                      .compute = UnaryKernel<ExpFn, DTypeSet::kFloat>,
                      .gradient = ExpGradient};
const OpDef kLogOp = {.type = "Log",
                      .num_inputs = 1,
                      .infer = InferUnary<DTypeSet::kFloat>,
                      .compute = UnaryKernel<LogFn, DTypeSet::kFloat>,
                      .gradient = LogGradient};
const OpDef kSqrtOp = {.type = "Sqrt",
                       .num_inputs = 1,
                       .infer = InferUnary<DTypeSet::kFloat>,
                       .compute = UnaryKernel<SqrtFn, DTypeSet::kFloat>,
                       .gradient = SqrtGradient};
const OpDef kSquareOp = {.type = "Square",
                         .num_inputs = 1,
                         .infer = InferUnary<DTypeSet::kNumeric>,
                         .compute = UnaryKernel<SquareFn, DTypeSet::kNumeric>,
                         .gradient = SquareGradient};
const OpDef kReluOp = {.type = "Relu",
                       .num_inputs = 1,
                       .infer = InferUnary<DTypeSet::kFloat>,
                       .compute = UnaryKernel<ReluFn, DTypeSet::kFloat>,
                       .gradient = ReluGradient};
const OpDef kSigmoidOp = {.type = "Sigmoid",
                          .num_inputs = 1,
                          .infer = InferUnary<DTypeSet::kFloat>,
                          .compute = UnaryKernel<SigmoidFn, DTypeSet::kFloat>,
                          .gradient = SigmoidGradient};
const OpDef kTanhOp = {.type = "Tanh",
                       .num_inputs = 1,
                       .infer = InferUnary<DTypeSet::kFloat>,
                       .compute = TanhKernel,
                       .gradient = TanhGradient};
const OpDef kStopGradientOp = {.type = "StopGradient",
                               .num_inputs = 1,
                               .infer = InferIdentity,
                               .compute = IdentityKernel,
                               .gradient = StopGradientGradient};
// The identity (attr message: why its gradient is refused).
const OpDef kPreventGradientOp = {.type = "PreventGradient",
                                  .num_inputs = 1,
                                  .infer = InferIdentity,
                                  .compute = IdentityKernel,
                                  .gradient = PreventGradientGradient};
const OpDef kReluGradOp = {.type = "ReluGrad",
                           .num_inputs = 2,
                           .infer = InferReluGrad,
                           .compute = ReluGradKernel,
                           .gradient = ReluGradGradient};

Tensor Neg(const Tensor& x) { return Execute(kNegOp, x); }
Tensor Exp(const Tensor& x) { return Execute(kExpOp, x); }
Tensor Log(const Tensor& x) { return Execute(kLogOp, x); }
Tensor Sqrt(const Tensor& x) { return Execute(kSqrtOp, x); }
Tensor Square(const Tensor& x) { return Execute(kSquareOp, x); }
Tensor Relu(const Tensor& x) { return Execute(kReluOp, x); }
Tensor Sigmoid(const Tensor& x) { return Execute(kSigmoidOp, x); }
Tensor Tanh(const Tensor& x) { return Execute(kTanhOp, x); }
Tensor StopGradient(const Tensor& x) { return Execute(kStopGradientOp, x); }
Tensor PreventGradient(const Tensor& x, const std::string& message) {
  return Execute(kPreventGradientOp, x, Attrs{{"message", message}});
}
Tensor ReluGrad(const Tensor& gradients, const Tensor& features) {
  return Execute(kReluGradOp, gradients, features);
}

const OpDef kEluOp = {.type = "Elu",
                      .num_inputs = 1,
                      .infer = internal::InferFloatFeatures,
                      .compute = EluKernel,
                      .gradient = EluGradient};
const OpDef kEluGradOp = {.type = "EluGrad",
                          .num_inputs = 2,
                          .infer = internal::InferFloatGradientsOutputs,
                          .compute = EluGradKernel,
                          .gradient = EluGradGradient};

Tensor Elu(const Tensor& features) { return Execute(kEluOp, {features}); }
Tensor EluGrad(const Tensor& gradients, const Tensor& outputs) {
  return Execute(kEluGradOp, {gradients, outputs});
}

const OpDef kFloorOp = {
    .type = "Floor",
    .num_inputs = 1,
    .infer = InferFloor,
    .compute = FloorKernel,
    .gradient = FloorGradient,
};
Tensor Floor(const Tensor& x) { return Execute(kFloorOp, {x}); }

const OpDef kRsqrtOp = {.type = "Rsqrt",
                        .num_inputs = 1,
                        .infer = InferRsqrt,
                        .compute = RsqrtKernel,
                        .gradient = RsqrtGradient};
const OpDef kRsqrtGradOp = {.type = "RsqrtGrad",
                            .num_inputs = 2,
                            .infer = InferRsqrtGrad,
                            .compute = RsqrtGradKernel,
                            .gradient = RsqrtGradGradient};
Tensor Rsqrt(const Tensor& x) { return Execute(kRsqrtOp, {x}); }
Tensor RsqrtGrad(const Tensor& y, const Tensor& dy) { return Execute(kRsqrtGradOp, {y, dy}); }

// ---- Abs, Sign, Relu6, LeakyRelu, LogicalNot (TF 2.21 graphs of Keras layers) ---------

namespace {

OutputSpec InferNumericUnary(std::span<const Tensor> in, const Attrs&) {
  return internal::SameShapeSpec(in, DTypeSet::kNumeric, "x");
}
Tensor AbsKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<1, DTypeSet::kNumeric>(in, spec,
                                                            [](const auto& x) { return x.abs(); });
}
// -1, 0 or 1 (TF's Sign; NaN stays NaN).
Tensor SignKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<1, DTypeSet::kNumeric>(in, spec, [](const auto& x) {
    using T = internal::ScalarOf<decltype(x)>;
    return x.unaryExpr([](T v) { return v > T(0) ? T(1) : v < T(0) ? T(-1) : v; });
  });
}
// TF's functor: features.cwiseMax(0).cwiseMin(6).
Tensor Relu6Kernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<1, DTypeSet::kFloat>(in, spec, [](const auto& x) {
    using T = internal::ScalarOf<decltype(x)>;
    return x.max(T(0)).min(T(6));
  });
}
// TF's functor: (features > 0 & features < 6).select(gradients, 0).
Tensor Relu6GradKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<2, DTypeSet::kFloat>(
      in, spec, [](const auto& gradients, const auto& features) {
        using T = internal::ScalarOf<decltype(gradients)>;
        return ((features > T(0)) && (features < T(6))).select(gradients, T(0));
      });
}
// TF's functor: (features > 0).select(features, features * alpha).
Tensor LeakyReluKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const double alpha = attrs.GetFloat("alpha");
  return internal::ElementwiseKernel<1, DTypeSet::kFloat>(in, spec, [alpha](const auto& x) {
    using T = internal::ScalarOf<decltype(x)>;
    return (x > T(0)).select(x, x * static_cast<T>(alpha));
  });
}
// TF's functor: (features > 0).select(gradients, gradients * alpha).
Tensor LeakyReluGradKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const double alpha = attrs.GetFloat("alpha");
  return internal::ElementwiseKernel<2, DTypeSet::kFloat>(
      in, spec, [alpha](const auto& gradients, const auto& features) {
        using T = internal::ScalarOf<decltype(gradients)>;
        return (features > T(0)).select(gradients, gradients * static_cast<T>(alpha));
      });
}
// TF's functors from the output y: SigmoidGrad dy * y * (1 - y), TanhGrad
// dy * (1 - y * y), in TF's order of operations.
OutputSpec InferYDy(std::span<const Tensor> in, const Attrs&) {
  return internal::SameShapeSpec(in, DTypeSet::kFloat, "y", "dy");
}
Tensor SigmoidGradKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<2, DTypeSet::kFloat>(
      in, spec, [](const auto& y, const auto& dy) {
        using T = internal::ScalarOf<decltype(y)>;
        return dy * y * (T(1) - y);
      });
}
Tensor TanhGradKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<2, DTypeSet::kFloat>(
      in, spec, [](const auto& y, const auto& dy) {
        using T = internal::ScalarOf<decltype(y)>;
        return dy * (T(1) - y * y);
      });
}
// TF's _SigmoidGradGrad: (grad * dy - 2 grad * dy * y, SigmoidGrad(y, grad)).
Grads SigmoidGradGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& y = call.inputs[0];
  const Tensor gb = Mul(grad, call.inputs[1]);
  return {Sub(gb, Mul(Mul(internal::ScalarLike(2.0, y), gb), y)), SigmoidGrad(y, grad)};
}
// TF's _TanhGradGrad: (grad * -2 * dy * y, TanhGrad(y, grad)).
Grads TanhGradGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& y = call.inputs[0];
  return {Mul(Mul(Mul(grad, internal::ScalarLike(-2.0, y)), call.inputs[1]), y), TanhGrad(y, grad)};
}
OutputSpec InferLogicalNot(std::span<const Tensor> in, const Attrs&) {
  return internal::SameShapeSpec(in, DTypeSet::kBool, "x");
}
Tensor LogicalNotKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<1, DTypeSet::kBool>(in, spec,
                                                         [](const auto& x) { return !x; });
}

// TF's _AbsGrad: grad * sign(x).
Grads AbsGradient(const OpCall& call, const Tensor& grad) {
  return {Mul(grad, Sign(call.inputs[0]))};
}
// TF's _SignGrad returns zeros: piecewise constant, no gradient here.
Grads SignGradient(const OpCall&, const Tensor&) { return {std::nullopt}; }
// TF's _Relu6Grad: Relu6Grad(grad, y) on the output.
Grads Relu6Gradient(const OpCall& call, const Tensor& grad) {
  return {Relu6Grad(grad, call.output)};
}
// TF's _Relu6GradGrad: linear in gradients, none for features.
Grads Relu6GradGradient(const OpCall& call, const Tensor& grad) {
  return {Relu6Grad(grad, call.inputs[1]), std::nullopt};
}
Grads LeakyReluGradient(const OpCall& call, const Tensor& grad) {
  return {LeakyReluGrad(grad, call.inputs[0], call.attrs.GetFloat("alpha"))};
}
Grads LeakyReluGradGradient(const OpCall& call, const Tensor& grad) {
  return {LeakyReluGrad(grad, call.inputs[1], call.attrs.GetFloat("alpha")), std::nullopt};
}

}  // namespace

const OpDef kAbsOp = {.type = "Abs",
                      .num_inputs = 1,
                      .infer = InferNumericUnary,
                      .compute = AbsKernel,
                      .gradient = AbsGradient};
const OpDef kSignOp = {.type = "Sign",
                       .num_inputs = 1,
                       .infer = InferNumericUnary,
                       .compute = SignKernel,
                       .gradient = SignGradient};
const OpDef kRelu6Op = {.type = "Relu6",
                        .num_inputs = 1,
                        .infer = internal::InferFloatFeatures,
                        .compute = Relu6Kernel,
                        .gradient = Relu6Gradient};
const OpDef kRelu6GradOp = {.type = "Relu6Grad",
                            .num_inputs = 2,
                            .infer = internal::InferFloatGradientsFeatures,
                            .compute = Relu6GradKernel,
                            .gradient = Relu6GradGradient};
const OpDef kLeakyReluOp = {.type = "LeakyRelu",
                            .num_inputs = 1,
                            .infer = internal::InferFloatFeatures,
                            .compute = LeakyReluKernel,
                            .gradient = LeakyReluGradient};
const OpDef kLeakyReluGradOp = {.type = "LeakyReluGrad",
                                .num_inputs = 2,
                                .infer = internal::InferFloatGradientsFeatures,
                                .compute = LeakyReluGradKernel,
                                .gradient = LeakyReluGradGradient};
const OpDef kSigmoidGradOp = {.type = "SigmoidGrad",
                              .num_inputs = 2,
                              .infer = InferYDy,
                              .compute = SigmoidGradKernel,
                              .gradient = SigmoidGradGradient};
const OpDef kTanhGradOp = {.type = "TanhGrad",
                           .num_inputs = 2,
                           .infer = InferYDy,
                           .compute = TanhGradKernel,
                           .gradient = TanhGradGradient};
constexpr TypeAttr kNoTypeAttrs[] = {{}};  // bool by its signature: no T
const OpDef kLogicalNotOp = {.type = "LogicalNot",
                             .num_inputs = 1,
                             .infer = InferLogicalNot,
                             .compute = LogicalNotKernel,
                             .gradient = nullptr,
                             .type_attrs = kNoTypeAttrs};

Tensor Abs(const Tensor& x) { return Execute(kAbsOp, {x}); }
Tensor Sign(const Tensor& x) { return Execute(kSignOp, {x}); }
Tensor Relu6(const Tensor& features) { return Execute(kRelu6Op, {features}); }
Tensor Relu6Grad(const Tensor& gradients, const Tensor& features) {
  return Execute(kRelu6GradOp, {gradients, features});
}
Tensor LeakyRelu(const Tensor& features, double alpha) {
  return Execute(kLeakyReluOp, {features}, Attrs{{"alpha", alpha}});
}
Tensor LeakyReluGrad(const Tensor& gradients, const Tensor& features, double alpha) {
  return Execute(kLeakyReluGradOp, {gradients, features}, Attrs{{"alpha", alpha}});
}
Tensor LogicalNot(const Tensor& x) { return Execute(kLogicalNotOp, {x}); }
Tensor SigmoidGrad(const Tensor& y, const Tensor& dy) { return Execute(kSigmoidGradOp, {y, dy}); }
Tensor TanhGrad(const Tensor& y, const Tensor& dy) { return Execute(kTanhGradOp, {y, dy}); }

// ---- Reciprocal, ReciprocalGrad, Log1p (TF1 estimator and hands-on graphs) -------------

namespace {

// A true division, correctly rounded. TF 2.21's packets use a reciprocal
// estimate refined by a Newton step, which may be 1 ulp off this.
Tensor ReciprocalKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<1, DTypeSet::kFloat>(in, spec, [](const auto& x) {
    using T = internal::ScalarOf<decltype(x)>;
    return T(1) / x;
  });
}
// TF's scalar_inverse_gradient_op: -dy * y * y, in that order.
Tensor ReciprocalGradKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<2, DTypeSet::kFloat>(
      in, spec, [](const auto& y, const auto& dy) { return -dy * y * y; });
}
// Eigen's log1p, as TF's kernel: x * log(1 + x) / ((1 + x) - 1) in packets
// (x itself where 1 + x rounds to 1), std::log1p for the tail; TF's packet
// width differs, so a float may differ from TF 2.21's in the last bit.
Tensor Log1pKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<1, DTypeSet::kFloat>(in, spec,
                                                          [](const auto& x) { return x.log1p(); });
}
// TF's _ReciprocalGrad: from the output.
Grads ReciprocalGradient(const OpCall& call, const Tensor& grad) {
  return {ReciprocalGrad(call.output, grad)};
}
// TF's _ReciprocalGradGrad: d/dy = -2 * grad * dy * y, d/ddy = ReciprocalGrad(y, grad).
Grads ReciprocalGradGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& y = call.inputs[0];
  std::optional<Tensor> d_y, d_dy;
  if (call.NeedsGradient(0)) {
    d_y = Mul(Mul(Mul(internal::ScalarLike(-2.0, grad), grad), call.inputs[1]), y);
  }
  if (call.NeedsGradient(1)) d_dy = ReciprocalGrad(y, grad);
  return {d_y, d_dy};
}
// TF's _Log1pGrad: grad * reciprocal(1 + x).
Grads Log1pGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  return {Mul(grad, Reciprocal(Add(internal::ScalarLike(1.0, x), x)))};
}

}  // namespace

const OpDef kReciprocalOp = {.type = "Reciprocal",
                             .num_inputs = 1,
                             .infer = InferUnary<DTypeSet::kFloat>,
                             .compute = ReciprocalKernel,
                             .gradient = ReciprocalGradient};
const OpDef kReciprocalGradOp = {.type = "ReciprocalGrad",
                                 .num_inputs = 2,
                                 .infer = InferYDy,
                                 .compute = ReciprocalGradKernel,
                                 .gradient = ReciprocalGradGradient};
const OpDef kLog1pOp = {.type = "Log1p",
                        .num_inputs = 1,
                        .infer = InferUnary<DTypeSet::kFloat>,
                        .compute = Log1pKernel,
                        .gradient = Log1pGradient};

Tensor Reciprocal(const Tensor& x) { return Execute(kReciprocalOp, {x}); }
Tensor ReciprocalGrad(const Tensor& y, const Tensor& dy) {
  return Execute(kReciprocalGradOp, {y, dy});
}
Tensor Log1p(const Tensor& x) { return Execute(kLog1pOp, {x}); }

}  // namespace eager
