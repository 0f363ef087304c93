#include "ops/conv_ops.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "ops/execute.h"
#include "ops/internal/conv2d_forward.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/dnnl_conv.h"
#include "ops/matmul.h"
#include "ops/parallel.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using internal::DTypeSet;
using Grads = std::vector<std::optional<Tensor>>;

// ---- Geometry: TF's GetWindowedOutputSize, for both spatial dimensions ----

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
                      const Attrs& attrs, std::string_view strides_attr = "strides") {
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

Geometry PoolGeometry(const Shape& input, const Attrs& attrs) {
  const std::vector<int64_t> ksize = SpatialList(attrs, "ksize");
  return MakeGeometry(input, ksize[1], ksize[2], input.dim(3), attrs);
}

Shape OutputShape(const Geometry& g) { return Shape{g.batch, g.h.out, g.w.out, g.out_channels}; }

void CheckImages(const Tensor& t, std::string_view what) {
  internal::CheckDTypeIn(t, what, DTypeSet::kFloat);
  if (t.rank() != 4) {
    throw InvalidArgumentError(
        StrCat(what, " must be of rank 4 [batch, height, width, channels], got ", t.shape()));
  }
}

void CheckFilterShape(const Shape& filter, const Shape& input) {
  if (filter.rank() != 4 || filter.dim(2) != input.dim(3)) {
    throw InvalidArgumentError(
        StrCat("filter must be [height, width, in_channels, out_channels] with in_channels = the "
               "input's ",
               input.dim(3), ", got filter ", filter, " for input ", input));
  }
}

// A sizes input (input_sizes, filter_sizes): int32 [4], none negative; its
// values, or nullopt for a graph tensor whose values are not known yet.
std::optional<Shape> ReadSizes(const Tensor& t, std::string_view what) {
  internal::CheckDTypeIn(t, what, DTypeSet::kIndex);
  if (t.rank() != 1 || (t.shape().dim(0) != 4 && t.shape().dim(0) != Shape::kUnknownDim)) {
    throw InvalidArgumentError(StrCat(what, " must be a vector of 4 sizes, got shape ", t.shape()));
  }
  if (t.is_symbolic()) return std::nullopt;
  std::vector<int64_t> dims;
  if (t.dtype() == DType::kInt32) {
    for (int32_t v : t.data<int32_t>()) dims.push_back(v);
  } else {
    dims = t.ToVector<int64_t>();
  }
  for (int64_t d : dims) {
    if (d < 0) throw InvalidArgumentError(StrCat(what, " has a negative size: ", Shape(dims)));
  }
  return Shape(dims);
}

void CheckBackprop(const Tensor& out_backprop, const Shape& expected) {
  if (out_backprop.shape() != expected) {
    throw InvalidArgumentError(StrCat("out_backprop must have the forward output's shape ",
                                      expected, ", got ", out_backprop.shape()));
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

Tensor SizesOf(const Tensor& t, std::string_view what) {
  if (!t.shape().IsFullyDefined()) {
    throw UnimplementedError(StrCat("the gradient of Conv2D needs the ", what,
                                    "'s full shape, but it is only known as ", t.shape(),
                                    " in this graph; give its placeholder a fully known shape"));
  }
  std::vector<int32_t> dims;
  for (int64_t d : t.shape().dims()) dims.push_back(static_cast<int32_t>(d));
  return Tensor::FromVector<int32_t>(std::move(dims));
}

// TF's _Conv2DGrad.
Grads Conv2DGradient(const OpCall& call, const Tensor& grad) {
  const Conv2DOptions options = ConvOptionsOf(call.attrs);
  Grads grads(2);
  if (call.NeedsGradient(0)) {
    grads[0] = Conv2DBackpropInput(SizesOf(call.inputs[0], "input"), call.inputs[1], grad, options);
  }
  if (call.NeedsGradient(1)) {
    grads[1] =
        Conv2DBackpropFilter(call.inputs[0], SizesOf(call.inputs[1], "filter"), grad, options);
  }
  return grads;
}

// ---- Conv2DBackpropInput (input_sizes, filter, out_backprop) ----

OutputSpec InferBackpropInput(std::span<const Tensor> in, const Attrs& attrs) {
  const Tensor& filter = in[1];
  const Tensor& grad = in[2];
  CheckImages(grad, "out_backprop");
  internal::CheckSameDType(filter, grad, "filter", "out_backprop");
  const std::optional<Shape> sizes = ReadSizes(in[0], "input_sizes");
  if (filter.rank() != 4) {
    throw InvalidArgumentError(StrCat("filter must be of rank 4, got ", filter.shape()));
  }
  if (!sizes) return {Shape::Partial({-1, -1, -1, filter.shape().dim(2)}), grad.dtype()};
  CheckFilterShape(filter.shape(), *sizes);
  const Shape& f = filter.shape();
  CheckBackprop(grad, OutputShape(MakeGeometry(*sizes, f.dim(0), f.dim(1), f.dim(3), attrs)));
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

// ---- Conv2DBackpropFilter (input, filter_sizes, out_backprop) ----

OutputSpec InferBackpropFilter(std::span<const Tensor> in, const Attrs& attrs) {
  const Tensor& input = in[0];
  const Tensor& grad = in[2];
  CheckImages(input, "input");
  CheckImages(grad, "out_backprop");
  internal::CheckSameDType(input, grad, "input", "out_backprop");
  const std::optional<Shape> sizes = ReadSizes(in[1], "filter_sizes");
  if (!sizes) return {Shape::Partial({-1, -1, input.shape().dim(3), -1}), input.dtype()};
  CheckFilterShape(*sizes, input.shape());
  CheckBackprop(grad, OutputShape(MakeGeometry(input.shape(), sizes->dim(0), sizes->dim(1),
                                               sizes->dim(3), attrs)));
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

// ---- MaxPool and MaxPoolGrad ----

OutputSpec InferMaxPool(std::span<const Tensor> in, const Attrs& attrs) {
  CheckImages(in[0], "input");
  return {OutputShape(PoolGeometry(in[0].shape(), attrs)), in[0].dtype()};
}

// One window of one output pixel: rows [h_begin, h_end) and columns
// [w_begin, w_end) of the input, clipped to it (padding never wins a max).
struct Window {
  int64_t h_begin, h_end, w_begin, w_end;
};

Window WindowOf(const Geometry& g, int64_t oh, int64_t ow) {
  const int64_t h0 = oh * g.h.stride - g.h.pad_before;
  const int64_t w0 = ow * g.w.stride - g.w.pad_before;
  return {std::max<int64_t>(h0, 0), std::min(h0 + g.h.k, g.h.in), std::max<int64_t>(w0, 0),
          std::min(w0 + g.w.k, g.w.in)};
}

// For every channel of one window of image `image`: the first maximum in
// the window's row-major order (TF's CPU kernel's tie rule: a later element
// wins only when strictly greater). Its value goes to best[c] and, when
// `index` is not null, its offset in the input to index[c]. The loops run
// over contiguous channels, so they vectorize.
template <typename T>
void WindowMax(const Geometry& g, const T* image, const Window& win, T* best, int64_t* index) {
  const int64_t c = g.channels;
  bool first = true;
  for (int64_t ih = win.h_begin; ih < win.h_end; ++ih) {
    for (int64_t iw = win.w_begin; iw < win.w_end; ++iw) {
      const int64_t base = (ih * g.w.in + iw) * c;
      const T* x = image + base;
      if (first) {
        std::copy(x, x + c, best);
        if (index != nullptr) {
          for (int64_t i = 0; i < c; ++i) index[i] = base + i;
        }
        first = false;
        continue;
      }
      if (index == nullptr) {
        for (int64_t i = 0; i < c; ++i) best[i] = x[i] > best[i] ? x[i] : best[i];
      } else {
        for (int64_t i = 0; i < c; ++i) {
          const bool greater = x[i] > best[i];
          best[i] = greater ? x[i] : best[i];
          index[i] = greater ? base + i : index[i];
        }
      }
    }
  }
}

// The common 2x2 window with stride 2 and no padding before (VALID, or
// SAME on even sizes): every window is whole, each input pixel in at most
// one. Its loops below compare the four pixels of a window in registers,
// channel vector by channel vector, with WindowMax's rule (a later pixel wins
// only when strictly greater, so a NaN never replaces a maximum and a NaN
// first pixel stays it).
bool IsWholeTwoByTwo(const Geometry& g) {
  return g.h.k == 2 && g.w.k == 2 && g.h.stride == 2 && g.w.stride == 2 && g.h.pad_before == 0 &&
         g.w.pad_before == 0 && 2 * g.h.out <= g.h.in && 2 * g.w.out <= g.w.in;
}

// One row `oh` of output pixels of one image.
template <typename T>
void MaxPoolTwoByTwoRow(const Geometry& g, const T* image, int64_t oh, T* y_row) {
  const int64_t c = g.channels;
  for (int64_t ow = 0; ow < g.w.out; ++ow) {
    const T* p00 = image + (2 * oh * g.w.in + 2 * ow) * c;
    const T* p01 = p00 + c;
    const T* p10 = p00 + g.w.in * c;
    const T* p11 = p10 + c;
    T* y = y_row + ow * c;
    for (int64_t i = 0; i < c; ++i) {
      T best = p00[i];
      best = p01[i] > best ? p01[i] : best;
      best = p10[i] > best ? p10[i] : best;
      y[i] = p11[i] > best ? p11[i] : best;
    }
  }
}

// One window's `c` channels: its gradient to the first maximum of the four
// pixels p00, p01, p10, p11 (row-major), zeros to the other three.
template <typename T>
void TwoByTwoGrad(int64_t c, const T* __restrict p00, const T* __restrict p01,
                  const T* __restrict p10, const T* __restrict p11, const T* __restrict grad,
                  T* __restrict d00, T* __restrict d01, T* __restrict d10, T* __restrict d11) {
  int64_t i = 0;
#if defined(__AVX512F__)
  // GCC keeps the selects below as branches (comparisons may trap under its
  // default -ftrapping-math), so float32 has the same steps in vectors.
  if constexpr (std::is_same_v<T, float>) {
    for (; i + 16 <= c; i += 16) {
      const __m512 a = _mm512_loadu_ps(p00 + i);
      const __m512 b = _mm512_loadu_ps(p01 + i);
      const __m512 e = _mm512_loadu_ps(p10 + i);
      const __m512 f = _mm512_loadu_ps(p11 + i);
      const __mmask16 w1 = _mm512_cmp_ps_mask(b, a, _CMP_GT_OQ);
      __m512 best = _mm512_mask_blend_ps(w1, a, b);
      const __mmask16 w2 = _mm512_cmp_ps_mask(e, best, _CMP_GT_OQ);
      best = _mm512_mask_blend_ps(w2, best, e);
      const __mmask16 w3 = _mm512_cmp_ps_mask(f, best, _CMP_GT_OQ);
      const __m512 v = _mm512_add_ps(_mm512_setzero_ps(), _mm512_loadu_ps(grad + i));
      const auto later = static_cast<__mmask16>(w2 | w3);
      _mm512_storeu_ps(d11 + i, _mm512_maskz_mov_ps(w3, v));
      _mm512_storeu_ps(d10 + i, _mm512_maskz_mov_ps(static_cast<__mmask16>(w2 & ~w3), v));
      _mm512_storeu_ps(d01 + i, _mm512_maskz_mov_ps(static_cast<__mmask16>(w1 & ~later), v));
      _mm512_storeu_ps(d00 + i, _mm512_maskz_mov_ps(static_cast<__mmask16>(~(w1 | later)), v));
    }
  }
#endif
  for (; i < c; ++i) {
    // The winner's position 0..3, 32 bits wide as the floats it follows.
    T best = p00[i];
    int32_t at = 0;
    at = p01[i] > best ? 1 : at;
    best = p01[i] > best ? p01[i] : best;
    at = p10[i] > best ? 2 : at;
    best = p10[i] > best ? p10[i] : best;
    at = p11[i] > best ? 3 : at;
    // 0 + grad, as MaxPoolGradKernel's adds round it (-0 becomes +0).
    const T v = T(0) + grad[i];
    d00[i] = at == 0 ? v : T(0);
    d01[i] = at == 1 ? v : T(0);
    d10[i] = at == 2 ? v : T(0);
    d11[i] = at == 3 ? v : T(0);
  }
}

// MaxPoolGrad of one image: the window's gradient to its first maximum,
// zeros to the other three pixels and to the pixels no window covers (an
// odd last row or column under VALID). Every dx pixel is written once.
template <typename T>
void MaxPoolGradTwoByTwo(const Geometry& g, const T* image, const T* dy_image, T* dx_image) {
  const int64_t c = g.channels;
  const int64_t row = g.w.in * c;
  for (int64_t ih = 0; ih < g.h.in; ++ih) {
    T* dx_row = dx_image + ih * row;
    if (ih >= 2 * g.h.out) {
      std::fill(dx_row, dx_row + row, T(0));
    } else if (2 * g.w.out < g.w.in) {
      std::fill(dx_row + 2 * g.w.out * c, dx_row + row, T(0));
    }
  }
  for (int64_t oh = 0; oh < g.h.out; ++oh) {
    for (int64_t ow = 0; ow < g.w.out; ++ow) {
      const int64_t base = (2 * oh * g.w.in + 2 * ow) * c;
      const T* p00 = image + base;
      const T* p01 = p00 + c;
      const T* p10 = p00 + row;
      const T* p11 = p10 + c;
      T* d00 = dx_image + base;
      T* d01 = d00 + c;
      T* d10 = d00 + row;
      T* d11 = d10 + c;
      TwoByTwoGrad<T>(c, p00, p01, p10, p11, dy_image + (oh * g.w.out + ow) * c, d00, d01, d10,
                      d11);
    }
  }
}

Tensor MaxPoolKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Geometry g = PoolGeometry(in[0].shape(), attrs);
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kFloat>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].data<T>().data();
    T* y = internal::MutableData<T>(out);
    // One row of output pixels per item; each written from its own window.
    const bool two_by_two = IsWholeTwoByTwo(g);
    const int64_t rows = g.batch * g.h.out;
    const int64_t row_elements = std::max<int64_t>(1, g.w.out * g.channels * g.h.k * g.w.k);
    const int64_t grain = std::max<int64_t>(1, internal::kElementwiseGrain / row_elements);
    internal::ParallelFor(rows, grain, 2, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t n = r / g.h.out;
        const int64_t oh = r % g.h.out;
        const T* image = x + n * g.h.in * g.w.in * g.channels;
        if (two_by_two) {
          MaxPoolTwoByTwoRow<T>(g, image, oh, y + r * g.w.out * g.channels);
          continue;
        }
        for (int64_t ow = 0; ow < g.w.out; ++ow) {
          WindowMax<T>(g, image, WindowOf(g, oh, ow), y + (r * g.w.out + ow) * g.channels, nullptr);
        }
      }
    });
  });
  return out;
}

