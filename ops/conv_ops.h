#pragma once

// 2-D convolution over NHWC images, as TensorFlow's Conv2D (tf.nn.conv2d),
// with the ops its gradients are made of (Conv2DBackpropInput,
// Conv2DBackpropFilter), so that a gradient built in a graph holds the nodes
// TF's would. Pooling is in ops/pooling_ops.h; the window rules below are
// shared with it (ops/internal/window_geometry.h).
//
// Shapes: input [batch, height, width, in_channels], filter [filter_height,
// filter_width, in_channels, out_channels], output [batch, out_height,
// out_width, out_channels]. `strides` and `ksize` have one entry per input
// dimension, of which batch and channels must be 1 (TF's rule). Padding:
//   "VALID": out = ceil((in - (k - 1) * dilation) / stride), no padding;
//   "SAME":  out = ceil(in / stride), zeros (Conv2D) or nothing (MaxPool:
//            padding never wins a max) split as TF does, the odd one after.
// Only data_format "NHWC" (what TF's CPU kernels run); float32 and float64.
// A bad shape, stride, padding or format throws InvalidArgumentError naming
// the op, the attribute and what was expected.
//
// float32 convolutions run on oneDNN when eager is built with it (Debian's
// libdnnl-dev; ops/internal/dnnl_conv.h); otherwise, and for float64, they
// lower to one GEMM (im2col: each output pixel's receptive field copied into
// a row) through MatMul's BLAS path. Either way results do not depend on the
// thread count.

#include <cstdint>
#include <string>
#include <vector>

#include "ops/op_def.h"

namespace eager {

struct Conv2DOptions {
  std::vector<int64_t> strides = {1, 1, 1, 1};
  std::string padding = "VALID";  // or "SAME"
  std::vector<int64_t> dilations = {1, 1, 1, 1};
};

Tensor Conv2D(const Tensor& input, const Tensor& filter, const Conv2DOptions& options = {});

// The gradient ops. `input_sizes` / `filter_sizes` are int32 vectors of 4
// (TF passes them as tensors); the result has that shape.
Tensor Conv2DBackpropInput(const Tensor& input_sizes, const Tensor& filter,
                           const Tensor& out_backprop, const Conv2DOptions& options = {});
Tensor Conv2DBackpropFilter(const Tensor& input, const Tensor& filter_sizes,
                            const Tensor& out_backprop, const Conv2DOptions& options = {});

extern const OpDef kConv2DOp;
extern const OpDef kConv2DBackpropInputOp;
extern const OpDef kConv2DBackpropFilterOp;

}  // namespace eager
