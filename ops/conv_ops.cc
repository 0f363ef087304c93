#include "ops/conv_ops.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#include "ops/execute.h"
#include "ops/internal/conv2d_forward.h"
#include "ops/internal/conv_backprop_sizes.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/dnnl_conv.h"
#include "ops/internal/dynamic_shape.h"
#include "ops/internal/window_geometry.h"
#include "ops/matmul.h"
#include "ops/parallel.h"
#include "ops/shape_ops.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using internal::DTypeSet;
using Grads = std::vector<std::optional<Tensor>>;
using internal::CheckFormat;
using internal::CheckImages;
using internal::Geometry;
using internal::IsSame;
using internal::MakeGeometry;
using internal::OutputShape;
using internal::PartialWindows;
using internal::SpatialList;

void CheckFilterShape(const Shape& filter, const Shape& input) {
  if (filter.rank() != 4 || filter.dim(2) != input.dim(3)) {
    throw InvalidArgumentError(
        StrCat("filter must be [height, width, in_channels, out_channels] with in_channels = the "
               "input's ",
               input.dim(3), ", got filter ", filter, " for input ", input));
  }
}

// ---- im2col / col2im ----

// Rows of `patches` [batch*out_h*out_w, kh*kw*channels]: each output pixel's
// receptive field in (kh, kw, channel) order, the filter's row-major order;
// zeros where it hangs over the padding.
template <typename T>
void Im2Col(const Geometry& g, const T* input, T* patches) {
  const int64_t c = g.channels;
  const int64_t rows = g.batch * g.h.out;  // one row of output pixels per item
  const int64_t row_elements = std::max<int64_t>(1, g.w.out * g.PatchSize());
  const int64_t grain = std::max<int64_t>(1, internal::kElementwiseGrain / row_elements);
  internal::ParallelFor(rows, grain, 0, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / g.h.out;
      const int64_t oh = r % g.h.out;
      T* out = patches + r * g.w.out * g.PatchSize();
      for (int64_t ow = 0; ow < g.w.out; ++ow) {
        for (int64_t kh = 0; kh < g.h.k; ++kh) {
          const int64_t ih = oh * g.h.stride - g.h.pad_before + kh * g.h.dilation;
          for (int64_t kw = 0; kw < g.w.k; ++kw, out += c) {
            const int64_t iw = ow * g.w.stride - g.w.pad_before + kw * g.w.dilation;
            if (ih < 0 || ih >= g.h.in || iw < 0 || iw >= g.w.in) {
              std::fill(out, out + c, T(0));
            } else {
              std::memcpy(out, input + ((n * g.h.in + ih) * g.w.in + iw) * c,
                          static_cast<size_t>(c) * sizeof(T));
            }
          }
        }
      }
    }
  });
}

// The adjoint of Im2Col: adds every patch element back onto the input pixel
// it was copied from. Images are independent; within one the order is fixed.
template <typename T>
void Col2Im(const Geometry& g, const T* patches, T* input) {
  const int64_t c = g.channels;
  std::fill(input, input + g.batch * g.h.in * g.w.in * c, T(0));
  internal::ParallelFor(g.batch, 1, 2, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) {
      const T* in = patches + n * g.h.out * g.w.out * g.PatchSize();
      for (int64_t oh = 0; oh < g.h.out; ++oh) {
        for (int64_t ow = 0; ow < g.w.out; ++ow) {
          for (int64_t kh = 0; kh < g.h.k; ++kh) {
            const int64_t ih = oh * g.h.stride - g.h.pad_before + kh * g.h.dilation;
            for (int64_t kw = 0; kw < g.w.k; ++kw, in += c) {
              const int64_t iw = ow * g.w.stride - g.w.pad_before + kw * g.w.dilation;
              if (ih < 0 || ih >= g.h.in || iw < 0 || iw >= g.w.in) continue;
              T* px = input + ((n * g.h.in + ih) * g.w.in + iw) * c;
              for (int64_t i = 0; i < c; ++i) px[i] += in[i];
            }
          }
        }
      }
    }
  });
}

Tensor Patches(const Geometry& g, const Tensor& input) {
  Tensor patches = internal::NewTensor(Shape{g.OutPixels(), g.PatchSize()}, input.dtype());
  internal::Dispatch<DTypeSet::kFloat>(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Im2Col<T>(g, input.data<T>().data(), internal::MutableData<T>(patches));
  });
  return patches;
}

