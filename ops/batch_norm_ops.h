#pragma once

// TF's fused batch normalization: FusedBatchNormV3 and its gradient op
// FusedBatchNormGradV3, as TF 2.21's graphs of Keras's BatchNormalization
// and tf.compat.v1.layers.batch_normalization hold them.
//
//   FusedBatchNormV3(x, scale, offset, mean, variance)
//       -> y, batch_mean, batch_variance, reserve_space_1, reserve_space_2,
//          reserve_space_3
//   FusedBatchNormGradV3(y_backprop, x, scale, reserve_space_1,
//                        reserve_space_2, reserve_space_3)
//       -> x_backprop, scale_backprop, offset_backprop, reserve_space_4,
//          reserve_space_5
//
// x is 4-D ("NHWC", "NCHW") or 5-D ("NDHWC", "NCDHW"), float32; scale,
// offset, mean and variance are float32 vectors of x's channels.
//
// Training (is_training): y = (x - m) / sqrt(v + epsilon) * scale + offset
// with m, v the channels' mean and (biased) variance over the batch and
// spatial positions. batch_mean is m and batch_variance is v * n / (n - 1)
// (Bessel's correction, n the elements per channel, at least 1), each mixed
// with the input mean / variance as (1 - f) * input + f * batch for an
// exponential_avg_factor f other than 1 (with f = 1 mean and variance may
// be empty, as Keras passes them). reserve_space_1 / _2 are m and v (what
// the gradient needs); reserve_space_3 is empty ([0]), as TF's CPU kernel's.
//
// Inference: y uses the input mean and variance; batch_mean,
// batch_variance, reserve_space_1 and _2 are those inputs.
//
// The gradient op takes reserve_space_1 / _2 as the mean and variance the
// forward op used: in training x_backprop = scale / sqrt(v + eps) * (dy -
// mean(dy) - (x - m) * mean(dy * (x - m)) / (v + eps)); in inference
// dy * scale / sqrt(v + eps). scale_backprop = sum(dy * (x - m)) /
// sqrt(v + eps), offset_backprop = sum(dy), over all but the channels;
// reserve_space_4 / _5 are empty.
//
// Both are graph-only node types (OpDef::run); TF's gradient of
// FusedBatchNormV3 in a graph is the FusedBatchNormGradV3 node TF's
// gradients() writes. The functions below run them eagerly too (not
// recorded on a GradientTape) or add their node to the default graph.
// A wrong rank, a channel count that disagrees, a dtype other than float32
// or an unknown data_format is InvalidArgumentError naming the node (or the
// op) and what was expected.

#include <string>

#include "ops/op_def.h"

namespace eager {

struct FusedBatchNormOptions {
  double epsilon = 1e-4;  // TF's default
  double exponential_avg_factor = 1.0;
  std::string data_format = "NHWC";
  bool is_training = true;
};

struct FusedBatchNormOutputs {
  Tensor y, batch_mean, batch_variance, reserve_space_1, reserve_space_2, reserve_space_3;
};
FusedBatchNormOutputs FusedBatchNorm(const Tensor& x, const Tensor& scale, const Tensor& offset,
                                     const Tensor& mean, const Tensor& variance,
                                     const FusedBatchNormOptions& options = {});

struct FusedBatchNormGradOutputs {
  Tensor x_backprop, scale_backprop, offset_backprop, reserve_space_4, reserve_space_5;
};
// options.exponential_avg_factor is not used.
FusedBatchNormGradOutputs FusedBatchNormGrad(const Tensor& y_backprop, const Tensor& x,
                                             const Tensor& scale, const Tensor& reserve_space_1,
                                             const Tensor& reserve_space_2,
                                             const Tensor& reserve_space_3,
                                             const FusedBatchNormOptions& options = {});

extern const OpDef kFusedBatchNormV3Op;      // "FusedBatchNormV3": 6 outputs
extern const OpDef kFusedBatchNormGradV3Op;  // "FusedBatchNormGradV3": 5 outputs
// TF1's "FusedBatchNorm" and "FusedBatchNormGrad": V3's without
// reserve_space_3 (5 inputs and 5 outputs each), all of one float dtype T.
extern const OpDef kFusedBatchNormV1Op;
extern const OpDef kFusedBatchNormGradV1Op;

}  // namespace eager
