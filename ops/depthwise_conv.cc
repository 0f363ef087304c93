#include "ops/depthwise_conv.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "ops/execute.h"
#include "ops/internal/conv_backprop_sizes.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/dynamic_shape.h"
#include "ops/internal/window_geometry.h"
#include "ops/parallel.h"
#include "ops/shape_ops.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using internal::CheckImages;
using internal::DTypeSet;
using internal::Geometry;
using internal::OutputShape;
using Grads = std::vector<std::optional<Tensor>>;

// filter [kh, kw, in_channels, multiplier] for an input of `channels`.
void CheckFilter(const Shape& filter, int64_t channels, const Shape& input) {
  if (filter.rank() != 4 || (channels != Shape::kUnknownDim && filter.dim(2) != channels)) {
    throw InvalidArgumentError(
        StrCat("filter must be [height, width, in_channels, channel_multiplier] with "
               "in_channels = the input's ",
               channels, ", got filter ", filter, " for input ", input));
  }
}

Geometry DepthwiseGeometry(const Shape& input, const Shape& filter, const Attrs& attrs) {
  return internal::MakeGeometry(input, filter.dim(0), filter.dim(1), filter.dim(2) * filter.dim(3),
                                attrs);
}

// Calls f(oh, ow, ih, iw, kh, kw) for every in-range tap of every output
// pixel of one image, in row-major output order.
template <typename F>
void ForEachTap(const Geometry& g, int64_t oh, F&& f) {
  for (int64_t ow = 0; ow < g.w.out; ++ow) {
    for (int64_t kh = 0; kh < g.h.k; ++kh) {
      const int64_t ih = oh * g.h.stride - g.h.pad_before + kh * g.h.dilation;
      if (ih < 0 || ih >= g.h.in) continue;
      for (int64_t kw = 0; kw < g.w.k; ++kw) {
        const int64_t iw = ow * g.w.stride - g.w.pad_before + kw * g.w.dilation;
        if (iw < 0 || iw >= g.w.in) continue;
        f(ow, ih, iw, kh, kw);
      }
    }
  }
}

OutputSpec PartialBackpropInput(std::span<const Tensor> in, const Attrs&);
OutputSpec PartialBackpropFilter(std::span<const Tensor> in, const Attrs&);

// ---- DepthwiseConv2dNative ----

OutputSpec InferDepthwise(std::span<const Tensor> in, const Attrs& attrs) {
  CheckImages(in[0], "input");
  internal::CheckSameDType(in[0], in[1], "input", "filter");
  CheckFilter(in[1].shape(), in[0].shape().dim(3), in[0].shape());
  return {OutputShape(DepthwiseGeometry(in[0].shape(), in[1].shape(), attrs)), in[0].dtype()};
}

Tensor DepthwiseKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Shape& fs = in[1].shape();
  const Geometry g = DepthwiseGeometry(in[0].shape(), fs, attrs);
  const int64_t c = g.channels, m = fs.dim(3);
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kFloat>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].data<T>().data();
    const T* f = in[1].data<T>().data();
    T* y = internal::MutableData<T>(out);
    const int64_t rows = g.batch * g.h.out;
    const int64_t row_elements = std::max<int64_t>(1, g.w.out * c * m * g.h.k * g.w.k);
    const int64_t grain = std::max<int64_t>(1, internal::kElementwiseGrain / row_elements);
    internal::ParallelFor(rows, grain, 2, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t n = r / g.h.out, oh = r % g.h.out;
        T* y_row = y + r * g.w.out * c * m;
        std::fill(y_row, y_row + g.w.out * c * m, T(0));
        ForEachTap(g, oh, [&](int64_t ow, int64_t ih, int64_t iw, int64_t kh, int64_t kw) {
          const T* px = x + ((n * g.h.in + ih) * g.w.in + iw) * c;
          const T* tap = f + (kh * g.w.k + kw) * c * m;
          T* o = y_row + ow * c * m;
          for (int64_t ci = 0; ci < c; ++ci) {
            const T v = px[ci];
            for (int64_t j = ci * m; j < (ci + 1) * m; ++j) o[j] += v * tap[j];
          }
        });
      }
    });
  });
  return out;
}

Conv2DOptions OptionsOf(const Attrs& attrs) {
  Conv2DOptions o{.strides = attrs.GetInts("strides"), .padding = attrs.GetString("padding")};
  if (attrs.Has("dilations")) o.dilations = attrs.GetInts("dilations");
  return o;
}