PoolOptions PoolOptionsOf(const Attrs& attrs) {
  return {.ksize = attrs.GetInts("ksize"),
          .strides = attrs.GetInts("strides"),
          .padding = attrs.GetString("padding")};
}

// TF's _MaxPoolGrad.
Grads MaxPoolGradient(const OpCall& call, const Tensor& grad) {
  return {MaxPoolGrad(call.inputs[0], call.output, grad, PoolOptionsOf(call.attrs))};
}

OutputSpec InferMaxPoolGrad(std::span<const Tensor> in, const Attrs& attrs) {
  CheckImages(in[0], "orig_input");
  internal::CheckSameDType(in[0], in[1], "orig_input", "orig_output");
  internal::CheckSameDType(in[0], in[2], "orig_input", "grad");
  const Shape expected = OutputShape(PoolGeometry(in[0].shape(), attrs));
  if (in[1].shape() != expected || in[2].shape() != expected) {
    throw InvalidArgumentError(StrCat("orig_output and grad must have the pooled shape ", expected,
                                      ", got ", in[1].shape(), " and ", in[2].shape()));
  }
  return {in[0].shape(), in[0].dtype()};
}

// Windows may overlap (stride < ksize), so one input pixel can collect from
// several windows; each batch item is summed on one thread in a fixed order.
Tensor MaxPoolGradKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Geometry g = PoolGeometry(in[0].shape(), attrs);
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kFloat>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].data<T>().data();
    const T* dy = in[2].data<T>().data();
    T* dx = internal::MutableData<T>(out);
    const int64_t c = g.channels;
    const int64_t in_image = g.h.in * g.w.in * c;
    const int64_t out_image = g.h.out * g.w.out * c;
    const bool two_by_two = IsWholeTwoByTwo(g);
    internal::ParallelFor(g.batch, 1, 2, [&](int64_t begin, int64_t end) {
      std::vector<T> best(static_cast<size_t>(c));
      std::vector<int64_t> index(static_cast<size_t>(c));
      for (int64_t n = begin; n < end; ++n) {
        T* dx_image = dx + n * in_image;
        if (two_by_two) {
          MaxPoolGradTwoByTwo<T>(g, x + n * in_image, dy + n * out_image, dx_image);
          continue;
        }
        std::fill(dx_image, dx_image + in_image, T(0));
        for (int64_t oh = 0; oh < g.h.out; ++oh) {
          for (int64_t ow = 0; ow < g.w.out; ++ow) {
            WindowMax<T>(g, x + n * in_image, WindowOf(g, oh, ow), best.data(), index.data());
            const T* grad = dy + n * out_image + (oh * g.w.out + ow) * c;
            for (int64_t i = 0; i < c; ++i) dx_image[index[static_cast<size_t>(i)]] += grad[i];
          }
        }
      }
    });
  });
  return out;
}

