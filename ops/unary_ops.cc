#include "ops/unary_ops.h"

#include <cmath>

#include "ops/binary_ops.h"
#include "ops/execute.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/elementwise.h"
#include "ops/internal/scalar_like.h"
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
struct SigmoidFn {
  static auto Apply(const auto& a) { return a.logistic(); }
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

Tensor Scalar(double value, const Tensor& like) {
  return internal::ScalarLike(value, like.dtype());
}

Grads NegGradient(const OpCall&, const Tensor& grad) { return {Neg(grad)}; }
Grads ExpGradient(const OpCall& call, const Tensor& grad) { return {Mul(grad, call.output)}; }
Grads LogGradient(const OpCall& call, const Tensor& grad) { return {Div(grad, call.inputs[0])}; }
// d sqrt(x) = dx / (2 sqrt(x)).
Grads SqrtGradient(const OpCall& call, const Tensor& grad) {
  return {Div(grad, Mul(Scalar(2.0, grad), call.output))};
}
Grads SquareGradient(const OpCall& call, const Tensor& grad) {
  return {Mul(grad, Mul(Scalar(2.0, grad), call.inputs[0]))};
}
// Uses the output as TF does: relu(x) > 0 exactly where x > 0, so 0 at 0.
Grads ReluGradient(const OpCall& call, const Tensor& grad) { return {ReluGrad(grad, call.output)}; }
// d sigmoid = y (1 - y); d tanh = 1 - y^2 (TF's SigmoidGrad / TanhGrad).
Grads SigmoidGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& y = call.output;
  return {Mul(grad, Mul(y, Sub(Scalar(1.0, y), y)))};
}
Grads TanhGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& y = call.output;
  return {Mul(grad, Sub(Scalar(1.0, y), Square(y)))};
}
// tf.stop_gradient: the gradient is cut, not zero-filled (nullopt).
Grads StopGradientGradient(const OpCall&, const Tensor&) { return {std::nullopt}; }
// Linear in `gradients`; piecewise constant (derivative 0) in `features`,
// which TF's _ReluGradGrad also leaves without a gradient.
Grads ReluGradGradient(const OpCall& call, const Tensor& grad) {
  return {ReluGrad(grad, call.inputs[1]), std::nullopt};
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
                       .compute = UnaryKernel<TanhFn, DTypeSet::kFloat>,
                       .gradient = TanhGradient};
const OpDef kStopGradientOp = {.type = "StopGradient",
                               .num_inputs = 1,
                               .infer = InferIdentity,
                               .compute = IdentityKernel,
                               .gradient = StopGradientGradient};
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
Tensor ReluGrad(const Tensor& gradients, const Tensor& features) {
  return Execute(kReluGradOp, gradients, features);
}

}  // namespace eager
