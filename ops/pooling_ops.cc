#include "ops/pooling_ops.h"

#include <algorithm>
#include <optional>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "ops/execute.h"
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

Geometry PoolGeometry(const Shape& input, const Attrs& attrs) {
  const std::vector<int64_t> ksize = internal::SpatialList(attrs, "ksize");
  return internal::MakeGeometry(input, ksize[1], ksize[2], input.dim(3), attrs);
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

// ---- AvgPool and AvgPoolGrad ----

// The mean of each window over the input pixels it covers: with "SAME"
// padding the padded positions are left out of the count, as TF's kernels.
OutputSpec InferAvgPool(std::span<const Tensor> in, const Attrs& attrs) {
  CheckImages(in[0], "value");
  return {OutputShape(PoolGeometry(in[0].shape(), attrs)), in[0].dtype()};
}

Tensor AvgPoolKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Geometry g = PoolGeometry(in[0].shape(), attrs);
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kFloat>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].data<T>().data();
    T* y = internal::MutableData<T>(out);
    const int64_t c = g.channels;
    const int64_t rows = g.batch * g.h.out;
    const int64_t row_elements = std::max<int64_t>(1, g.w.out * c * g.h.k * g.w.k);
    const int64_t grain = std::max<int64_t>(1, internal::kElementwiseGrain / row_elements);
    internal::ParallelFor(rows, grain, 2, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t n = r / g.h.out;
        const int64_t oh = r % g.h.out;
        const T* image = x + n * g.h.in * g.w.in * c;
        for (int64_t ow = 0; ow < g.w.out; ++ow) {
          const Window win = WindowOf(g, oh, ow);
          T* px = y + (r * g.w.out + ow) * c;
          std::fill(px, px + c, T(0));
          for (int64_t ih = win.h_begin; ih < win.h_end; ++ih) {
            for (int64_t iw = win.w_begin; iw < win.w_end; ++iw) {
              const T* v = image + (ih * g.w.in + iw) * c;
              for (int64_t i = 0; i < c; ++i) px[i] += v[i];
            }
          }
          const T count = static_cast<T>((win.h_end - win.h_begin) * (win.w_end - win.w_begin));
          for (int64_t i = 0; i < c; ++i) px[i] /= count;
        }
      }
    });
  });
  return out;
}

// TF's _AvgPoolGrad: the shape goes in as a tensor, so a graph with an
// unknown batch still differentiates.
Grads AvgPoolGradient(const OpCall& call, const Tensor& grad) {
  return {AvgPoolGrad(ShapeOf(call.inputs[0], DType::kInt32), grad, PoolOptionsOf(call.attrs))};
}

// orig_input_shape: int32 [4], none negative; nullopt for a graph tensor
// whose values are not known yet.
std::optional<Shape> ReadInputShape(const Tensor& t) {
  if (t.dtype() != DType::kInt32 || t.rank() != 1 ||
      (t.shape().dim(0) != 4 && t.shape().dim(0) != Shape::kUnknownDim)) {
    throw InvalidArgumentError(StrCat("orig_input_shape must be an int32 vector of 4 sizes, got ",
                                      t.dtype(), " of shape ", t.shape()));
  }
  if (t.is_symbolic()) return std::nullopt;
  std::vector<int64_t> dims;
  for (int32_t v : t.data<int32_t>()) {
    if (v < 0) {
      throw InvalidArgumentError(
          StrCat("orig_input_shape has a negative size: ", Shape(t.ToVector<int64_t>())));
    }
    dims.push_back(v);
  }
  return Shape(dims);
}

// In a graph: what is known of orig_input_shape's values (the static shape
// of x for Shape(x), as TF's shape function reads it), else only channels.
OutputSpec PartialAvgPoolGrad(std::span<const Tensor> in, const Attrs&) {
  CheckImages(in[1], "grad");
  if (std::optional<Shape> shape = ReadInputShape(in[0])) return {*shape, in[1].dtype()};
  if (std::optional<Shape> partial = internal::PartialShapeValue(in[0]);
      partial && partial->rank() == 4) {
    return {*partial, in[1].dtype()};
  }
  return {Shape::Partial({-1, -1, -1, in[1].shape().dim(3)}), in[1].dtype()};
}

OutputSpec InferAvgPoolGrad(std::span<const Tensor> in, const Attrs& attrs) {
  CheckImages(in[1], "grad");
  const std::optional<Shape> shape = ReadInputShape(in[0]);
  if (!shape) return PartialAvgPoolGrad(in, attrs);
  if (shape->dim(3) != in[1].shape().dim(3)) {
    throw InvalidArgumentError(StrCat("grad has ", in[1].shape().dim(3),
                                      " channels but orig_input_shape ", *shape, " has ",
                                      shape->dim(3)));
  }
  const Shape expected = OutputShape(PoolGeometry(*shape, attrs));
  if (in[1].shape() != expected) {
    throw InvalidArgumentError(StrCat("grad must have the pooled shape ", expected,
                                      " of orig_input_shape ", *shape, ", got ", in[1].shape()));
  }
  return {*shape, in[1].dtype()};
}

