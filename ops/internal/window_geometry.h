#pragma once

// Where the windows of a 2-D convolution or pooling fall on an NHWC image:
// TF's GetWindowedOutputSize for both spatial dimensions, with the checks of
// the strides, ksize, dilations, padding and data_format attributes that
// Conv2D and the pooling ops share (ops/conv_ops.cc, ops/pooling_ops.cc).
// Private to ops/.

#include <cstdint>
#include <string_view>
#include <vector>

#include "ops/op_def.h"

namespace eager::internal {

// Where the windows of one spatial dimension fall.
struct Span1D {
  int64_t in = 0;
  int64_t k = 0;  // filter or window size
  int64_t stride = 1;
  int64_t dilation = 1;
  int64_t out = 0;
  int64_t pad_before = 0;  // SAME puts the odd padding element after
};

// Everything a kernel needs about one call.
struct Geometry {
  int64_t batch = 0;
  int64_t channels = 0;      // input channels
  int64_t out_channels = 0;  // Conv2D: the filter's last dimension; pools: channels
  Span1D h = {};
  Span1D w = {};
  int64_t PatchSize() const { return h.k * w.k * channels; }
  int64_t OutPixels() const { return batch * h.out * w.out; }
};

// strides / ksize / dilations: 4 entries, 1 for batch and channels, >= 1;
// InvalidArgumentError naming the attribute otherwise.
std::vector<int64_t> SpatialList(const Attrs& attrs, std::string_view name);
// Only "NHWC" (or no data_format); InvalidArgumentError naming it otherwise.
void CheckFormat(const Attrs& attrs);
// Whether padding is "SAME" ("VALID" the other choice; anything else throws).
bool IsSame(const Attrs& attrs);
// One dimension's windows; throws when a VALID window does not fit or the
// dilated window overflows.
Span1D MakeSpan(std::string_view dim, int64_t in, int64_t k, int64_t stride, int64_t dilation,
                bool same);
// The whole call's geometry for an NHWC input and a kh x kw window.
Geometry MakeGeometry(const Shape& input, int64_t kh, int64_t kw, int64_t out_channels,
                      const Attrs& attrs, std::string_view strides_attr = "strides");
// [batch, out_height, out_width, out_channels].
Shape OutputShape(const Geometry& g);
// A float tensor of rank 4; InvalidArgumentError naming `what` otherwise.
void CheckImages(const Tensor& t, std::string_view what);

// The same on partially known shapes (graph mode): each output dimension is
// known when the dimensions it is computed from are.
int64_t PartialOut(std::string_view dim, int64_t in, int64_t k, int64_t stride, int64_t dilation,
                   bool same);
Shape PartialWindows(const Shape& input, int64_t kh, int64_t kw, int64_t out_channels,
                     const Attrs& attrs, std::string_view strides_attr = "strides");

}  // namespace eager::internal
