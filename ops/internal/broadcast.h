#pragma once

// NumPy broadcasting for eager's elementwise ops. Private to ops/.
//
// BroadcastShape is the shape rule; BroadcastPlan is what kernels iterate:
// the output's dimensions collapsed so that neighbouring dimensions with the
// same broadcast pattern become one. Same-shape operands collapse to a single
// contiguous run, a scalar to a stride-0 run, and a bias row over a matrix to
// "rows x contiguous inner run", so kernels spend their time in the inner
// loop. SumToShape is the one place where a broadcast gradient is summed back
// to an input's shape (TF's _broadcast_gradient_args + reduce_sum + reshape).

#include <array>
#include <cstdint>

#include "runtime/shape.h"
#include "runtime/tensor.h"

namespace eager::internal {

// The broadcast of x and y, or InvalidArgumentError
// "Incompatible shapes: [2,3] vs. [4]". Inline for equal shapes, the common
// case of every elementwise op; BroadcastDistinctShapes does the rest.
Shape BroadcastDistinctShapes(const Shape& x, const Shape& y);
inline Shape BroadcastShape(const Shape& x, const Shape& y) {
  if (x == y) [[likely]]
    return x;
  return BroadcastDistinctShapes(x, y);
}

// True when `from` broadcasts to exactly `to` (as BroadcastTo requires).
bool BroadcastsTo(const Shape& from, const Shape& to);

struct BroadcastPlan {
  // Collapsed output dimensions, outermost first; rank >= 1.
  int rank = 1;
  std::array<int64_t, Shape::kMaxRank> dims{};
  // Element strides of x and y along each collapsed dimension (0 = broadcast).
  std::array<int64_t, Shape::kMaxRank> x_strides{};
  std::array<int64_t, Shape::kMaxRank> y_strides{};
};

// REQUIRES: out == BroadcastShape(x, y), or x and y each broadcast to out.
BroadcastPlan MakeBroadcastPlan(const Shape& x, const Shape& y, const Shape& out);

// Calls inner(x_offset, y_offset, out_offset, n, x_step, y_step) for every
// contiguous run of the output: n elements starting at out_offset, reading x
// from x_offset with step x_step (0 or 1), likewise y.
template <typename Inner>
void ForEachRun(const BroadcastPlan& plan, Inner&& inner) {
  const int last = plan.rank - 1;
  const int64_t n = plan.dims[last];
  const int64_t xs = plan.x_strides[last];
  const int64_t ys = plan.y_strides[last];
  int64_t total_outer = 1;
  for (int d = 0; d < last; ++d) total_outer *= plan.dims[d];
  if (total_outer == 0 || n == 0) return;
  std::array<int64_t, Shape::kMaxRank> index{};
  int64_t xo = 0, yo = 0, oo = 0;
  for (int64_t run = 0; run < total_outer; ++run) {
    inner(xo, yo, oo, n, xs, ys);
    oo += n;
    // Odometer over the outer dimensions, innermost first.
    for (int d = last - 1; d >= 0; --d) {
      xo += plan.x_strides[d];
      yo += plan.y_strides[d];
      if (++index[d] < plan.dims[d]) break;
      xo -= plan.x_strides[d] * plan.dims[d];
      yo -= plan.y_strides[d] * plan.dims[d];
      index[d] = 0;
    }
  }
}

// `grad` (shaped like a broadcast result) summed over the dimensions that
// broadcasting stretched, then reshaped to `shape`. Returns grad itself when
// the shapes already match. Written with public ops, so it is differentiable.
Tensor SumToShape(const Tensor& grad, const Shape& shape);

// The gradient of input `index` (0 or 1) of a broadcasting binary op on
// inputs x, y, from `grad` (shaped like the op's output): SumToShape when
// the static shapes say which axes were broadcast (always eagerly, and in a
// graph when every unknown dimension of the input faces a 1 or nothing in
// the other input). Otherwise, in a graph, as TF's math_grad:
// Reshape(Sum(grad, BroadcastGradientArgs(Shape(x), Shape(y))[index]),
// Shape(input)), so that a dimension that turns out to be 1 at run time
// (a batch of one) is summed over.
Tensor SumToInput(const Tensor& grad, const Tensor& x, const Tensor& y, int index);

}  // namespace eager::internal
