#pragma once

// Shape and indexing ops, conversions, and constant tensors (tf.reshape,
// tf.transpose, tf.concat, tf.slice, tf.gather, tf.one_hot, tf.cast, tf.fill).
// Bad shapes, axes or indices throw InvalidArgumentError naming them.
// Kernels: shape ops in shape_ops.cc, index ops in index_ops.cc, Cast and the
// constants in array_ops.cc.

#include <cstdint>
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
// Rows of `params` (axis 0) picked by int32/int64 `indices`; the result has
// shape indices.shape + params.shape[1:]. An index outside [0, rows) throws
// InvalidArgumentError naming it. Differentiable with respect to params.
Tensor Gather(const Tensor& params, const Tensor& indices);  // "GatherV2"
// indices (int32/int64, any shape) -> indices.shape + [depth]; an index
// outside [0, depth) gives an all-off row, as TensorFlow.
Tensor OneHot(const Tensor& indices, int64_t depth, double on_value = 1.0, double off_value = 0.0,
              DType dtype = DType::kFloat32);  // "OneHot"
// Converts between numeric/bool dtypes (float -> int truncates toward zero).
// Differentiable between float dtypes.
Tensor Cast(const Tensor& x, DType dtype);  // "Cast"
// `x` repeated along the dimensions where it has size 1 (or lacks them) to
// exactly `shape` (tf.broadcast_to); InvalidArgumentError when x's shape does
// not broadcast to it. The gradient sums back to x's shape.
Tensor BroadcastTo(const Tensor& x, const Shape& shape);  // "BroadcastTo"
// Sums the slices data[i, ...] into output row segment_ids[i]: the gradient
// of Gather. A negative id's slice is dropped (as TF's); an id >=
// num_segments throws InvalidArgumentError.
// segment_ids (int32/int64) must be a prefix of data's shape; the result has
// shape [num_segments] + data.shape[segment_ids.rank:].
Tensor UnsortedSegmentSum(const Tensor& data, const Tensor& segment_ids,
                          int64_t num_segments);  // "UnsortedSegmentSum"

// Constants (not recorded: nothing flows into them).
Tensor Zeros(const Shape& shape, DType dtype = DType::kFloat32);
Tensor Ones(const Shape& shape, DType dtype = DType::kFloat32);
// Every element equal to the scalar `value` (its dtype is the result's).
Tensor Fill(const Shape& shape, const Tensor& value);
Tensor ZerosLike(const Tensor& x);
Tensor OnesLike(const Tensor& x);

extern const OpDef kReshapeOp;
extern const OpDef kTransposeOp;
extern const OpDef kConcatOp;
extern const OpDef kSliceOp;
extern const OpDef kGatherOp;
extern const OpDef kOneHotOp;
extern const OpDef kCastOp;
extern const OpDef kBroadcastToOp;
extern const OpDef kUnsortedSegmentSumOp;

}  // namespace eager
