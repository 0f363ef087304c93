#pragma once

// Max and average pooling over NHWC images, as TensorFlow's MaxPool
// (tf.nn.max_pool) and AvgPool (tf.nn.avg_pool), with MaxPoolGrad and
// AvgPoolGrad, the ops their gradients are made of, so that a gradient built
// in a graph holds the nodes TF's would.
//
//   eager::Tensor y = eager::MaxPool(x, {.ksize = {1, 2, 2, 1}, .strides = {1, 2, 2, 1}});
//
// Shapes and padding as ops/conv_ops.h says for Conv2D (the same window
// rules): `ksize` and `strides` have one entry per input dimension, of which
// batch and channels must be 1. With "SAME" padding, padding never wins a
// max and is not counted in an average (each window's mean is over the input
// pixels it covers, as TF's kernels). float32 and float64, data_format "NHWC" only; a bad shape,
// window or attribute throws InvalidArgumentError naming it.

#include <cstdint>
#include <string>
#include <vector>

#include "ops/op_def.h"

namespace eager {

struct PoolOptions {
  std::vector<int64_t> ksize = {1, 2, 2, 1};
  std::vector<int64_t> strides = {1, 2, 2, 1};
  std::string padding = "VALID";  // or "SAME"
};

Tensor MaxPool(const Tensor& input, const PoolOptions& options = {});  // "MaxPool"
// d(sum(grad * MaxPool(orig_input)))/d(orig_input): each window's gradient
// goes to its first maximum in row-major window order (TF's CPU kernel).
Tensor MaxPoolGrad(const Tensor& orig_input, const Tensor& orig_output, const Tensor& grad,
                   const PoolOptions& options = {});  // "MaxPoolGrad"

Tensor AvgPool(const Tensor& value, const PoolOptions& options = {});  // "AvgPool"
// d(sum(grad * AvgPool(x)))/dx for an x of shape `orig_input_shape` (int32
// [4]): each window's gradient divided by its pixel count, added to each
// pixel it covers. Its own gradient (w.r.t. grad) is AvgPool's.
Tensor AvgPoolGrad(const Tensor& orig_input_shape, const Tensor& grad,
                   const PoolOptions& options = {});  // "AvgPoolGrad"

extern const OpDef kMaxPoolOp;
extern const OpDef kMaxPoolGradOp;
extern const OpDef kAvgPoolOp;
extern const OpDef kAvgPoolGradOp;

}  // namespace eager