// ---- The rules on partially known shapes (graph mode) ----
//
// Each output dimension is known when the dimensions it is computed from
// are; the checks are those that known dimensions allow.

int64_t PartialOut(std::string_view dim, int64_t in, int64_t k, int64_t stride, int64_t dilation,
                   bool same) {
  if (in == Shape::kUnknownDim || (!same && k == Shape::kUnknownDim)) return Shape::kUnknownDim;
  return MakeSpan(dim, in, k == Shape::kUnknownDim ? 1 : k, stride, dilation, same).out;
}

Shape PartialWindows(const Shape& input, int64_t kh, int64_t kw, int64_t out_channels,
                     const Attrs& attrs, std::string_view strides_attr = "strides") {
  CheckFormat(attrs);
  const std::vector<int64_t> strides = SpatialList(attrs, strides_attr);
  std::vector<int64_t> dilations = {1, 1, 1, 1};
  if (attrs.Has("dilations")) dilations = SpatialList(attrs, "dilations");
  const bool same = IsSame(attrs);
  return Shape::Partial(
      {input.dim(0), PartialOut("height", input.dim(1), kh, strides[1], dilations[1], same),
       PartialOut("width", input.dim(2), kw, strides[2], dilations[2], same), out_channels});
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
  CheckImages(in[2], "out_backprop");
  internal::CheckSameDType(in[1], in[2], "filter", "out_backprop");
  CheckRank4(in[1], "filter");
  if (std::optional<Shape> sizes = ReadSizes(in[0], "input_sizes")) return {*sizes, in[2].dtype()};
  return {Shape::Partial({-1, -1, -1, in[1].shape().dim(2)}), in[2].dtype()};
}

