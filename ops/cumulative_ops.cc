#include "ops/cumulative_ops.h"

#include <type_traits>
#include <vector>

#include "ops/binary_ops.h"
#include "ops/execute.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/scalar_like.h"
#include "ops/op_def.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using internal::DTypeSet;
using Grads = std::vector<std::optional<Tensor>>;

OutputSpec InferCumulative(std::span<const Tensor> in, const Attrs& attrs) {
  const Tensor& x = in[0];
  internal::CheckDTypeIn(x, "x", DTypeSet::kNumeric);
  if (!x.shape().unknown_rank()) {
    const int64_t axis = attrs.GetInt("axis");
    if (axis < -x.rank() || axis >= x.rank()) {
      throw InvalidArgumentError(StrCat("axis ", axis, " is out of range for shape ", x.shape(),
                                        "; expected axis in [", -x.rank(), ", ", x.rank(), ")"));
    }
  }
  return {x.shape(), x.dtype()};
}

// Integer sums and products wrap as TF's do (two's complement), without
// the undefined behaviour of signed overflow (UBSan flagged int32 Cumsum):
// the arithmetic is done in Wrapping<T>, an unsigned type at least as wide
// as int (so that uint16 * uint16 is not promoted to a signed int either);
// floats and bool as they are.
template <typename T, bool = std::is_integral_v<T> && !std::is_same_v<T, bool>>
struct WrappingOf {
  using type = T;
};
template <typename T>
struct WrappingOf<T, true> {
  using type =
      std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
};
template <typename T>
using Wrapping = typename WrappingOf<T>::type;

template <typename T>
T WrapAdd(T a, T b) {
  using U = Wrapping<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T>
T WrapMul(T a, T b) {
  using U = Wrapping<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

// x viewed as [outer, len, inner] around the axis; each of the outer * inner
// lines accumulated in order (from the end with `reverse`).
template <bool kProduct>
Tensor CumulativeKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Tensor& x = in[0];
  const int axis = internal::NormalizeAxis(attrs.GetInt("axis"), x.shape());
  const bool exclusive = attrs.GetBool("exclusive");
  const bool reverse = attrs.GetBool("reverse");
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= x.shape().dim(i);
  for (int i = axis + 1; i < x.rank(); ++i) inner *= x.shape().dim(i);
  const int64_t len = x.shape().dim(axis);
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kNumeric>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = x.data<T>().data();
    T* o = internal::MutableData<T>(out);
    const int64_t step = reverse ? -inner : inner;
    for (int64_t a = 0; a < outer; ++a) {
      for (int64_t b = 0; b < inner; ++b) {
        int64_t at = a * len * inner + b + (reverse ? (len - 1) * inner : 0);
        T acc = kProduct ? T(1) : T(0);
        for (int64_t k = 0; k < len; ++k, at += step) {
          if (exclusive) o[at] = acc;
          if constexpr (kProduct) {
            acc = WrapMul(acc, p[at]);
          } else {
            acc = WrapAdd(acc, p[at]);
          }
          if (!exclusive) o[at] = acc;
        }
      }
    }
  });
  return out;
}

Attrs ScanAttrs(int64_t axis, bool exclusive, bool reverse) {
  return Attrs{{"axis", axis}, {"exclusive", exclusive}, {"reverse", reverse}};
}

Grads CumsumGradient(const OpCall& call, const Tensor& grad) {
  const Attrs& a = call.attrs;
  return {Cumsum(grad, a.GetInt("axis"), a.GetBool("exclusive"), !a.GetBool("reverse"))};
}

Grads CumprodGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const Attrs& a = call.attrs;
  const Tensor summed = Cumsum(Mul(call.output, grad), a.GetInt("axis"), a.GetBool("exclusive"),
                               !a.GetBool("reverse"));
  // div_no_nan: 0 where x is 0, summed / x elsewhere. The division sees 1
  // at the zeros so that no inf or NaN reaches a further gradient.
  const Tensor zero = internal::ScalarLike(0.0, x.dtype());
  const Tensor is_zero = Equal(x, zero);
  const Tensor safe = SelectV2(is_zero, internal::ScalarLike(1.0, x.dtype()), x);
  return {SelectV2(is_zero, zero, Div(summed, safe))};
}

}  // namespace

// TF passes the axis as an int32 scalar input.
constexpr InputAttr kCumulativeInputs[] = {{"axis", "axis", InputAttr::Kind::kInt}};
constexpr TypeAttr kCumulativeTypes[] = {{"T", 0}, {"Tidx", TypeAttr::kInt32}};

const OpDef kCumsumOp = {.type = "Cumsum",
                         .num_inputs = 1,
                         .infer = InferCumulative,
                         .compute = CumulativeKernel<false>,
                         .gradient = CumsumGradient,
                         .input_attrs = kCumulativeInputs,
                         .type_attrs = kCumulativeTypes};
const OpDef kCumprodOp = {.type = "Cumprod",
                          .num_inputs = 1,
                          .infer = InferCumulative,
                          .compute = CumulativeKernel<true>,
                          .gradient = CumprodGradient,
                          .input_attrs = kCumulativeInputs,
                          .type_attrs = kCumulativeTypes};

Tensor Cumsum(const Tensor& x, int64_t axis, bool exclusive, bool reverse) {
  return Execute(kCumsumOp, x, ScanAttrs(axis, exclusive, reverse));
}
Tensor Cumprod(const Tensor& x, int64_t axis, bool exclusive, bool reverse) {
  return Execute(kCumprodOp, x, ScanAttrs(axis, exclusive, reverse));
}

}  // namespace eager
