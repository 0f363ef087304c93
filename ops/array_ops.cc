#include "ops/array_ops.h"

// Cast and the constant tensors; the shape ops are in shape_ops.cc, the index
// ops in index_ops.cc.

#include <algorithm>
#include <complex>
#include <type_traits>

#include "ops/execute.h"
#include "ops/internal/dispatch.h"
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

Tensor ZerosLike(const Tensor& x) { return Tensor::Zeros(x.shape(), x.dtype()); }

Tensor OnesLike(const Tensor& x) { return Ones(x.shape(), x.dtype()); }

}  // namespace eager