Tensor Gemm(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  const Tensor operands[] = {a, b};
  return RunKernel(kMatMulOp, operands, Attrs{{"transpose_a", ta}, {"transpose_b", tb}});
}

// The geometry as the oneDNN kernel takes it (ops/internal/dnnl_conv.h).
internal::ConvShape DnnlShape(const Geometry& g) {
  return {.batch = g.batch,
          .in_h = g.h.in,
          .in_w = g.w.in,
          .in_c = g.channels,
          .k_h = g.h.k,
          .k_w = g.w.k,
          .out_c = g.out_channels,
          .out_h = g.h.out,
          .out_w = g.w.out,
          .stride_h = g.h.stride,
          .stride_w = g.w.stride,
          .dilation_h = g.h.dilation,
          .dilation_w = g.w.dilation,
          .pad_top = g.h.pad_before,
          .pad_left = g.w.pad_before};
}

// ---- Conv2D ----

OutputSpec InferConv2D(std::span<const Tensor> in, const Attrs& attrs) {
  CheckImages(in[0], "input");
  internal::CheckSameDType(in[0], in[1], "input", "filter");
  CheckFilterShape(in[1].shape(), in[0].shape());
  const Shape& f = in[1].shape();
  return {OutputShape(MakeGeometry(in[0].shape(), f.dim(0), f.dim(1), f.dim(3), attrs)),
          in[0].dtype()};
}

Tensor Conv2DKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  return internal::Conv2DForward(in[0], in[1], nullptr, false, attrs, spec);
}

Conv2DOptions ConvOptionsOf(const Attrs& attrs) {
  Conv2DOptions o{.strides = attrs.GetInts("strides"), .padding = attrs.GetString("padding")};
  if (attrs.Has("dilations")) o.dilations = attrs.GetInts("dilations");
  return o;
}

// A shape as the gradient ops take it: a constant when the graph knows it
// all, else Shape(t) computed when the graph runs (TF's _Conv2DGrad always
// uses shape_n), e.g. under a placeholder's unknown batch.
Tensor SizesOf(const Tensor& t) {
  if (!t.shape().IsFullyDefined()) return ShapeOf(t, DType::kInt32);
  std::vector<int32_t> dims;
  for (int64_t d : t.shape().dims()) dims.push_back(static_cast<int32_t>(d));
  return Tensor::FromVector<int32_t>(std::move(dims));
}

// TF's _Conv2DGrad.
Grads Conv2DGradient(const OpCall& call, const Tensor& grad) {
  const Conv2DOptions options = ConvOptionsOf(call.attrs);
  Grads grads(2);
  if (call.NeedsGradient(0)) {
    grads[0] = Conv2DBackpropInput(SizesOf(call.inputs[0]), call.inputs[1], grad, options);
  }
  if (call.NeedsGradient(1)) {
    grads[1] = Conv2DBackpropFilter(call.inputs[0], SizesOf(call.inputs[1]), grad, options);
  }
  return grads;
}

OutputSpec PartialBackpropInput(std::span<const Tensor> in, const Attrs&);
OutputSpec PartialBackpropFilter(std::span<const Tensor> in, const Attrs&);

// ---- Conv2DBackpropInput (input_sizes, filter, out_backprop) ----

OutputSpec InferBackpropInput(std::span<const Tensor> in, const Attrs& attrs) {
  const Tensor& filter = in[1];
  const Tensor& grad = in[2];
  CheckImages(grad, "out_backprop");
  internal::CheckSameDType(filter, grad, "filter", "out_backprop");
  const std::optional<Shape> sizes = internal::ReadSizes(in[0], "input_sizes");
  if (filter.rank() != 4) {
    throw InvalidArgumentError(StrCat("filter must be of rank 4, got ", filter.shape()));
  }
  if (!sizes) return PartialBackpropInput(in, attrs);
  CheckFilterShape(filter.shape(), *sizes);
  const Shape& f = filter.shape();
  internal::CheckBackprop(grad,
                          OutputShape(MakeGeometry(*sizes, f.dim(0), f.dim(1), f.dim(3), attrs)));
  return {*sizes, grad.dtype()};
}

