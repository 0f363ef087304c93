#include "ops/array_ops.h"

// Cast and the constant tensors; the shape ops are in shape_ops.cc, the index
// ops in index_ops.cc.

#include <algorithm>

#include "ops/execute.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/eigen_view.h"
#include "runtime/internal/tensor_access.h"

namespace eager {
namespace {

using internal::DTypeSet;
using Grads = std::vector<std::optional<Tensor>>;

// ---- Cast ------------------------------------------------------------------

OutputSpec InferCast(std::span<const Tensor> in, const Attrs& attrs) {
  internal::CheckDTypeIn(in[0], "x", DTypeSet::kNumericOrBool);
  const DType dst = attrs.GetType("DstT");
  if (!internal::DTypeIn(dst, DTypeSet::kNumericOrBool)) {
    throw InvalidArgumentError(StrCat("cannot cast ", in[0].dtype(), " ", in[0].shape(), " to ",
                                      dst, "; expected ",
                                      internal::DTypeSetName(DTypeSet::kNumericOrBool)));
  }
  return {in[0].shape(), dst};
}

Tensor CastKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& x = in[0];
  if (x.dtype() == spec.dtype) return internal::WithShape(x, x.shape());
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
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
  return Execute(kCastOp, {x}, Attrs{{"SrcT", x.dtype()}, {"DstT", dtype}});
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
