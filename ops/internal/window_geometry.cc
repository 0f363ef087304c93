#include "ops/internal/window_geometry.h"

#include <algorithm>
#include <limits>
#include <string>

#include "ops/internal/dispatch.h"

namespace eager::internal {

// strides / ksize / dilations: 4 entries, 1 for batch and channels, >= 1.
std::vector<int64_t> SpatialList(const Attrs& attrs, std::string_view name) {
  const std::vector<int64_t>& v = attrs.GetInts(name);
  if (v.size() != 4 || v[0] != 1 || v[3] != 1 || v[1] < 1 || v[2] < 1) {
    throw InvalidArgumentError(StrCat("'", name,
                                      "' must be 4 values [1, h, w, 1] with h, w >= 1 (NHWC; "
                                      "batch and channel entries must be 1), got ",
                                      DimsToString(v)));
  }
  return v;
}

void CheckFormat(const Attrs& attrs) {
  if (attrs.Has("data_format") && attrs.GetString("data_format") != "NHWC") {
    throw InvalidArgumentError(StrCat("data_format '", attrs.GetString("data_format"),
                                      "' is not supported; only NHWC (as TF's CPU kernels)"));
  }
}

bool IsSame(const Attrs& attrs) {
  const std::string& padding = attrs.GetString("padding");
  if (padding != "VALID" && padding != "SAME") {
    throw InvalidArgumentError(
        StrCat("padding must be \"VALID\" or \"SAME\", got \"", padding, "\""));
  }
  return padding == "SAME";
}

Span1D MakeSpan(std::string_view dim, int64_t in, int64_t k, int64_t stride, int64_t dilation,
                bool same) {
  Span1D s{.in = in, .k = k, .stride = stride, .dilation = dilation};
  int64_t effective = 0;
  // Dilations and strides come from files: no overflow in the sizes below.
  if (__builtin_mul_overflow(k - 1, dilation, &effective) ||
      effective > std::numeric_limits<int64_t>::max() / 4) {
    throw InvalidArgumentError(StrCat("the ", dim, " window (size ", k, ", dilation ", dilation,
                                      ") is too large to compute with"));
  }
  effective += 1;
  if (same) {
    s.out = in / stride + (in % stride != 0 ? 1 : 0);
    const int64_t needed = std::max<int64_t>((s.out - 1) * stride + effective - in, 0);
    s.pad_before = needed / 2;
  } else {
    if (in < effective) {
      throw InvalidArgumentError(StrCat("the ", dim, " of the input (", in,
                                        ") is smaller than the window's (", effective,
                                        ") with VALID padding: the output would be empty"));
    }
    s.out = (in - effective) / stride + 1;
  }
  return s;
}

Geometry MakeGeometry(const Shape& input, int64_t kh, int64_t kw, int64_t out_channels,
                      const Attrs& attrs, std::string_view strides_attr) {
  CheckFormat(attrs);
  const std::vector<int64_t> strides = SpatialList(attrs, strides_attr);
  std::vector<int64_t> dilations = {1, 1, 1, 1};
  if (attrs.Has("dilations")) dilations = SpatialList(attrs, "dilations");
  if ((dilations[1] > 1 || dilations[2] > 1) && (strides[1] > 1 || strides[2] > 1)) {
    throw InvalidArgumentError("strides > 1 together with dilations > 1 are not supported (as TF)");
  }
  const bool same = IsSame(attrs);
  return Geometry{.batch = input.dim(0),
                  .channels = input.dim(3),
                  .out_channels = out_channels,
                  .h = MakeSpan("height", input.dim(1), kh, strides[1], dilations[1], same),
                  .w = MakeSpan("width", input.dim(2), kw, strides[2], dilations[2], same)};
}

Shape OutputShape(const Geometry& g) { return Shape{g.batch, g.h.out, g.w.out, g.out_channels}; }

void CheckImages(const Tensor& t, std::string_view what) {
  internal::CheckDTypeIn(t, what, DTypeSet::kFloat);
  if (t.rank() != 4) {
    throw InvalidArgumentError(
        StrCat(what, " must be of rank 4 [batch, height, width, channels], got ", t.shape()));
  }
}

int64_t PartialOut(std::string_view dim, int64_t in, int64_t k, int64_t stride, int64_t dilation,
                   bool same) {
  if (in == Shape::kUnknownDim || (!same && k == Shape::kUnknownDim)) return Shape::kUnknownDim;
  return MakeSpan(dim, in, k == Shape::kUnknownDim ? 1 : k, stride, dilation, same).out;
}

Shape PartialWindows(const Shape& input, int64_t kh, int64_t kw, int64_t out_channels,
                     const Attrs& attrs, std::string_view strides_attr) {
  CheckFormat(attrs);
  const std::vector<int64_t> strides = SpatialList(attrs, strides_attr);
  std::vector<int64_t> dilations = {1, 1, 1, 1};
  if (attrs.Has("dilations")) dilations = SpatialList(attrs, "dilations");
  const bool same = IsSame(attrs);
  return Shape::Partial(
      {input.dim(0), PartialOut("height", input.dim(1), kh, strides[1], dilations[1], same),
       PartialOut("width", input.dim(2), kw, strides[2], dilations[2], same), out_channels});
}

}  // namespace eager::internal