// TF's _DepthwiseConv2dNativeGrad: the shapes go in as tensors.
Grads DepthwiseGradient(const OpCall& call, const Tensor& grad) {
  const Conv2DOptions o = OptionsOf(call.attrs);
  Grads grads(2);
  if (call.NeedsGradient(0)) {
    grads[0] = DepthwiseConv2dNativeBackpropInput(ShapeOf(call.inputs[0]), call.inputs[1], grad, o);
  }
  if (call.NeedsGradient(1)) {
    grads[1] =
        DepthwiseConv2dNativeBackpropFilter(call.inputs[0], ShapeOf(call.inputs[1]), grad, o);
  }
  return grads;
}

// ---- DepthwiseConv2dNativeBackpropInput (input_sizes, filter, out_backprop) ----

OutputSpec InferBackpropInput(std::span<const Tensor> in, const Attrs& attrs) {
  CheckImages(in[2], "out_backprop");
  internal::CheckSameDType(in[1], in[2], "filter", "out_backprop");
  const std::optional<Shape> sizes = internal::ReadSizes(in[0], "input_sizes");
  if (!sizes) {
    if (in[1].rank() != 4) CheckFilter(in[1].shape(), Shape::kUnknownDim, in[1].shape());
    return PartialBackpropInput(in, attrs);
  }
  CheckFilter(in[1].shape(), sizes->dim(3), *sizes);
  internal::CheckBackprop(in[2], OutputShape(DepthwiseGeometry(*sizes, in[1].shape(), attrs)));
  return {*sizes, in[2].dtype()};
}

// Each image on one thread: every tap adds its share back in a fixed order.
Tensor BackpropInputKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Shape& fs = in[1].shape();
  const Geometry g = DepthwiseGeometry(spec.shape, fs, attrs);
  const int64_t c = g.channels, m = fs.dim(3);
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kFloat>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* f = in[1].data<T>().data();
    const T* dy = in[2].data<T>().data();
    T* dx = internal::MutableData<T>(out);
    internal::ParallelFor(g.batch, 1, 2, [&](int64_t begin, int64_t end) {
      for (int64_t n = begin; n < end; ++n) {
        T* dx_image = dx + n * g.h.in * g.w.in * c;
        std::fill(dx_image, dx_image + g.h.in * g.w.in * c, T(0));
        for (int64_t oh = 0; oh < g.h.out; ++oh) {
          const T* dy_row = dy + (n * g.h.out + oh) * g.w.out * c * m;
          ForEachTap(g, oh, [&](int64_t ow, int64_t ih, int64_t iw, int64_t kh, int64_t kw) {
            T* px = dx_image + (ih * g.w.in + iw) * c;
            const T* tap = f + (kh * g.w.k + kw) * c * m;
            const T* d = dy_row + ow * c * m;
            for (int64_t ci = 0; ci < c; ++ci) {
              T sum = px[ci];
              for (int64_t j = ci * m; j < (ci + 1) * m; ++j) sum += d[j] * tap[j];
              px[ci] = sum;
            }
          });
        }
      }
    });
  });
  return out;
}

// ---- DepthwiseConv2dNativeBackpropFilter (input, filter_sizes, out_backprop) ----

OutputSpec InferBackpropFilter(std::span<const Tensor> in, const Attrs& attrs) {
  CheckImages(in[0], "input");
  CheckImages(in[2], "out_backprop");
  internal::CheckSameDType(in[0], in[2], "input", "out_backprop");
  const std::optional<Shape> sizes = internal::ReadSizes(in[1], "filter_sizes");
  if (!sizes) return PartialBackpropFilter(in, attrs);
  CheckFilter(*sizes, in[0].shape().dim(3), in[0].shape());
  internal::CheckBackprop(in[2], OutputShape(DepthwiseGeometry(in[0].shape(), *sizes, attrs)));
  return {*sizes, in[0].dtype()};
}

