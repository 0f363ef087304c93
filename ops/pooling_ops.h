#pragma once

// Max pooling over NHWC images, as TensorFlow's MaxPool (tf.nn.max_pool),
// with MaxPoolGrad, the op its gradient is made of, so that a gradient built
// in a graph holds the nodes TF's would.
//
//   eager::Tensor y = eager::MaxPool(x, {.ksize = {1, 2, 2, 1}, .strides = {1, 2, 2, 1}});
//
// Shapes and padding as ops/conv_ops.h says for Conv2D (the same window
// rules): `ksize` and `strides` have one entry per input dimension, of which
// batch and channels must be 1. With "SAME" padding, padding never wins a
// max. float32 and float64, data_format "NHWC" only; a bad shape, window or
// attribute throws InvalidArgumentError naming it.

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

extern const OpDef kMaxPoolOp;
extern const OpDef kMaxPoolGradOp;

}  // namespace eager
