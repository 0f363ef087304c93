#include "ops/rsqrt_squared_difference_squeeze.h"

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/execute.h"
#include "ops/internal/broadcast.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/elementwise.h"
#include "ops/internal/scalar_like.h"
#include "ops/unary_ops.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using internal::DTypeSet;
using Grads = std::vector<std::optional<Tensor>>;

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

OutputSpec InferSquaredDifference(std::span<const Tensor> in, const Attrs&) {
  internal::CheckSameDType(in[0], in[1]);
  internal::CheckDTypeIn(in[0], "x", DTypeSet::kNumeric);
  return {internal::BroadcastShape(in[0].shape(), in[1].shape()), in[0].dtype()};
}

// (x - y) once, then squared: the bits of TF's (x - y) * (x - y).
Tensor SquaredDifferenceKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec&) {
  const Tensor difference = RunKernel(kSubOp, in);
  return RunKernel(kSquareOp, {&difference, 1});
}

// Axes to drop from `shape` for Squeeze `axes`; unknown dimensions count as
// size 1 where listed (TF's shape function does the same).
std::vector<bool> SqueezedAxes(const Shape& shape, const std::vector<int64_t>& axes) {
  const int rank = shape.rank();
  std::vector<bool> drop(static_cast<size_t>(rank), false);
  if (axes.empty()) {
    for (int i = 0; i < rank; ++i) drop[static_cast<size_t>(i)] = shape.dim(i) == 1;
    return drop;
  }
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) {
      throw InvalidArgumentError(StrCat("Tried to squeeze dim index ", axis, " for tensor with ",
                                        rank, " dimensions (shape ", shape, ")"));
    }
    const int a = static_cast<int>(axis < 0 ? axis + rank : axis);
    const int64_t size = shape.dim(a);
    if (size != 1 && size != Shape::kUnknownDim) {
      throw InvalidArgumentError(StrCat("Can not squeeze dim[", a,
                                        "], expected a dimension of 1, got ", size, " (shape ",
                                        shape, ")"));
    }
    drop[static_cast<size_t>(a)] = true;
  }
  return drop;
}

std::vector<int64_t> SqueezeAttr(const Attrs& attrs) {
  return attrs.Has("squeeze_dims") ? attrs.GetInts("squeeze_dims") : std::vector<int64_t>{};
}

OutputSpec InferSqueeze(std::span<const Tensor> in, const Attrs& attrs) {
  const Shape& shape = in[0].shape();
  const std::vector<bool> drop = SqueezedAxes(shape, SqueezeAttr(attrs));
  std::vector<int64_t> dims;
  for (int i = 0; i < shape.rank(); ++i) {
    if (!drop[static_cast<size_t>(i)]) dims.push_back(shape.dim(i));
  }
  return {Shape::Partial(dims), in[0].dtype()};
}

// Unknown dimensions: with no axes listed, whether one is dropped is unknown,
// so the rank is too (TF's shape function returns an unknown shape).
OutputSpec PartialSqueeze(std::span<const Tensor> in, const Attrs& attrs) {
  if (SqueezeAttr(attrs).empty()) {
    for (int64_t d : in[0].shape().dims()) {
      if (d == Shape::kUnknownDim) return {Shape::UnknownRank(), in[0].dtype()};
    }
  }
  return InferSqueeze(in, attrs);
}

Tensor SqueezeKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::WithShape(in[0], spec.shape);
}

Tensor Scalar(double value, const Tensor& like) {
  return internal::ScalarLike(value, like.dtype());
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
  if (call.NeedsGradient(0)) d_y = Mul(Mul(Mul(Scalar(-1.5, grad), grad), dy), Square(y));
  if (call.NeedsGradient(1)) d_dy = RsqrtGrad(y, grad);
  return {d_y, d_dy};
}

// TF's _SquaredDifferenceGrad: 2 grad (x - y), summed back to each input.
Grads SquaredDifferenceGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.inputs[1];
  const Tensor x_grad = Mul(Mul(Scalar(2.0, grad), grad), Sub(x, y));
  std::optional<Tensor> dx, dy;
  if (call.NeedsGradient(0)) dx = internal::SumToInput(x_grad, x, y, 0);
  if (call.NeedsGradient(1)) dy = internal::SumToInput(Neg(x_grad), x, y, 1);
  return {dx, dy};
}

Grads SqueezeGradient(const OpCall& call, const Tensor& grad) {
  return {Reshape(grad, call.inputs[0].shape().ToVector())};
}

}  // namespace

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
const OpDef kSquaredDifferenceOp = {.type = "SquaredDifference",
                                    .num_inputs = 2,
                                    .infer = InferSquaredDifference,
                                    .compute = SquaredDifferenceKernel,
                                    .gradient = SquaredDifferenceGradient};
const OpDef kSqueezeOp = {.type = "Squeeze",
                          .num_inputs = 1,
                          .infer = InferSqueeze,
                          .compute = SqueezeKernel,
                          .gradient = SqueezeGradient,
                          .infer_partial = PartialSqueeze};

Tensor Rsqrt(const Tensor& x) { return Execute(kRsqrtOp, {x}); }
Tensor RsqrtGrad(const Tensor& y, const Tensor& dy) { return Execute(kRsqrtGradOp, {y, dy}); }
Tensor SquaredDifference(const Tensor& x, const Tensor& y) {
  return Execute(kSquaredDifferenceOp, {x, y});
}
Tensor Squeeze(const Tensor& x, const std::vector<int64_t>& axes) {
  return Execute(kSqueezeOp, {x}, Attrs{{"squeeze_dims", axes}});
}

}  // namespace eager
