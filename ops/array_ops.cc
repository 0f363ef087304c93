#include "ops/array_ops.h"

// Cast and the constant tensors; the shape ops are in shape_ops.cc, the index
// ops in index_ops.cc.

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "ops/execute.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/dynamic_shape.h"
#include "ops/internal/eigen_view.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using internal::DTypeSet;
using Grads = std::vector<std::optional<Tensor>>;

// ---- Cast ------------------------------------------------------------------

// Cast takes every dtype but string: the compute dtypes through Eigen, the
// storage dtypes (float16, bfloat16, complex, small and unsigned ints) one
// element at a time, as TF's Cast kernels convert.
OutputSpec InferCast(std::span<const Tensor> in, const Attrs& attrs) {
  const DType dst = attrs.GetType("DstT");
  if (in[0].dtype() == DType::kString || dst == DType::kString) {
    throw InvalidArgumentError(StrCat("cannot cast ", in[0].dtype(), " ", in[0].shape(), " to ",
                                      dst, "; Cast takes every dtype except string"));
  }
  return {in[0].shape(), dst};
}

template <typename T>
constexpr bool kIsComplex = false;
template <typename T>
constexpr bool kIsComplex<std::complex<T>> = true;
template <typename T>
constexpr bool kIs16BitFloat = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// One element as TF's Cast converts it: 16-bit floats through float32
// (rounded to nearest even on the way back), complex to real keeps the real
// part, real to complex has a zero imaginary part, to bool is "nonzero".
template <typename To, typename From>
To CastElement(const From& v) {
  if constexpr (kIs16BitFloat<From>) {
    return CastElement<To>(static_cast<float>(v));
  } else if constexpr (kIs16BitFloat<To>) {
    return To(CastElement<float>(v));
  } else if constexpr (kIsComplex<From> && kIsComplex<To>) {
    return To(static_cast<typename To::value_type>(v.real()),
              static_cast<typename To::value_type>(v.imag()));
  } else if constexpr (kIsComplex<From>) {
    return CastElement<To>(v.real());
  } else if constexpr (kIsComplex<To>) {
    return To(static_cast<typename To::value_type>(v), 0);
  } else {
    return static_cast<To>(v);
  }
}

void CastElementwise(const Tensor& x, Tensor& out) {
  VisitDType(x.dtype(), [&](auto from) {
    using F = typename decltype(from)::type;
    VisitDType(out.dtype(), [&](auto to) {
      using T = typename decltype(to)::type;
      if constexpr (!std::is_same_v<F, std::string> && !std::is_same_v<T, std::string>) {
        const auto src = x.data<F>();
        T* dst = internal::MutableData<T>(out);
        for (size_t i = 0; i < src.size(); ++i) dst[i] = CastElement<T>(src[i]);
      } else {
        throw InternalError("Cast reached with a string dtype; InferCast rejects it");
      }
    });
  });
}

Tensor CastKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& x = in[0];
  if (x.dtype() == spec.dtype) return internal::WithShape(x, x.shape());
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  if (!internal::DTypeIn(x.dtype(), DTypeSet::kNumericOrBool) ||
      !internal::DTypeIn(spec.dtype, DTypeSet::kNumericOrBool)) {
    CastElementwise(x, out);
    return out;
  }
  internal::Dispatch<DTypeSet::kNumericOrBool>(x.dtype(), [&](auto from) {
    using F = typename decltype(from)::type;
    internal::Dispatch<DTypeSet::kNumericOrBool>(spec.dtype, [&](auto to) {
      using T = typename decltype(to)::type;
      // static_cast semantics: float -> int truncates, nonzero -> true.
      internal::MutableFlatView<T>(out) = internal::FlatView<F>(x).template cast<T>();
    });
  });
  return out;
}

Grads CastGradient(const OpCall& call, const Tensor& grad) {
  const DType src = call.inputs[0].dtype();
  if (!IsFloating(src) || !IsFloating(grad.dtype())) return {std::nullopt};
  return {Cast(grad, src)};
}

}  // namespace

constexpr TypeAttr kCastTypes[] = {{"SrcT", 0}, {"DstT", TypeAttr::kOutput}};

const OpDef kCastOp = {.type = "Cast",
                       .num_inputs = 1,
                       .infer = InferCast,
                       .compute = CastKernel,
                       .gradient = CastGradient,
                       .type_attrs = kCastTypes};

Tensor Cast(const Tensor& x, DType dtype) {
  return Execute(kCastOp, x, Attrs{{"SrcT", x.dtype()}, {"DstT", dtype}});
}

