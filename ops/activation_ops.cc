#include "ops/activation_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unsupported/Eigen/SpecialFunctions>  // Array::erf
#include <vector>

#include "ops/binary_ops.h"
#include "ops/execute.h"
#include "ops/internal/elementwise.h"
#include "ops/internal/scalar_like.h"
#include "ops/unary_ops.h"

namespace eager {
namespace {

using internal::DTypeSet;
using internal::ScalarOf;
using Grads = std::vector<std::optional<Tensor>>;

// TF's constants (tensorflow/core/kernels/relu_op_functor.h).
constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluScaleAlpha = 1.7580993408473768599402175208123;

// ---- Selu ----

// TF: (x < 0).select(scale_alpha * (exp(x) - 1), scale * x). exp(min(x, 0))
// - 1 vectorized into the output, then the branch as a blend loop.
Tensor SeluKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseBlockKernel<1, DTypeSet::kFloat>(
      in, spec, [](auto& out, const auto& x) {
        using T = ScalarOf<decltype(x)>;
        out = x.min(T(0)).exp() - T(1);
        T* o = out.data();
        const T* xs = x.data();
        const T scale = T(kSeluScale), scale_alpha = T(kSeluScaleAlpha);
        for (Eigen::Index i = 0; i < x.size(); ++i) {
          o[i] = xs[i] < T(0) ? scale_alpha * o[i] : scale * xs[i];
        }
      });
}
// TF: (y < 0).select(g * (y + scale_alpha), g * scale).
Tensor SeluGradKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseBlockKernel<2, DTypeSet::kFloat>(
      in, spec, [](auto& out, const auto& g, const auto& y) {
        using T = ScalarOf<decltype(g)>;
        T* o = out.data();
        const T* gs = g.data();
        const T* ys = y.data();
        const T scale = T(kSeluScale), scale_alpha = T(kSeluScaleAlpha);
        for (Eigen::Index i = 0; i < g.size(); ++i) {
          o[i] = ys[i] < T(0) ? gs[i] * (ys[i] + scale_alpha) : gs[i] * scale;
        }
      });
}
Grads SeluGradient(const OpCall& call, const Tensor& grad) { return {SeluGrad(grad, call.output)}; }
// TF's _SeluGradGrad: (SeluGrad(grad, y), where(y < 0, grad * gradients, 0)).
Grads SeluGradGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& y = call.inputs[1];
  return {SeluGrad(grad, y), SelectV2(Less(y, internal::ScalarLike(0, y)),
                                      Mul(grad, call.inputs[0]), internal::ScalarLike(0, y))};
}

// ---- Softplus ----

// TF's functor: with threshold = log(epsilon) + 2, x where x > -threshold,
// exp(x) where x < threshold, else log1p(exp(x)). exp and log1p run
// vectorized over chunks of a stack buffer (exp(x) is kept: it is the value
// of the small branch), then the branch is a blend loop.
Tensor SoftplusKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseBlockKernel<1, DTypeSet::kFloat>(
      in, spec, [](auto& out, const auto& x) {
        using T = ScalarOf<decltype(x)>;
        const T threshold = std::log(std::numeric_limits<T>::epsilon()) + T(2);
        constexpr Eigen::Index kChunk = 512;
        alignas(64) T exp_buffer[kChunk];
        for (Eigen::Index start = 0; start < x.size(); start += kChunk) {
          const Eigen::Index n = std::min(kChunk, x.size() - start);
          Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>, Eigen::Aligned64> e(exp_buffer, n);
          // exp(x) overflows only where the branch takes x itself.
          e = x.segment(start, n).min(-threshold).exp();
          out.segment(start, n) = e.log1p();
          T* o = out.data() + start;
          const T* xs = x.data() + start;
          for (Eigen::Index i = 0; i < n; ++i) {
            const T v = xs[i];
            o[i] = v > -threshold ? v : v < threshold ? exp_buffer[i] : o[i];
          }
        }
      });
}
// TF: gradients / (exp(-features) + 1).
Tensor SoftplusGradKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<2, DTypeSet::kFloat>(in, spec,
                                                          [](const auto& g, const auto& x) {
                                                            using T = ScalarOf<decltype(g)>;
                                                            return g / ((-x).exp() + T(1));
                                                          });
}
Grads SoftplusGradient(const OpCall& call, const Tensor& grad) {
  return {SoftplusGrad(grad, call.inputs[0])};
}
// TF's _SoftplusGradGrad: (SoftplusGrad(grad, x),
// grad * dy / (exp(-x) + 2 + exp(x))).
Grads SoftplusGradGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& dy = call.inputs[0];
  const Tensor& x = call.inputs[1];
  const Tensor denominator = Add(Add(Exp(Neg(x)), internal::ScalarLike(2, x)), Exp(x));
  return {SoftplusGrad(grad, x), Div(Mul(grad, dy), denominator)};
}

