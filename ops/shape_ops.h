#pragma once

// Shape ops, as tf.reshape, tf.transpose, tf.concat, tf.slice, tf.squeeze,
// tf.broadcast_to and tf.shape: ops that move or reinterpret elements
// without computing new values. Kernels in ops/shape_ops.cc.
//
//   eager::Tensor y = eager::Reshape(x, {-1, 4});
//   eager::Tensor s = eager::ShapeOf(x);   // [2, 3] for a 2x3 x; int32
//
// Bad shapes or axes throw InvalidArgumentError naming them and the shape.

#include <cstdint>
#include <utility>
#include <vector>

#include "ops/op_def.h"

namespace eager {

// New shape with the same number of elements; one dimension may be -1.
Tensor Reshape(const Tensor& x, const std::vector<int64_t>& shape);  // "Reshape"
// Permutes dimensions; `perm` empty reverses them (tf.transpose default).
Tensor Transpose(const Tensor& x, const std::vector<int64_t>& perm = {});  // "Transpose"
// Joins same-dtype tensors along `axis`; other dimensions must match.
Tensor Concat(const std::vector<Tensor>& values, int64_t axis);  // "ConcatV2"
// x[begin : begin + size] per dimension; a size of -1 means "to the end".
Tensor Slice(const Tensor& x, const std::vector<int64_t>& begin,
             const std::vector<int64_t>& size);  // "Slice"
// x without its size-1 dimensions: all of them when `axes` is empty, else
// exactly those listed (negative counts from the end), each of which must
// have size 1 (InvalidArgumentError naming the axis and the shape).
Tensor Squeeze(const Tensor& x, const std::vector<int64_t>& axes = {});  // "Squeeze"

// `x` repeated along the dimensions where it has size 1 (or lacks them) to
// exactly `shape` (tf.broadcast_to); InvalidArgumentError when x's shape does
// not broadcast to it. The gradient sums back to x's shape.
Tensor BroadcastTo(const Tensor& x, const Shape& shape);  // "BroadcastTo"
// tf.broadcast_to with the shape as a value: x broadcast to `shape`, an
// int32 or int64 vector such as ShapeOf(y). In a graph the node is
// "BroadcastTo" with `shape` as its input, so the target shape may be one
// known only when the graph runs; its static shape has shape's length as
// rank and unknown dimensions. Throws InvalidArgumentError for a shape that
// is not an int32/int64 vector, and eagerly as BroadcastTo(x, Shape).
Tensor BroadcastTo(const Tensor& x, const Tensor& shape);

// The Shape op (tf.shape): x's dimensions as a vector of `out_type` (int32 or
// int64). In a graph this is how a dimension unknown when the graph is built
// (a placeholder's batch dimension -1) becomes known when it runs: the node
// "Shape" has TF's attributes T and out_type, and its static shape is [rank]
// (unknown for an unknown rank). Graph gradients use it where they need a
// shape that is only known at run time (ops/internal/dynamic_shape.h). Not
// differentiable (TF: NotDifferentiable("Shape")). Throws
// InvalidArgumentError for another out_type, and for an int32 result with a
// dimension above 2^31 - 1, naming it.
Tensor ShapeOf(const Tensor& x, DType out_type = DType::kInt32);  // "Shape"
// The number of elements of x, an int32 (or int64) scalar ("Size", tf.size).
Tensor Size(const Tensor& x, DType out_type = DType::kInt32);

// BroadcastGradientArgs (TF's op of that name): given the shapes s0, s1 of
// the two inputs of a broadcasting op (AddV2, Mul, ...), the axes of the
// output that the gradient of each input must be summed over (r0, r1).
//
//   auto [r0, r1] = eager::BroadcastGradientArgs(ShapeOf(x), ShapeOf(y));
//   // x [5, 3], y [1, 3]: r0 = [], r1 = [0]
//
// Graph gradients use it where the static shapes do not say which axes were
// broadcast (x [?, 3] + y [?, 3]: either may be 1 at run time), as TF's
// math_grad does: Reshape(Sum(grad, r0), Shape(x)).
//
// TF's semantics: equal shapes reduce nothing; otherwise r_k lists the axes
// of the broadcast output (shapes aligned at the right, missing leading
// dimensions counted as 1) where s_k's dimension is 1. The node has TF's
// signature: inputs s0, s1 and outputs r0, r1 of type T (int32, TF's
// default, or int64).
//
// s0, s1: int32 or int64 vectors of one dtype; results of that dtype. In a
// graph adds the node (whose outputs have static shape [?]); eagerly
// computes at once. Throws InvalidArgumentError when an input is not such a
// vector or the shapes do not broadcast ("Incompatible shapes: [2,3] vs.
// [4]"). Negative entries are not refused: as TF 2.21's kernel, they are
// numbers like the others ([-1, 3] vs. [1, 3]: r1 = [0]; [-1] vs. [5]:
// incompatible).
std::pair<Tensor, Tensor> BroadcastGradientArgs(const Tensor& s0, const Tensor& s1);

// Ops of TF 2.21's graphs of common layers. Their index arguments are tensor
// inputs in a graph, as TF's; these functions pass them as int32 constants.
//
// x with a dimension of 1 inserted at `axis` (in [-rank-1, rank]) ("ExpandDims").
Tensor ExpandDims(const Tensor& x, int64_t axis);
// x repeated multiples[d] times along each dimension d ("Tile"); the
// gradient sums the copies (needs x's shape when a graph is built).
Tensor Tile(const Tensor& x, const std::vector<int64_t>& multiples);
// Tensors of one shape and dtype stacked along a new dimension `axis` ("Pack", tf.stack).
Tensor Pack(const std::vector<Tensor>& values, int64_t axis = 0);
// The slices of `value` along `axis` (in [-rank, rank)), each without that
// dimension: value.shape()[axis] tensors ("Unpack", tf.unstack). The
// gradient is Pack of the slices' gradients, zeros for those not used. In
// graph mode one Unpack node with one output per slice; the size along
// `axis` must then be known. A scalar or an axis out of range is
// InvalidArgumentError.
std::vector<Tensor> Unpack(const Tensor& value, int64_t axis = 0);
// x with paddings[d] = (before, after) zeros around each dimension d ("Pad"),
// or copies of the scalar `constant_value` of x's dtype ("PadV2").
Tensor Pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& paddings);
Tensor PadV2(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& paddings,
             const Tensor& constant_value);
