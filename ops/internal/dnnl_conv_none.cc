// Built without oneDNN (libdnnl-dev absent): Conv2D runs im2col + GEMM.

#include "ops/internal/dnnl_conv.h"

namespace eager::internal {

bool HaveDnnl() { return false; }
bool DnnlConvForward(const ConvShape&, const float*, const float*, float*, const float*, bool) {
  return false;
}
bool DnnlConvBackwardData(const ConvShape&, const float*, const float*, float*) { return false; }
bool DnnlConvBackwardWeights(const ConvShape&, const float*, const float*, float*) { return false; }

}  // namespace eager::internal