// One thread per filter row kh (its taps are disjoint); within it the images
// and pixels are added in a fixed order.
Tensor BackpropFilterKernel(std::span<const Tensor> in, const Attrs& attrs,
                            const OutputSpec& spec) {
  const Shape& fs = spec.shape;
  const Geometry g = DepthwiseGeometry(in[0].shape(), fs, attrs);
  const int64_t c = g.channels, m = fs.dim(3);
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kFloat>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].data<T>().data();
    const T* dy = in[2].data<T>().data();
    T* df = internal::MutableData<T>(out);
    std::fill(df, df + fs.num_elements(), T(0));
    internal::ParallelFor(g.h.k, 1, 2, [&](int64_t begin, int64_t end) {
      for (int64_t n = 0; n < g.batch; ++n) {
        for (int64_t oh = 0; oh < g.h.out; ++oh) {
          const T* dy_row = dy + (n * g.h.out + oh) * g.w.out * c * m;
          ForEachTap(g, oh, [&](int64_t ow, int64_t ih, int64_t iw, int64_t kh, int64_t kw) {
            if (kh < begin || kh >= end) return;
            const T* px = x + ((n * g.h.in + ih) * g.w.in + iw) * c;
            T* tap = df + (kh * g.w.k + kw) * c * m;
            const T* d = dy_row + ow * c * m;
            for (int64_t ci = 0; ci < c; ++ci) {
              const T v = px[ci];
              for (int64_t j = ci * m; j < (ci + 1) * m; ++j) tap[j] += v * d[j];
            }
          });
        }
      }
    });
  });
  return out;
}

OutputSpec PartialDepthwise(std::span<const Tensor> in, const Attrs& attrs) {
  CheckImages(in[0], "input");
  internal::CheckSameDType(in[0], in[1], "input", "filter");
  const Shape& x = in[0].shape();
  const Shape& f = in[1].shape();
  CheckFilter(f, x.dim(3), x);
  const int64_t out_c = f.dim(2) < 0 || f.dim(3) < 0 ? Shape::kUnknownDim : f.dim(2) * f.dim(3);
  return {internal::PartialWindows(x, f.dim(0), f.dim(1), out_c, attrs), in[0].dtype()};
}

OutputSpec PartialBackpropInput(std::span<const Tensor> in, const Attrs&) {
  return internal::PartialBackpropInputShape(in);
}

OutputSpec PartialBackpropFilter(std::span<const Tensor> in, const Attrs&) {
  return internal::PartialBackpropFilterShape(in);
}

Attrs DepthwiseAttrs(const Conv2DOptions& o) {
  return Attrs{{"strides", o.strides},
               {"padding", o.padding},
               {"data_format", std::string("NHWC")},
               {"dilations", o.dilations}};
}

constexpr TypeAttr kTypeFromFilter[] = {{"T", 1}};

}  // namespace

const OpDef kDepthwiseConv2dNativeOp = {.type = "DepthwiseConv2dNative",
                                        .num_inputs = 2,
                                        .infer = InferDepthwise,
                                        .compute = DepthwiseKernel,
                                        .gradient = DepthwiseGradient,
                                        .infer_partial = PartialDepthwise};
const OpDef kDepthwiseConv2dNativeBackpropInputOp = {.type = "DepthwiseConv2dNativeBackpropInput",
                                                     .num_inputs = 3,
                                                     .infer = InferBackpropInput,
                                                     .compute = BackpropInputKernel,
                                                     .type_attrs = kTypeFromFilter,
                                                     .infer_partial = PartialBackpropInput};
const OpDef kDepthwiseConv2dNativeBackpropFilterOp = {.type = "DepthwiseConv2dNativeBackpropFilter",
                                                      .num_inputs = 3,
                                                      .infer = InferBackpropFilter,
                                                      .compute = BackpropFilterKernel,
                                                      .infer_partial = PartialBackpropFilter};

Tensor DepthwiseConv2dNative(const Tensor& input, const Tensor& filter,
                             const Conv2DOptions& options) {
  return Execute(kDepthwiseConv2dNativeOp, input, filter, DepthwiseAttrs(options));
}

Tensor DepthwiseConv2dNativeBackpropInput(const Tensor& input_sizes, const Tensor& filter,
                                          const Tensor& out_backprop,
                                          const Conv2DOptions& options) {
  return Execute(kDepthwiseConv2dNativeBackpropInputOp, {input_sizes, filter, out_backprop},
                 DepthwiseAttrs(options));
}

Tensor DepthwiseConv2dNativeBackpropFilter(const Tensor& input, const Tensor& filter_sizes,
                                           const Tensor& out_backprop,
                                           const Conv2DOptions& options) {
  return Execute(kDepthwiseConv2dNativeBackpropFilterOp, {input, filter_sizes, out_backprop},
                 DepthwiseAttrs(options));
}

}  // namespace eager
