#pragma once

// BatchNormalization's training math in two fused ops, for float32 inputs
// [..., channels] (the channels last, every other axis a batch axis):
//
//   BatchMoments(x)                 [2, channels]: row 0 the mean over the
//                                   batch axes, row 1 the variance about it
//                                   (biased, as tf.nn.moments)
//   ChannelScaleShift(x, a, b)      x * a + b, a and b [channels]
//
// Keras's BatchNormalization in training is ChannelScaleShift(x, inv,
// beta - mean * inv) with inv = rsqrt(variance + epsilon) * gamma from the
// moments: two passes over x forward (the moments), one to scale, where the
// separate ReduceMean, SquaredDifference, Mul and Add ops took seven, and
// about 20 with their gradients. Gradients, as of the unfused ops:
// BatchMoments' d/dx = dmean / n + dvariance * 2 (x - mean) / n (the
// variance about the stopped mean, as Keras's), ChannelScaleShift's dx =
// dy * a, da = sum(dy * x), db = sum(dy), each in one pass (the sums in
// double); when a tape records the backward pass they are built from public
// ops instead, so it can be differentiated again. Sums run over fixed
// blocks of rows combined in order: the same bits on any thread count.
//
// Other dtypes and graph mode (whose nodes must be TF's) get the unfused
// ops. A rank below 1, a channel count that disagrees or mixed dtypes is
// InvalidArgumentError naming the op and the shapes.

#include "ops/op_def.h"

namespace eager {

Tensor BatchMoments(const Tensor& x);  // "_BatchMoments"
Tensor ChannelScaleShift(const Tensor& x, const Tensor& scale,
                         const Tensor& shift);  // "_ChannelScaleShift"

extern const OpDef kBatchMomentsOp;
extern const OpDef kChannelScaleShiftOp;

}  // namespace eager
