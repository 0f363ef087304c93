#pragma once

// Depthwise 2-D convolution over NHWC images, as TensorFlow's
// DepthwiseConv2dNative (tf.nn.depthwise_conv2d), with its two gradient ops,
// so that a gradient built in a graph holds the nodes TF's would.
//
// Shapes: input [batch, height, width, in_channels], filter [filter_height,
// filter_width, in_channels, channel_multiplier], output [batch, out_height,
// out_width, in_channels * channel_multiplier], where output channel
// c * channel_multiplier + j is input channel c convolved with filter[:, :,
// c, j]. Strides, padding ("SAME" / "VALID") and dilations as Conv2D's
// (ops/conv_ops.h, the same window rules and errors). TF's own CPU kernel
// refuses dilations > 1 (tf.nn.depthwise_conv2d reaches them through
// space-to-batch); here they run directly, with the same result. float32
// and float64, data_format "NHWC" only.

#include "ops/conv_ops.h"
#include "ops/op_def.h"

namespace eager {

// "DepthwiseConv2dNative"; options as Conv2D's.
Tensor DepthwiseConv2dNative(const Tensor& input, const Tensor& filter,
                             const Conv2DOptions& options = {});
// The gradient ops; `input_sizes` / `filter_sizes` are int32 (or int64)
// vectors of 4.
Tensor DepthwiseConv2dNativeBackpropInput(const Tensor& input_sizes, const Tensor& filter,
                                          const Tensor& out_backprop,
                                          const Conv2DOptions& options = {});
Tensor DepthwiseConv2dNativeBackpropFilter(const Tensor& input, const Tensor& filter_sizes,
                                           const Tensor& out_backprop,
                                           const Conv2DOptions& options = {});

extern const OpDef kDepthwiseConv2dNativeOp;
extern const OpDef kDepthwiseConv2dNativeBackpropInputOp;
extern const OpDef kDepthwiseConv2dNativeBackpropFilterOp;

}  // namespace eager
