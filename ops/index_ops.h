#pragma once

// Index ops, as tf.gather, tf.one_hot and tf.math.unsorted_segment_sum: ops
// that pick or scatter elements by integer indices. Kernels in
// ops/index_ops.cc. An index outside its range throws InvalidArgumentError
// naming it, except where TF defines the result (OneHot, negative segment
// ids).
//
//   eager::Tensor rows = eager::Gather(embeddings, ids);   // ids.shape + [dim]

#include <cstdint>
#include <vector>

#include "ops/op_def.h"

namespace eager {

// Rows of `params` (axis 0) picked by int32/int64 `indices`; the result has
// shape indices.shape + params.shape[1:]. An index outside [0, rows) throws
// InvalidArgumentError naming it. Differentiable with respect to params.
Tensor Gather(const Tensor& params, const Tensor& indices);  // "GatherV2"
// indices (int32/int64, any shape) -> indices.shape + [depth]; an index
// outside [0, depth) gives an all-off row, as TensorFlow.
Tensor OneHot(const Tensor& indices, int64_t depth, double on_value = 1.0, double off_value = 0.0,
              DType dtype = DType::kFloat32);  // "OneHot"
// Sums the slices data[i, ...] into output row segment_ids[i]: the gradient
// of Gather. A negative id's slice is dropped (as TF's); an id >=
// num_segments throws InvalidArgumentError.
// segment_ids (int32/int64) must be a prefix of data's shape; the result has
// shape [num_segments] + data.shape[segment_ids.rank:].
Tensor UnsortedSegmentSum(const Tensor& data, const Tensor& segment_ids,
                          int64_t num_segments);  // "UnsortedSegmentSum"

// Zeros of `shape` (an int32/int64 vector) with updates[i...] added at the
// slices indices[i..., :] (int32/int64, last dimension D) name: updates must
// be indices.shape[:-1] + shape[D:] ("ScatterNd", tf.scatter_nd). An index
// out of range is InvalidArgumentError naming it; repeated indices sum. The
// gradient for updates is GatherNd of grad (TF's).
Tensor ScatterNd(const Tensor& indices, const Tensor& updates, const Tensor& shape);
// The slices params[indices[i..., :]] (int32/int64 indices, last dimension
// D <= rank of params): indices.shape[:-1] + params.shape[D:] ("GatherNd",
// tf.gather_nd). An index out of range is InvalidArgumentError naming it.
// The gradient for params is ScatterNd of grad into params' shape (TF's).
Tensor GatherNd(const Tensor& params, const Tensor& indices);

// Interleaves the data tensors by index, tf.dynamic_stitch: merged[indices[i][j,
// ...]] = data[i][j, ...], where indices are int32 (any shape) and each
// data[i] has shape indices[i].shape + C, the same C for all. The result has
// shape [max index + 1] + C; a row no index names is zeros; where an index
// repeats, the last write (in order of i, then j) wins ("DynamicStitch").
// Any dtype. InvalidArgumentError naming the tensor for a negative index, a
// data shape that does not start with its indices' shape, differing C or
// dtypes, or indices.size() != data.size(). The gradient of data[i] is
// Gather of the output's gradient at indices[i] (TF's, which with a
// repeated index gives the overwritten entries a gradient too).
Tensor DynamicStitch(const std::vector<Tensor>& indices, const std::vector<Tensor>& data);
// The same op under TF's name for its parallel form ("ParallelDynamicStitch"),
// where TF leaves which write of a repeated index wins unspecified; eager's
// is DynamicStitch's.
Tensor ParallelDynamicStitch(const std::vector<Tensor>& indices, const std::vector<Tensor>& data);

extern const OpDef kGatherOp;
// "Gather" (TF1's, attr validate_indices): GatherV2 on axis 0.
extern const OpDef kLegacyGatherOp;
// "Where" (tf.where with one argument): graph-only (OpDef::run); the int64
// coordinates [num_true, rank] of the nonzero or true elements of its input
// (attr T: numeric or bool, TF's default bool), in row-major order; a
// scalar input is InvalidArgumentError, as TF 2.21's kernel has it.
extern const OpDef kWhereOp;
extern const OpDef kOneHotOp;
extern const OpDef kUnsortedSegmentSumOp;
extern const OpDef kScatterNdOp;
extern const OpDef kGatherNdOp;
extern const OpDef kDynamicStitchOp;
extern const OpDef kParallelDynamicStitchOp;

}  // namespace eager
