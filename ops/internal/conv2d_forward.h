#pragma once

// Conv2D's forward kernel with an optional epilogue, shared by Conv2D
// (ops/conv_ops.cc) and _FusedConv2D (ops/fused_conv.h). Private to ops/.

#include "ops/op_def.h"

namespace eager::internal {

// output = relu?(Conv2D(input, filter) + bias?) of shape and dtype `spec`
// (Conv2D's inferred spec; `attrs` Conv2D's). bias: nullptr, or [out_c] of
// the input's dtype. float32 runs oneDNN with the bias and the ReLU fused
// into the convolution when eager has it (ops/internal/dnnl_conv.h);
// otherwise im2col + GEMM, then the bias and ReLU in one pass, each element
// rounded as BiasAdd's and Relu's kernels round it.
Tensor Conv2DForward(const Tensor& input, const Tensor& filter, const Tensor* bias, bool relu,
                     const Attrs& attrs, const OutputSpec& spec);

}  // namespace eager::internal