OutputSpec PartialBackpropFilter(std::span<const Tensor> in, const Attrs&) {
  CheckImages(in[0], "input");
  CheckImages(in[2], "out_backprop");
  internal::CheckSameDType(in[0], in[2], "input", "out_backprop");
  if (std::optional<Shape> sizes = ReadSizes(in[1], "filter_sizes")) {
    return {*sizes, in[0].dtype()};
  }
  return {Shape::Partial({-1, -1, in[0].shape().dim(3), -1}), in[0].dtype()};
}

OutputSpec PartialMaxPool(std::span<const Tensor> in, const Attrs& attrs) {
  CheckImages(in[0], "input");
  const std::vector<int64_t> ksize = SpatialList(attrs, "ksize");
  const Shape& x = in[0].shape();
  return {PartialWindows(x, ksize[1], ksize[2], x.dim(3), attrs), in[0].dtype()};
}

OutputSpec PartialMaxPoolGrad(std::span<const Tensor> in, const Attrs&) {
  CheckImages(in[0], "orig_input");
  internal::CheckSameDType(in[0], in[1], "orig_input", "orig_output");
  internal::CheckSameDType(in[0], in[2], "orig_input", "grad");
  return {in[0].shape(), in[0].dtype()};
}

Attrs ConvAttrs(const Conv2DOptions& o) {
  return Attrs{{"strides", o.strides},
               {"use_cudnn_on_gpu", true},
               {"padding", o.padding},
               {"data_format", std::string("NHWC")},
               {"dilations", o.dilations}};
}

