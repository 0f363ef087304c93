#pragma once

// FusedConv2D: relu?(Conv2D(input, filter) + bias) in one op, in the spirit
// of TensorFlow's _FusedConv2D (Conv2D + BiasAdd [+ Relu]) that grappler
// puts in place of those nodes. Convolutional layers call it in eager mode.
// On float32 with oneDNN the bias and the ReLU run inside the convolution
// kernel (oneDNN's bias and eltwise post-op) while each output block is in
// registers, instead of two more passes over the activations, each with its
// own output tensor and tape record. Elsewhere (float64, eager without
// oneDNN) it is Conv2D's im2col + GEMM followed by one pass for both.
//
// Values: every element is the convolution's sum, then `+ bias[c]`, then
// max(., 0). oneDNN may add the bias to its sum in another order of
// rounding than a separate BiasAdd would, so the result matches the unfused
// ops to float32 rounding (tests/ops/fused_conv_test.cc), not bit for bit;
// it does not depend on the thread count.
//
// The gradient is the unfused ops' in their order: ReluGrad against the
// output (as TF's), the bias gradient as BiasAdd's (the sum over every axis
// but channels), then Conv2D's (Conv2DBackpropInput, Conv2DBackpropFilter).
// ReluGrad and the bias sum run as one pass over the gradient (each block of
// rows summed on its own, the blocks added in a fixed order) unless a tape
// records the gradient's own ops (higher-order gradients, ops/recorder.h's
// IsRecording), which then get ReluGrad and Sum ops it can differentiate.
//
// An eager-only op (OpDef::eager_only): in graph mode FusedConv2D adds TF's
// Conv2D, BiasAdd and Relu nodes instead.

#include "ops/conv_ops.h"
#include "ops/op_def.h"

namespace eager {

// input, filter, options: as Conv2D (same errors). bias: [out_channels] of
// their dtype (InvalidArgumentError naming both shapes otherwise). relu:
// apply max(., 0) last.
Tensor FusedConv2D(const Tensor& input, const Tensor& filter, const Tensor& bias, bool relu,
                   const Conv2DOptions& options = {});  // "_FusedConv2D"

extern const OpDef kFusedConv2DOp;

}  // namespace eager