// patches' gradient [pixels, kh*kw*c] = out_backprop [pixels, out_c] x filterᵀ.
Tensor BackpropInputKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Shape& f = in[1].shape();
  const Geometry g = MakeGeometry(spec.shape, f.dim(0), f.dim(1), f.dim(3), attrs);
  if (spec.dtype == DType::kFloat32 && spec.shape.num_elements() > 0 &&
      in[1].shape().num_elements() > 0 && in[2].shape().num_elements() > 0) {
    Tensor out = internal::NewTensor(spec.shape, spec.dtype);
    if (internal::DnnlConvBackwardData(DnnlShape(g), in[1].data<float>().data(),
                                       in[2].data<float>().data(),
                                       internal::MutableData<float>(out))) {
      return out;
    }
  }
  const Tensor filter = internal::WithShape(in[1], Shape{g.PatchSize(), g.out_channels});
  const Tensor grad = internal::WithShape(in[2], Shape{g.OutPixels(), g.out_channels});
  const Tensor dpatches = Gemm(grad, filter, false, true);
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kFloat>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    Col2Im<T>(g, dpatches.data<T>().data(), internal::MutableData<T>(out));
  });
  return out;
}

// TF's _Conv2DBackpropInputGrad (what makes Conv2DTranspose trainable):
// linear in filter and in out_backprop, whose adjoints are
// Conv2DBackpropFilter and Conv2D; input_sizes gets none.
Grads BackpropInputGradient(const OpCall& call, const Tensor& grad) {
  const Conv2DOptions options = ConvOptionsOf(call.attrs);
  Grads grads(3);
  if (call.NeedsGradient(1)) {
    grads[1] = Conv2DBackpropFilter(grad, SizesOf(call.inputs[1]), call.inputs[2], options);
  }
  if (call.NeedsGradient(2)) grads[2] = Conv2D(grad, call.inputs[1], options);
  return grads;
}

// ---- Conv2DBackpropFilter (input, filter_sizes, out_backprop) ----

OutputSpec InferBackpropFilter(std::span<const Tensor> in, const Attrs& attrs) {
  const Tensor& input = in[0];
  const Tensor& grad = in[2];
  CheckImages(input, "input");
  CheckImages(grad, "out_backprop");
  internal::CheckSameDType(input, grad, "input", "out_backprop");
  const std::optional<Shape> sizes = internal::ReadSizes(in[1], "filter_sizes");
  if (!sizes) return PartialBackpropFilter(in, attrs);
  CheckFilterShape(*sizes, input.shape());
  internal::CheckBackprop(grad, OutputShape(MakeGeometry(input.shape(), sizes->dim(0),
                                                         sizes->dim(1), sizes->dim(3), attrs)));
  return {*sizes, input.dtype()};
}

// filter's gradient [kh*kw*c, out_c] = patchesᵀ x out_backprop [pixels, out_c].
Tensor BackpropFilterKernel(std::span<const Tensor> in, const Attrs& attrs,
                            const OutputSpec& spec) {
  const Shape& f = spec.shape;
  const Geometry g = MakeGeometry(in[0].shape(), f.dim(0), f.dim(1), f.dim(3), attrs);
  if (spec.dtype == DType::kFloat32 && spec.shape.num_elements() > 0 &&
      in[0].shape().num_elements() > 0 && in[2].shape().num_elements() > 0) {
    Tensor out = internal::NewTensor(spec.shape, spec.dtype);
    if (internal::DnnlConvBackwardWeights(DnnlShape(g), in[0].data<float>().data(),
                                          in[2].data<float>().data(),
                                          internal::MutableData<float>(out))) {
      return out;
    }
  }
  const Tensor grad = internal::WithShape(in[2], Shape{g.OutPixels(), g.out_channels});
  return internal::WithShape(Gemm(Patches(g, in[0]), grad, true, false), spec.shape);
}

void CheckRank4(const Tensor& t, std::string_view what) {
  if (t.rank() != 4)
    throw InvalidArgumentError(StrCat(what, " must be of rank 4, got ", t.shape()));
}

void CheckChannels(int64_t a, int64_t b, const Shape& filter, const Shape& input) {
  if (a != Shape::kUnknownDim && b != Shape::kUnknownDim && a != b) {
    CheckFilterShape(filter, input);  // throws its message
  }
}

OutputSpec PartialConv2D(std::span<const Tensor> in, const Attrs& attrs) {
  CheckImages(in[0], "input");
  internal::CheckSameDType(in[0], in[1], "input", "filter");
  CheckRank4(in[1], "filter");
  const Shape& x = in[0].shape();
  const Shape& f = in[1].shape();
  CheckChannels(x.dim(3), f.dim(2), f, x);
  return {PartialWindows(x, f.dim(0), f.dim(1), f.dim(3), attrs), in[0].dtype()};
}

