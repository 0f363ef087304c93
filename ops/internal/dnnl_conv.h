#pragma once

// oneDNN (Debian's libdnnl, optional at build time) as the float32 kernel of
// Conv2D and its two gradient ops, the way OpenBLAS serves MatMul. Private to
// ops/ (conv_ops.cc); no oneDNN type leaves dnnl_conv.cc.
//
// Each function computes its op over NHWC tensors and HWIO filters (TF's
// layouts, which oneDNN reads and writes as nhwc / hwio without copies of the
// activations) and returns true, or returns false without touching the
// output when oneDNN does not serve the shape: eager built without oneDNN,
// negative end padding (a VALID window that leaves input rows unread), or a
// shape for which oneDNN offers only its reference loops (im2col + GEMM is
// faster than those). conv_ops.cc then runs im2col + GEMM.
//
// Results do not depend on the thread count (runtime/threads.h): the batch is cut
// into chunks fixed by the batch size and the machine's cores alone; each
// chunk is one single-threaded oneDNN call (oneDNN's own OpenMP threads are
// never used) on eager's pool, and the filter gradient adds the chunks'
// partial sums in chunk order.

#include <cstdint>

namespace eager::internal {

// One convolution's geometry (TF's: SAME padding already resolved).
struct ConvShape {
  int64_t batch = 0;
  int64_t in_h = 0, in_w = 0, in_c = 0;
  int64_t k_h = 0, k_w = 0, out_c = 0;
  int64_t out_h = 0, out_w = 0;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;  // padding before; the end padding follows
};

// Whether eager was built with oneDNN.
bool HaveDnnl();

// output [batch, out_h, out_w, out_c] = Conv2D(input, filter), then
// `+ bias[out_c]` when bias is not null and max(., 0) when relu is set, both
// inside oneDNN's kernel (a bias and an eltwise post-op) while each output
// block is in registers: _FusedConv2D's forward (ops/fused_conv.h).
bool DnnlConvForward(const ConvShape& s, const float* input, const float* filter, float* output,
                     const float* bias = nullptr, bool relu = false);
// input_grad [batch, in_h, in_w, in_c] = Conv2DBackpropInput(filter, out_grad).
bool DnnlConvBackwardData(const ConvShape& s, const float* filter, const float* out_grad,
                          float* input_grad);
// filter_grad [k_h, k_w, in_c, out_c] = Conv2DBackpropFilter(input, out_grad).
bool DnnlConvBackwardWeights(const ConvShape& s, const float* input, const float* out_grad,
                             float* filter_grad);

}  // namespace eager::internal