// Each window's gradient, divided by its pixel count, added to every pixel
// it covers; each image on one thread, windows in a fixed order.
Tensor AvgPoolGradKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Geometry g = PoolGeometry(spec.shape, attrs);
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kFloat>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* dy = in[1].data<T>().data();
    T* dx = internal::MutableData<T>(out);
    const int64_t c = g.channels;
    const int64_t in_image = g.h.in * g.w.in * c;
    const int64_t out_image = g.h.out * g.w.out * c;
    internal::ParallelFor(g.batch, 1, 2, [&](int64_t begin, int64_t end) {
      std::vector<T> share(static_cast<size_t>(c));
      for (int64_t n = begin; n < end; ++n) {
        T* dx_image = dx + n * in_image;
        std::fill(dx_image, dx_image + in_image, T(0));
        for (int64_t oh = 0; oh < g.h.out; ++oh) {
          for (int64_t ow = 0; ow < g.w.out; ++ow) {
            const Window win = WindowOf(g, oh, ow);
            const T count = static_cast<T>((win.h_end - win.h_begin) * (win.w_end - win.w_begin));
            const T* grad = dy + n * out_image + (oh * g.w.out + ow) * c;
            for (int64_t i = 0; i < c; ++i) share[static_cast<size_t>(i)] = grad[i] / count;
            for (int64_t ih = win.h_begin; ih < win.h_end; ++ih) {
              for (int64_t iw = win.w_begin; iw < win.w_end; ++iw) {
                T* px = dx_image + (ih * g.w.in + iw) * c;
                for (int64_t i = 0; i < c; ++i) px[i] += share[static_cast<size_t>(i)];
              }
            }
          }
        }
      }
    });
  });
  return out;
}

// TF's _AvgPoolGradGrad: AvgPoolGrad is linear in grad, its adjoint AvgPool.
Grads AvgPoolGradGradient(const OpCall& call, const Tensor& grad) {
  return {std::nullopt, AvgPool(grad, PoolOptionsOf(call.attrs))};
}

OutputSpec PartialMaxPool(std::span<const Tensor> in, const Attrs& attrs) {
  CheckImages(in[0], "input");
  const std::vector<int64_t> ksize = internal::SpatialList(attrs, "ksize");
  const Shape& x = in[0].shape();
  return {internal::PartialWindows(x, ksize[1], ksize[2], x.dim(3), attrs), in[0].dtype()};
}

OutputSpec PartialMaxPoolGrad(std::span<const Tensor> in, const Attrs&) {
  CheckImages(in[0], "orig_input");
  internal::CheckSameDType(in[0], in[1], "orig_input", "orig_output");
  internal::CheckSameDType(in[0], in[2], "orig_input", "grad");
  return {in[0].shape(), in[0].dtype()};
}

constexpr TypeAttr kTypeFromGrad[] = {{"T", 1}};

Attrs PoolAttrs(const PoolOptions& o) {
  return Attrs{{"ksize", o.ksize},
               {"strides", o.strides},
               {"padding", o.padding},
               {"data_format", std::string("NHWC")}};
}

}  // namespace

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

const OpDef kAvgPoolOp = {.type = "AvgPool",
                          .num_inputs = 1,
                          .infer = InferAvgPool,
                          .compute = AvgPoolKernel,
                          .gradient = AvgPoolGradient,
                          .infer_partial = PartialMaxPool};
const OpDef kAvgPoolGradOp = {.type = "AvgPoolGrad",
                              .num_inputs = 2,
                              .infer = InferAvgPoolGrad,
                              .compute = AvgPoolGradKernel,
                              .gradient = AvgPoolGradGradient,
                              .type_attrs = kTypeFromGrad,
                              .infer_partial = PartialAvgPoolGrad};

Tensor MaxPool(const Tensor& input, const PoolOptions& options) {
  return Execute(kMaxPoolOp, input, PoolAttrs(options));
}

Tensor MaxPoolGrad(const Tensor& orig_input, const Tensor& orig_output, const Tensor& grad,
                   const PoolOptions& options) {
  return Execute(kMaxPoolGradOp, {orig_input, orig_output, grad}, PoolAttrs(options));
}

Tensor AvgPool(const Tensor& value, const PoolOptions& options) {
  return Execute(kAvgPoolOp, value, PoolAttrs(options));
}

Tensor AvgPoolGrad(const Tensor& orig_input_shape, const Tensor& grad, const PoolOptions& options) {
  return Execute(kAvgPoolGradOp, {orig_input_shape, grad}, PoolAttrs(options));
}

}  // namespace eager