Tensor Zeros(const Shape& shape, DType dtype) { return Tensor::Zeros(shape, dtype); }

Tensor Ones(const Shape& shape, DType dtype) {
  if (!internal::DTypeIn(dtype, DTypeSet::kNumericOrBool)) {
    throw InvalidArgumentError(StrCat("Ones: dtype ", dtype, " (shape ", shape,
                                      ") has no one; expected a numeric or bool dtype"));
  }
  Tensor out = internal::NewTensor(shape, dtype);
  internal::Dispatch<DTypeSet::kNumericOrBool>(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = internal::MutableData<T>(out);
    std::fill(o, o + out.num_elements(), T(1));
  });
  return out;
}

Tensor Fill(const Shape& shape, const Tensor& value) {
  if (value.rank() != 0) {
    throw InvalidArgumentError(StrCat("Fill: value must be a scalar, got shape ", value.shape(),
                                      " (", value.dtype(), ") for shape ", shape));
  }
  Tensor out = internal::NewTensor(shape, value.dtype());
  VisitDType(value.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = internal::MutableData<T>(out);
    std::fill(o, o + out.num_elements(), value.data<T>()[0]);
  });
  return out;
}

// A graph tensor's shape may be partly unknown until a Session runs: its
// zeros (ones) are a ZerosLike (OnesLike) node then, as in TF's gradient graphs.
Tensor ZerosLike(const Tensor& x) {
  if (x.is_symbolic()) return Execute(kZerosLikeOp, {x});
  return Tensor::Zeros(x.shape(), x.dtype());
}

Tensor OnesLike(const Tensor& x) {
  if (x.is_symbolic()) return Execute(kOnesLikeOp, {x});
  return Ones(x.shape(), x.dtype());
}

// ---- Fill, ZerosLike, OnesLike, Range ---------------------------------------------------
// Ops of TF 2.21's graphs of common layers (issue 39), with tensor inputs as
// TF's: a graph computes Fill's dims (Pack of Shape slices); the shape rules
// read them when they are known (ops/internal/dynamic_shape.h).

namespace {

OutputSpec InferFill(std::span<const Tensor> in, const Attrs&) {
  internal::CheckDTypeIn(in[0], "dims", DTypeSet::kIndex);
  const Tensor& dims = in[0];
  if (!dims.shape().unknown_rank() && dims.rank() != 1) {
    throw InvalidArgumentError(StrCat("dims must be a vector, got shape ", dims.shape()));
  }
  if (!in[1].shape().unknown_rank() && in[1].rank() != 0) {
    throw InvalidArgumentError(StrCat("value must be a scalar, got shape ", in[1].shape()));
  }
  const std::optional<std::vector<int64_t>> known = internal::KnownInts(dims);
  if (!known) {
    if (dims.shape().unknown_rank() || dims.shape().dim(0) == Shape::kUnknownDim) {
      return {Shape::UnknownRank(), in[1].dtype()};
    }
    return {Shape::Partial(
                std::vector<int64_t>(static_cast<size_t>(dims.shape().dim(0)), Shape::kUnknownDim)),
            in[1].dtype()};
  }
  for (int64_t d : *known) {
    if (d < 0) {
      throw InvalidArgumentError(StrCat("dims ", DimsToString(*known), " has a negative entry"));
    }
  }
  return {Shape(*known), in[1].dtype()};
}

Tensor FillKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return Fill(spec.shape, in[1]);
}

OutputSpec InferLike(std::span<const Tensor> in, const Attrs&) {
  internal::CheckDTypeIn(in[0], "x", DTypeSet::kNumericOrBool);
  return {in[0].shape(), in[0].dtype()};
}
Tensor ZerosLikeKernel(std::span<const Tensor>, const Attrs&, const OutputSpec& spec) {
  return Tensor::Zeros(spec.shape, spec.dtype);
}
Tensor OnesLikeKernel(std::span<const Tensor>, const Attrs&, const OutputSpec& spec) {
  return Ones(spec.shape, spec.dtype);
}