OutputSpec PartialBackpropInput(std::span<const Tensor> in, const Attrs&) {
  CheckRank4(in[1], "filter");
  return internal::PartialBackpropInputShape(in);
}

OutputSpec PartialBackpropFilter(std::span<const Tensor> in, const Attrs&) {
  return internal::PartialBackpropFilterShape(in);
}

Attrs ConvAttrs(const Conv2DOptions& o) {
  return Attrs{{"strides", o.strides},
               {"use_cudnn_on_gpu", true},
               {"padding", o.padding},
               {"data_format", std::string("NHWC")},
               {"dilations", o.dilations}};
}

constexpr TypeAttr kTypeFromFilter[] = {{"T", 1}};

// y = relu?(y + bias?) in place, per element as BiasAdd's and Relu's kernels.
template <typename T>
void BiasAndRelu(T* y, int64_t n, const T* bias, int64_t channels, bool relu) {
  const T zero(0);
  for (int64_t i = 0; i < n; i += channels) {
    T* px = y + i;
    if (bias != nullptr) {
      for (int64_t c = 0; c < channels; ++c) px[c] = px[c] + bias[c];
    }
    if (relu) {
      for (int64_t c = 0; c < channels; ++c) px[c] = std::max(px[c], zero);
    }
  }
}

}  // namespace

namespace internal {

// output [pixels, out_c] = patches [pixels, kh*kw*c] x filter [kh*kw*c, out_c].
Tensor Conv2DForward(const Tensor& input, const Tensor& filter, const Tensor* bias, bool relu,
                     const Attrs& attrs, const OutputSpec& spec) {
  const Shape& f = filter.shape();
  const Geometry g = MakeGeometry(input.shape(), f.dim(0), f.dim(1), f.dim(3), attrs);
  if (spec.dtype == DType::kFloat32 && spec.shape.num_elements() > 0 &&
      input.shape().num_elements() > 0 && filter.shape().num_elements() > 0) {
    Tensor out = NewTensor(spec.shape, spec.dtype);
    if (DnnlConvForward(DnnlShape(g), input.data<float>().data(), filter.data<float>().data(),
                        MutableData<float>(out),
                        bias != nullptr ? bias->data<float>().data() : nullptr, relu)) {
      return out;
    }
  }
  const Tensor matrix = WithShape(filter, Shape{g.PatchSize(), g.out_channels});
  // The GEMM's fresh result, which nobody else has seen yet.
  Tensor out = WithShape(Gemm(Patches(g, input), matrix, false, false), spec.shape);
  if (bias == nullptr && !relu) return out;
  Dispatch<DTypeSet::kFloat>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    BiasAndRelu<T>(MutableData<T>(out), out.num_elements(),
                   bias != nullptr ? bias->data<T>().data() : nullptr, g.out_channels, relu);
  });
  return out;
}

}  // namespace internal

const OpDef kConv2DOp = {.type = "Conv2D",
                         .num_inputs = 2,
                         .infer = InferConv2D,
                         .compute = Conv2DKernel,
                         .gradient = Conv2DGradient,
                         .infer_partial = PartialConv2D};
const OpDef kConv2DBackpropInputOp = {.type = "Conv2DBackpropInput",
                                      .num_inputs = 3,
                                      .infer = InferBackpropInput,
                                      .compute = BackpropInputKernel,
                                      .gradient = BackpropInputGradient,
                                      .type_attrs = kTypeFromFilter,
                                      .infer_partial = PartialBackpropInput};
const OpDef kConv2DBackpropFilterOp = {.type = "Conv2DBackpropFilter",
                                       .num_inputs = 3,
                                       .infer = InferBackpropFilter,
                                       .compute = BackpropFilterKernel,
                                       .infer_partial = PartialBackpropFilter};

Tensor Conv2D(const Tensor& input, const Tensor& filter, const Conv2DOptions& options) {
  return Execute(kConv2DOp, input, filter, ConvAttrs(options));
}

Tensor Conv2DBackpropInput(const Tensor& input_sizes, const Tensor& filter,
                           const Tensor& out_backprop, const Conv2DOptions& options) {
  return Execute(kConv2DBackpropInputOp, {input_sizes, filter, out_backprop}, ConvAttrs(options));
}

Tensor Conv2DBackpropFilter(const Tensor& input, const Tensor& filter_sizes,
                            const Tensor& out_backprop, const Conv2DOptions& options) {
  return Execute(kConv2DBackpropFilterOp, {input, filter_sizes, out_backprop}, ConvAttrs(options));
}

}  // namespace eager
