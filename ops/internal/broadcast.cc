#include "ops/internal/broadcast.h"

#include <vector>

#include "ops/array_ops.h"
#include "ops/internal/dynamic_shape.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "runtime/errors.h"

namespace eager::internal {

Shape BroadcastDistinctShapes(const Shape& x, const Shape& y) {
  const int rank = x.rank() > y.rank() ? x.rank() : y.rank();
  std::array<int64_t, Shape::kMaxRank> dims{};
  for (int i = 0; i < rank; ++i) {
    const int xi = x.rank() - rank + i;
    const int yi = y.rank() - rank + i;
    const int64_t xd = xi >= 0 ? x.dim(xi) : 1;
    const int64_t yd = yi >= 0 ? y.dim(yi) : 1;
    if (xd == yd || yd == 1) {
      dims[i] = xd;
    } else if (xd == 1) {
      dims[i] = yd;
    } else {
      throw InvalidArgumentError(StrCat("Incompatible shapes: ", x, " vs. ", y));
    }
  }
  return Shape(std::span<const int64_t>(dims.data(), static_cast<size_t>(rank)));
}

bool BroadcastsTo(const Shape& from, const Shape& to) {
  if (from.rank() > to.rank()) return false;
  for (int i = 0; i < from.rank(); ++i) {
    const int64_t fd = from.dim(i);
    const int64_t td = to.dim(to.rank() - from.rank() + i);
    if (fd != td && fd != 1) return false;
  }
  return true;
}

BroadcastPlan MakeBroadcastPlan(const Shape& x, const Shape& y, const Shape& out) {
  // Per output dimension: is x (y) full-sized there? Size-1 output dims carry
  // no elements and are dropped; neighbours with the same pattern merge.
  BroadcastPlan plan;
  std::array<bool, Shape::kMaxRank> x_full{}, y_full{};
  int rank = 0;
  for (int i = 0; i < out.rank(); ++i) {
    const int64_t od = out.dim(i);
    if (od == 1) continue;
    const int xi = x.rank() - out.rank() + i;
    const int yi = y.rank() - out.rank() + i;
    const bool xf = xi >= 0 && x.dim(xi) == od;
    const bool yf = yi >= 0 && y.dim(yi) == od;
    if (rank > 0 && x_full[rank - 1] == xf && y_full[rank - 1] == yf) {
      plan.dims[rank - 1] *= od;
    } else {
      plan.dims[rank] = od;
      x_full[rank] = xf;
      y_full[rank] = yf;
      ++rank;
    }
  }
  if (rank == 0) {  // every dimension is 1: a single element
    plan.rank = 1;
    plan.dims[0] = 1;
    plan.x_strides[0] = 1;
    plan.y_strides[0] = 1;
    return plan;
  }
  plan.rank = rank;
  int64_t xs = 1, ys = 1;
  for (int d = rank - 1; d >= 0; --d) {
    plan.x_strides[d] = x_full[d] ? xs : 0;
    plan.y_strides[d] = y_full[d] ? ys : 0;
    if (x_full[d]) xs *= plan.dims[d];
    if (y_full[d]) ys *= plan.dims[d];
  }
  return plan;
}

Tensor SumToShape(const Tensor& grad, const Shape& shape) {
  const Shape& from = grad.shape();
  if (from == shape) return grad;
  std::vector<int64_t> axes;
  const int lead = from.rank() - shape.rank();
  for (int i = 0; i < from.rank(); ++i) {
    if (i < lead || (shape.dim(i - lead) == 1 && from.dim(i) != 1)) axes.push_back(i);
  }
  Tensor summed = axes.empty() ? grad : ReduceSum(grad, axes, /*keepdims=*/false);
  if (summed.shape() == shape) return summed;
  return Reshape(summed, shape.ToVector());
}

namespace {

// Whether the static shapes fix the axes that `input` was broadcast along
// against `other`: an unknown dimension of input is 1 or the output's at
// run time, so it is ambiguous unless other has 1 or nothing there.
bool StaticallyDecided(const Shape& input, const Shape& other) {
  if (input.unknown_rank() || other.unknown_rank()) return false;
  for (int i = 0; i < input.rank(); ++i) {
    if (input.dim(i) != Shape::kUnknownDim) continue;
    const int oi = other.rank() - input.rank() + i;
    if (oi >= 0 && other.dim(oi) != 1) return false;
  }
  return true;
}

}  // namespace

Tensor SumToInput(const Tensor& grad, const Tensor& x, const Tensor& y, int index) {
  const Tensor& input = index == 0 ? x : y;
  const Tensor& other = index == 0 ? y : x;
  const Shape& shape = input.shape();
  if (shape.IsFullyDefined() && grad.shape().IsFullyDefined()) return SumToShape(grad, shape);
  if (!grad.shape().unknown_rank() && StaticallyDecided(shape, other.shape())) {
    if (grad.shape() == shape) return grad;
    // Leading axes and input's 1s: a sum over an axis the output also has
    // as 1 changes nothing, so which one it is at run time does not matter.
    std::vector<int64_t> axes;
    const int lead = grad.shape().rank() - shape.rank();
    for (int i = 0; i < grad.shape().rank(); ++i) {
      if (i < lead || shape.dim(i - lead) == 1) axes.push_back(i);
    }
    Tensor summed = axes.empty() ? grad : ReduceSum(grad, axes, /*keepdims=*/false);
    if (shape.IsFullyDefined()) return Reshape(summed, shape.ToVector());
    return ReshapeToTensor(summed, ShapeOf(input), shape);
  }
  const auto [r0, r1] = BroadcastGradientArgs(ShapeOf(x), ShapeOf(y));
  return ReshapeToTensor(SumOverTensor(grad, index == 0 ? r0 : r1), ShapeOf(input), shape);
}

}  // namespace eager::internal