// x[begin:end:strides] with TF's masks (bit i concerns index i of begin):
// begin/end ignore begin[i]/end[i], ellipsis expands to the dimensions not
// indexed, new_axis inserts a dimension of 1, shrink_axis takes begin[i] and
// drops the dimension ("StridedSlice", tf.strided_slice, Python's x[...]).
// Out-of-range bounds clamp; a shrunk index out of range, a stride of 0,
// two ellipses are InvalidArgumentError. Its gradient is "StridedSliceGrad".
struct StridedSliceMasks {
  int64_t begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink_axis = 0;
};
Tensor StridedSlice(const Tensor& x, const std::vector<int64_t>& begin,
                    const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                    const StridedSliceMasks& masks = {});

extern const OpDef kReshapeOp;
extern const OpDef kTransposeOp;
extern const OpDef kConcatOp;
extern const OpDef kSliceOp;
extern const OpDef kSqueezeOp;
extern const OpDef kBroadcastToOp;
// "Shape": attrs out_type (a DType; TF's default int32).
extern const OpDef kShapeOp;
// "Size": attrs out_type (a DType; TF's default int32).
extern const OpDef kSizeOp;
// "BroadcastGradientArgs": graph-only (OpDef::run), two outputs.
extern const OpDef kBroadcastGradientArgsOp;
extern const OpDef kExpandDimsOp;
extern const OpDef kTileOp;
extern const OpDef kPackOp;  // attr axis
// "Unpack": graph-only (OpDef::run), attrs num, axis, T; `num` outputs. A
// node whose input's size along axis is not num is InvalidArgumentError.
extern const OpDef kUnpackOp;
// "_UnpackOutput": eager-only, output `index` of an Unpack along `axis`
// (attrs), what Unpack() runs eagerly, with TF's gradient of that output.
extern const OpDef kUnpackOutputOp;
extern const OpDef kPadOp;
extern const OpDef kPadV2Op;
// Attrs begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask (ints).
extern const OpDef kStridedSliceOp;
// Inputs shape, begin, end, strides, dy: dy scattered into zeros of `shape`.
extern const OpDef kStridedSliceGradOp;

}  // namespace eager