// TF's RangeOp: delta != 0 and pointing from start toward limit; the size
// is ceil(|limit - start| / |delta|); element i is start + i * delta.
template <typename T>
int64_t RangeSize(T start, T limit, T delta) {
  if (delta == T(0)) throw InvalidArgumentError(StrCat("Requires delta != 0: ", delta));
  if (delta > T(0) && start > limit) {
    throw InvalidArgumentError(
        StrCat("Requires start <= limit when delta > 0: ", start, "/", limit));
  }
  if (delta < T(0) && start < limit) {
    throw InvalidArgumentError(
        StrCat("Requires start >= limit when delta < 0: ", start, "/", limit));
  }
  if constexpr (std::is_integral_v<T>) {
    const auto span = static_cast<__int128>(limit) - static_cast<__int128>(start);
    const __int128 abs_span = span < 0 ? -span : span;
    const __int128 abs_delta = delta < 0 ? -static_cast<__int128>(delta) : delta;
    return static_cast<int64_t>((abs_span + abs_delta - 1) / abs_delta);
  } else {
    constexpr int64_t kMaxSize = std::numeric_limits<int64_t>::max() / 2;
    const T size = std::ceil(std::abs((limit - start) / delta));
    if (!(size <= static_cast<T>(kMaxSize))) {
      throw InvalidArgumentError(StrCat("Requires ((limit - start) / delta) <= ", kMaxSize, ": ",
                                        start, ", ", limit, ", ", delta));
    }
    return static_cast<int64_t>(size);
  }
}

OutputSpec InferRange(std::span<const Tensor> in, const Attrs&) {
  const char* names[] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) {
    internal::CheckDTypeIn(in[i], names[i], DTypeSet::kNumeric);
    internal::CheckSameDType(in[0], in[i], "start", names[i]);
    if (!in[i].shape().unknown_rank() && in[i].rank() != 0) {
      throw InvalidArgumentError(StrCat(names[i], " must be a scalar, not shape ", in[i].shape()));
    }
  }
  std::optional<Tensor> v[3];
  for (int i = 0; i < 3; ++i) v[i] = internal::KnownValue(in[i]);
  if (!v[0] || !v[1] || !v[2]) return {Shape::Partial({Shape::kUnknownDim}), in[0].dtype()};
  int64_t size = 0;
  internal::Dispatch<DTypeSet::kNumeric>(in[0].dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    size = RangeSize<T>(v[0]->data<T>()[0], v[1]->data<T>()[0], v[2]->data<T>()[0]);
  });
  return {Shape{size}, in[0].dtype()};
}

Tensor RangeKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kNumeric>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T start = in[0].data<T>()[0];
    const T delta = in[2].data<T>()[0];
    T* o = internal::MutableData<T>(out);
    for (int64_t i = 0; i < out.num_elements(); ++i) {
      if constexpr (std::is_integral_v<T>) {  // wraps as two's complement, never UB
        using U = std::make_unsigned_t<T>;
        o[i] = static_cast<T>(static_cast<U>(start) +
                              static_cast<U>(static_cast<U>(i) * static_cast<U>(delta)));
      } else {
        // TF's start + i * delta, rounded twice: the volatile product keeps
        // GCC (-ffp-contract=fast) from fusing it into one FMA, which
        // rounded -1 + 6 * 0.15 differently from TF 2.21.
        const volatile T step = static_cast<T>(i) * delta;
        o[i] = start + step;
      }
    }
  });
  return out;
}

constexpr TypeAttr kFillTypes[] = {{"T", 1}, {"index_type", 0}};
constexpr TypeAttr kRangeTypes[] = {{"Tidx", 0}};

}  // namespace

const OpDef kFillOp = {.type = "Fill",
                       .num_inputs = 2,
                       .infer = InferFill,
                       .compute = FillKernel,
                       .gradient = nullptr,  // TF: _FillGrad sums for value; rare in layers
                       .type_attrs = kFillTypes,
                       // The output's rank is dims' length, not its values.
                       .infer_partial = InferFill};
const OpDef kZerosLikeOp = {.type = "ZerosLike",
                            .num_inputs = 1,
                            .infer = InferLike,
                            .compute = ZerosLikeKernel,
                            .gradient = nullptr};
const OpDef kOnesLikeOp = {.type = "OnesLike",
                           .num_inputs = 1,
                           .infer = InferLike,
                           .compute = OnesLikeKernel,
                           .gradient = nullptr};
const OpDef kRangeOp = {.type = "Range",
                        .num_inputs = 3,
                        .infer = InferRange,
                        .compute = RangeKernel,
                        .gradient = nullptr,
                        .type_attrs = kRangeTypes};

Tensor Range(const Tensor& start, const Tensor& limit, const Tensor& delta) {
  return Execute(kRangeOp, {start, limit, delta});
}

}  // namespace eager
