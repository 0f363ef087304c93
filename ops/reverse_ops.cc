#include "ops/reverse_ops.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "ops/execute.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

// Which dimensions of `shape` `axes` reverse; InvalidArgumentError for an
// axis out of range or given twice.
std::array<bool, Shape::kMaxRank> ReversedDims(const Shape& shape,
                                               const std::vector<int64_t>& axes) {
  std::array<bool, Shape::kMaxRank> reversed{};
  for (int64_t axis : axes) {
    if (axis < -shape.rank() || axis >= shape.rank()) {
      throw InvalidArgumentError(StrCat("'axis'[", axis, "] = ", axis, " is out of valid range [",
                                        -shape.rank(), ", ", shape.rank() - 1,
                                        "] for a tensor of shape ", shape));
    }
    const auto d = static_cast<size_t>(axis < 0 ? axis + shape.rank() : axis);
    if (reversed[d]) {
      throw InvalidArgumentError(StrCat("axis ", d, " specified more than once (axes ",
                                        DimsToString(axes), ", shape ", shape, ")"));
    }
    reversed[d] = true;
  }
  return reversed;
}

OutputSpec InferReverse(std::span<const Tensor> in, const Attrs& attrs) {
  ReversedDims(in[0].shape(), attrs.GetInts("axis"));
  return {in[0].shape(), in[0].dtype()};
}

// out[i...] = x[j...] with j_d = n_d - 1 - i_d on reversed dimensions: a
// walk over the output in row-major order, the source offset kept in step.
Tensor ReverseKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Tensor& x = in[0];
  const Shape& shape = x.shape();
  const std::array<bool, Shape::kMaxRank> reversed = ReversedDims(shape, attrs.GetInts("axis"));
  const int rank = shape.rank();
  std::array<int64_t, Shape::kMaxRank> step{};  // source offset per output step in dim d
  int64_t start = 0;
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    const auto u = static_cast<size_t>(d);
    step[u] = reversed[u] ? -stride : stride;
    if (reversed[u]) start += (shape.dim(d) - 1) * stride;
    stride *= shape.dim(d);
  }
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  const int64_t total = x.num_elements();
  VisitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* from = x.data<T>().data();
    T* to = internal::MutableData<T>(out);
    std::array<int64_t, Shape::kMaxRank> index{};
    int64_t offset = start;
    for (int64_t o = 0; o < total; ++o) {
      to[o] = from[offset];
      for (int d = rank - 1; d >= 0; --d) {
        const auto u = static_cast<size_t>(d);
        offset += step[u];
        if (++index[u] < shape.dim(d)) break;
        offset -= step[u] * shape.dim(d);
        index[u] = 0;
      }
    }
  });
  return out;
}

std::vector<std::optional<Tensor>> ReverseGradient(const OpCall& call, const Tensor& grad) {
  return {Reverse(grad, call.attrs.GetInts("axis"))};
}

constexpr InputAttr kReverseInputs[] = {{"axis", "axis", InputAttr::Kind::kInts}};
constexpr TypeAttr kReverseTypes[] = {{"T", 0}, {"Tidx", TypeAttr::kInt32}};

}  // namespace

const OpDef kReverseV2Op = {.type = "ReverseV2",
                            .num_inputs = 1,
                            .infer = InferReverse,
                            .compute = ReverseKernel,
                            .gradient = ReverseGradient,
                            .input_attrs = kReverseInputs,
                            .type_attrs = kReverseTypes};

Tensor Reverse(const Tensor& x, const std::vector<int64_t>& axes) {
  return Execute(kReverseV2Op, x, Attrs{{"axis", axes}});
}

}  // namespace eager
