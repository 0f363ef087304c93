#pragma once

// Shapes known only when a graph runs, for graph gradients (TF's
// math_grad.py does the same with array_ops.shape): where a gradient needs
// the shape of an input whose static shape has unknown dimensions (a
// placeholder's batch dimension -1), it takes the Shape op's output instead
// of a constant. Eager tensors always have full shapes, so gradient
// functions call these only when `IsFullyDefined()` is false, in a graph.
// Private to ops/.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "runtime/shape.h"
#include "runtime/tensor.h"

namespace eager::internal {

// A node of type "Reshape" / "BroadcastTo" whose shape input is the int32
// vector `shape` (a graph tensor), with `static_shape` as the node's static
// output shape. REQUIRES: a default graph holding `x` and `shape`.
Tensor ReshapeToTensor(const Tensor& x, const Tensor& shape, const Shape& static_shape);
Tensor BroadcastToTensor(const Tensor& x, const Tensor& shape, const Shape& static_shape);

// A node "Sum" of x over the axes in `axes`, an int32/int64 vector known
// only when the graph runs (BroadcastGradientArgs' output), keep_dims false;
// its static shape has an unknown rank. REQUIRES: a default graph.
Tensor SumOverTensor(const Tensor& x, const Tensor& axes);

// The shape of x with the dimensions `reduced` (mask over x's rank) set to
// 1, as an int32 vector computed from Shape(x) (TF's reduced_shape).
// REQUIRES: x's rank is known.
Tensor KeptDimsShape(const Tensor& x, std::span<const bool> reduced);

// The same with the reduced dimensions given by `axes`, an int32/int64
// scalar or vector known only when the graph runs (a reduction node's
// non-Const reduction_indices; negative ones count from the end).
// REQUIRES: x's rank is known.
Tensor KeptDimsShape(const Tensor& x, const Tensor& axes);

// The number of elements a reduction over `reduced` folds into one, as a
// scalar of `dtype`: known dimensions multiply into a constant, unknown ones
// are read from Shape(x) (TF's _MeanGrad factor, reduce_prod over the
// gathered dimensions).
Tensor ReducedCount(const Tensor& x, std::span<const bool> reduced, DType dtype);

// What a graph knows of the values of an int32 shape vector `sizes` before
// it runs, as TF's shape functions read it (InferenceContext::
// MakeShapeFromShapeTensor): the values of a constant, else, for the output
// of a Shape node, its input's static shape ([?,4,4,8] for Shape(x) of a
// placeholder x [?,4,4,8]); nullopt otherwise. Lets a gradient op whose
// output shape is a tensor (AvgPoolGrad, the depthwise backprops) keep the
// known dimensions when the batch is unknown.
std::optional<Shape> PartialShapeValue(const Tensor& sizes);

// The value of `t` when it is known while a graph is built: an eager
// tensor's own, or that of the Const node of the current graph producing a
// symbolic one (TF's shape functions read Const inputs the same way);
// nullopt for a value known only when the graph runs. Ops whose output
// shape depends on an input's values (Tile's multiples, Fill's dims) use it
// in their shape rules.
std::optional<Tensor> KnownValue(const Tensor& t);
// The same for an int32/int64 tensor, as int64s; nullopt also for other dtypes.
std::optional<std::vector<int64_t>> KnownInts(const Tensor& t);

}  // namespace eager::internal
