#pragma once

// Conversions and constant tensors (tf.cast, tf.zeros, tf.ones, tf.fill),
// and, through the two headers below, the shape ops (ops/shape_ops.h:
// tf.reshape, tf.transpose, tf.concat, tf.slice, tf.squeeze,
// tf.broadcast_to, tf.shape) and the index ops (ops/index_ops.h: tf.gather,
// tf.one_hot, tf.math.unsorted_segment_sum), as TF's array_ops module holds
// them all. Kernels: Cast and the constants in array_ops.cc.

#include "ops/index_ops.h"
#include "ops/op_def.h"
#include "ops/shape_ops.h"

namespace eager {

// Converts between numeric/bool dtypes (float -> int truncates toward zero).
// Differentiable between float dtypes.
Tensor Cast(const Tensor& x, DType dtype);  // "Cast"

// Constants (not recorded: nothing flows into them).
Tensor Zeros(const Shape& shape, DType dtype = DType::kFloat32);
Tensor Ones(const Shape& shape, DType dtype = DType::kFloat32);
// Every element equal to the scalar `value` (its dtype is the result's).
Tensor Fill(const Shape& shape, const Tensor& value);
Tensor ZerosLike(const Tensor& x);
Tensor OnesLike(const Tensor& x);

// start, start + delta, ... up to (excluding) limit: scalars of one numeric
// dtype ("Range", tf.range); delta 0 or pointing away from limit is
// InvalidArgumentError, as TF.
Tensor Range(const Tensor& start, const Tensor& limit, const Tensor& delta);

extern const OpDef kCastOp;
// The op forms of Fill, ZerosLike and OnesLike that TF graphs hold ("Fill":
// inputs dims and value; "ZerosLike", "OnesLike": input x); the functions
// above compute eagerly.
extern const OpDef kFillOp;
extern const OpDef kZerosLikeOp;
extern const OpDef kOnesLikeOp;
extern const OpDef kRangeOp;

}  // namespace eager
