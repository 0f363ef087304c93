#pragma once

// The Shape op (tf.shape): a tensor's dimensions as a value, int32 or int64.
//
//   eager::Tensor s = eager::ShapeOf(x);   // [2, 3] for a 2x3 x; int32
//
// In a graph this is how a dimension unknown when the graph is built (a
// placeholder's batch dimension -1) becomes known when it runs: the node
// "Shape" has TF's attributes T and out_type, and its static shape is
// [rank] (unknown for an unknown rank). Graph gradients use it where they
// need a shape that is only known at run time (ops/internal/dynamic_shape.h).
// Not differentiable (TF: NotDifferentiable("Shape")).

#include "runtime/tensor.h"

namespace eager {

// x's dimensions as a vector of `out_type` (int32 or int64). Throws
// InvalidArgumentError for another out_type, and for an int32 result with a
// dimension above 2^31 - 1, naming it.
Tensor ShapeOf(const Tensor& x, DType out_type = DType::kInt32);

// tf.broadcast_to with the shape as a value: x broadcast to `shape`, an
// int32 or int64 vector such as ShapeOf(y). In a graph the node is
// "BroadcastTo" with `shape` as its input, so the target shape may be one
// known only when the graph runs; its static shape has shape's length as
// rank and unknown dimensions. Throws InvalidArgumentError for a shape that
// is not an int32/int64 vector, and eagerly as BroadcastTo(x, Shape).
Tensor BroadcastTo(const Tensor& x, const Tensor& shape);

struct OpDef;
// "Shape": attrs out_type (a DType; TF's default int32).
extern const OpDef kShapeOp;

}  // namespace eager
