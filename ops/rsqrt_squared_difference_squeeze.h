#pragma once

// The elementwise and shape ops TF1's batch normalization graphs are made of
// beyond the basic ones (tf.nn.moments: SquaredDifference and Squeeze;
// tf.nn.batch_normalization: Rsqrt), so that a .meta file written by
// tf.layers.batch_normalization runs in a Session; with their gradients.

#include <cstdint>
#include <vector>

#include "ops/op_def.h"

namespace eager {

// 1 / sqrt(x), float dtypes.
Tensor Rsqrt(const Tensor& x);  // "Rsqrt"
// Rsqrt's gradient from its output y: dy * -0.5 * y^3 (TF's "RsqrtGrad").
// Same shapes and float dtype.
Tensor RsqrtGrad(const Tensor& y, const Tensor& dy);  // "RsqrtGrad"
// (x - y)^2 elementwise, with broadcasting; numeric dtypes.
Tensor SquaredDifference(const Tensor& x, const Tensor& y);  // "SquaredDifference"
// x without its size-1 dimensions: all of them when `axes` is empty, else
// exactly those listed (negative counts from the end), each of which must
// have size 1 (InvalidArgumentError naming the axis and the shape).
Tensor Squeeze(const Tensor& x, const std::vector<int64_t>& axes = {});  // "Squeeze"

extern const OpDef kRsqrtOp;
extern const OpDef kRsqrtGradOp;
extern const OpDef kSquaredDifferenceOp;
extern const OpDef kSqueezeOp;

}  // namespace eager