Attrs PoolAttrs(const PoolOptions& o) {
  return Attrs{{"ksize", o.ksize},
               {"strides", o.strides},
               {"padding", o.padding},
               {"data_format", std::string("NHWC")}};
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
                                      .type_attrs = kTypeFromFilter,
                                      .infer_partial = PartialBackpropInput};
const OpDef kConv2DBackpropFilterOp = {.type = "Conv2DBackpropFilter",
                                       .num_inputs = 3,
                                       .infer = InferBackpropFilter,
                                       .compute = BackpropFilterKernel,
                                       .infer_partial = PartialBackpropFilter};
const OpDef kMaxPoolOp = {.type = "MaxPool",
                          .num_inputs = 1,
                          .infer = InferMaxPool,
                          .compute = MaxPoolKernel,
                          .gradient = MaxPoolGradient,
                          .infer_partial = PartialMaxPool};
const OpDef kMaxPoolGradOp = {.type = "MaxPoolGrad",
                              .num_inputs = 3,
                              .infer = InferMaxPoolGrad,
                              .compute = MaxPoolGradKernel,
                              .infer_partial = PartialMaxPoolGrad};

Tensor Conv2D(const Tensor& input, const Tensor& filter, const Conv2DOptions& options) {
  return Execute(kConv2DOp, input, filter, ConvAttrs(options));
}

Tensor MaxPool(const Tensor& input, const PoolOptions& options) {
  return Execute(kMaxPoolOp, input, PoolAttrs(options));
}

Tensor Conv2DBackpropInput(const Tensor& input_sizes, const Tensor& filter,
                           const Tensor& out_backprop, const Conv2DOptions& options) {
  return Execute(kConv2DBackpropInputOp, {input_sizes, filter, out_backprop}, ConvAttrs(options));
}

Tensor Conv2DBackpropFilter(const Tensor& input, const Tensor& filter_sizes,
                            const Tensor& out_backprop, const Conv2DOptions& options) {
  return Execute(kConv2DBackpropFilterOp, {input, filter_sizes, out_backprop}, ConvAttrs(options));
}

Tensor MaxPoolGrad(const Tensor& orig_input, const Tensor& orig_output, const Tensor& grad,
                   const PoolOptions& options) {
  return Execute(kMaxPoolGradOp, {orig_input, orig_output, grad}, PoolAttrs(options));
}

}  // namespace eager