// ---- Softsign ----

Tensor SoftsignKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<1, DTypeSet::kFloat>(in, spec, [](const auto& x) {
    using T = ScalarOf<decltype(x)>;
    return x / (x.abs() + T(1));
  });
}
// TF: gradients / (1 + |features|)^2.
Tensor SoftsignGradKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<2, DTypeSet::kFloat>(in, spec,
                                                          [](const auto& g, const auto& x) {
                                                            using T = ScalarOf<decltype(g)>;
                                                            return g / (x.abs() + T(1)).square();
                                                          });
}
Grads SoftsignGradient(const OpCall& call, const Tensor& grad) {
  return {SoftsignGrad(grad, call.inputs[0])};
}
// d/dx of g / (1 + |x|)^2 is -2 g sign(x) / (1 + |x|)^3 (TF registers no
// gradient for SoftsignGrad; this one is checked by finite differences).
Grads SoftsignGradGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& g = call.inputs[0];
  const Tensor& x = call.inputs[1];
  const Tensor one_plus = Add(Abs(x), internal::ScalarLike(1, x));
  const Tensor cube = Mul(Square(one_plus), one_plus);
  return {SoftsignGrad(grad, x),
          Div(Mul(Mul(grad, g), Mul(internal::ScalarLike(-2, x), Sign(x))), cube)};
}

// ---- Erf ----

Tensor ErfKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<1, DTypeSet::kFloat>(in, spec,
                                                          [](const auto& x) { return x.erf(); });
}
// TF's _ErfGrad: grad * 2 / sqrt(pi) * exp(-x^2).
Grads ErfGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  return {Mul(grad, Mul(internal::ScalarLike(2.0 / std::sqrt(M_PI), x), Exp(Neg(Square(x)))))};
}

}  // namespace

const OpDef kSeluOp = {.type = "Selu",
                       .num_inputs = 1,
                       .infer = internal::InferFloatFeatures,
                       .compute = SeluKernel,
                       .gradient = SeluGradient};
const OpDef kSeluGradOp = {.type = "SeluGrad",
                           .num_inputs = 2,
                           .infer = internal::InferFloatGradientsOutputs,
                           .compute = SeluGradKernel,
                           .gradient = SeluGradGradient};
const OpDef kSoftplusOp = {.type = "Softplus",
                           .num_inputs = 1,
                           .infer = internal::InferFloatFeatures,
                           .compute = SoftplusKernel,
                           .gradient = SoftplusGradient};
const OpDef kSoftplusGradOp = {.type = "SoftplusGrad",
                               .num_inputs = 2,
                               .infer = internal::InferFloatGradientsFeatures,
                               .compute = SoftplusGradKernel,
                               .gradient = SoftplusGradGradient};
const OpDef kSoftsignOp = {.type = "Softsign",
                           .num_inputs = 1,
                           .infer = internal::InferFloatFeatures,
                           .compute = SoftsignKernel,
                           .gradient = SoftsignGradient};
const OpDef kSoftsignGradOp = {.type = "SoftsignGrad",
                               .num_inputs = 2,
                               .infer = internal::InferFloatGradientsFeatures,
                               .compute = SoftsignGradKernel,
                               .gradient = SoftsignGradGradient};
const OpDef kErfOp = {.type = "Erf",
                      .num_inputs = 1,
                      .infer = internal::InferFloatX,
                      .compute = ErfKernel,
                      .gradient = ErfGradient};

Tensor Selu(const Tensor& features) { return Execute(kSeluOp, {features}); }
Tensor SeluGrad(const Tensor& gradients, const Tensor& outputs) {
  return Execute(kSeluGradOp, {gradients, outputs});
}
Tensor Softplus(const Tensor& features) { return Execute(kSoftplusOp, {features}); }
Tensor SoftplusGrad(const Tensor& gradients, const Tensor& features) {
  return Execute(kSoftplusGradOp, {gradients, features});
}
Tensor Softsign(const Tensor& features) { return Execute(kSoftsignOp, {features}); }
Tensor SoftsignGrad(const Tensor& gradients, const Tensor& features) {
  return Execute(kSoftsignGradOp, {gradients, features});
}
Tensor Erf(const Tensor& x) { return Execute(kErfOp, {x}); }

}  // namespace eager
