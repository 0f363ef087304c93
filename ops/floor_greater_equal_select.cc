#include "ops/floor_greater_equal_select.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/broadcast_gradient_args.h"
#include "ops/execute.h"
#include "ops/internal/broadcast.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/dynamic_shape.h"
#include "ops/internal/elementwise.h"
#include "ops/internal/scalar_like.h"
#include "ops/op_def.h"
#include "ops/shape_op.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using internal::DTypeSet;
using Grads = std::vector<std::optional<Tensor>>;

// ---- Floor ----------------------------------------------------------------------

OutputSpec InferFloor(std::span<const Tensor> in, const Attrs&) {
  return internal::SameShapeSpec(in, DTypeSet::kFloat, "x");
}

Tensor FloorKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::ElementwiseKernel<1, DTypeSet::kFloat>(in, spec,
                                                          [](const auto& x) { return x.floor(); });
}

Grads FloorGradient(const OpCall&, const Tensor&) { return {std::nullopt}; }

// ---- GreaterEqual -------------------------------------------------------------

void CheckGreaterEqualDTypes(std::span<const Tensor> in) {
  internal::CheckSameDType(in[0], in[1]);
  internal::CheckDTypeIn(in[0], "x", DTypeSet::kNumeric);
}

OutputSpec InferGreaterEqual(std::span<const Tensor> in, const Attrs&) {
  CheckGreaterEqualDTypes(in);
  return {internal::BroadcastShape(in[0].shape(), in[1].shape()), DType::kBool};
}

Tensor GreaterEqualKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& x = in[0];
  const Tensor& y = in[1];
  Tensor out = internal::NewTensor(spec.shape, DType::kBool);
  bool* o = internal::MutableData<bool>(out);
  internal::Dispatch<DTypeSet::kNumeric>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = x.data<T>().data();
    const T* yp = y.data<T>().data();
    internal::ForEachRun(
        internal::MakeBroadcastPlan(x.shape(), y.shape(), spec.shape),
        [&](int64_t xo, int64_t yo, int64_t oo, int64_t n, int64_t xs, int64_t ys) {
          for (int64_t i = 0; i < n; ++i) o[oo + i] = xp[xo + i * xs] >= yp[yo + i * ys];
        });
  });
  return out;
}

// ---- SelectV2 -----------------------------------------------------------------

// The output dtype: t's.
DType SelectV2DType(std::span<const Tensor> in) {
  if (in[0].dtype() != DType::kBool) {
    throw InvalidArgumentError(StrCat("condition must be a bool tensor, got ", in[0].dtype()));
  }
  internal::CheckSameDType(in[1], in[2], "t", "e");
  if (in[1].dtype() == DType::kString) {
    throw UnimplementedError("SelectV2 of string tensors: eager selects fixed-size elements only");
  }
  return in[1].dtype();
}

OutputSpec InferSelectV2(std::span<const Tensor> in, const Attrs&) {
  const DType dtype = SelectV2DType(in);
  return {internal::BroadcastShape(internal::BroadcastShape(in[0].shape(), in[1].shape()),
                                   in[2].shape()),
          dtype};
}

// The broadcast of partially known shapes (graph mode): a dimension known in
// one input and unknown in another is the known one unless that is 1, which
// an unknown dimension may stretch. REQUIRES: known ranks.
Shape BroadcastPartial(std::span<const Tensor> in) {
  int rank = 0;
  for (const Tensor& t : in) rank = std::max(rank, t.rank());
  std::vector<int64_t> dims(static_cast<size_t>(rank), 1);
  std::vector<bool> stretchable(static_cast<size_t>(rank), false);  // an unknown dim seen
  for (const Tensor& t : in) {
    const int offset = rank - t.rank();
    for (int d = 0; d < t.rank(); ++d) {
      const auto i = static_cast<size_t>(d) + static_cast<size_t>(offset);
      const int64_t dim = t.shape().dim(d);
      if (dim == Shape::kUnknownDim) {
        stretchable[i] = true;
      } else if (dims[i] == 1) {
        dims[i] = dim;
      } else if (dim != 1 && dim != dims[i]) {
        throw InvalidArgumentError(StrCat("Incompatible shapes: dimension ", i, " is ", dims[i],
                                          " in one input and ", dim, " in another"));
      }
    }
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (stretchable[i] && dims[i] == 1) dims[i] = Shape::kUnknownDim;
  }
  return Shape::Partial(dims);
}

OutputSpec InferGreaterEqualPartial(std::span<const Tensor> in, const Attrs&) {
  CheckGreaterEqualDTypes(in);
  return {BroadcastPartial(in), DType::kBool};
}

OutputSpec InferSelectV2Partial(std::span<const Tensor> in, const Attrs&) {
  const DType dtype = SelectV2DType(in);
  return {BroadcastPartial(in), dtype};
}

// Element strides of `shape` broadcast to `out` (0 along stretched dimensions).
std::array<int64_t, Shape::kMaxRank> BroadcastStrides(const Shape& shape, const Shape& out) {
  std::array<int64_t, Shape::kMaxRank> strides{};
  int64_t stride = 1;
  const int offset = out.rank() - shape.rank();
  for (int d = shape.rank() - 1; d >= 0; --d) {
    strides[static_cast<size_t>(d) + static_cast<size_t>(offset)] = shape.dim(d) == 1 ? 0 : stride;
    stride *= shape.dim(d);
  }
  return strides;
}

// Copies elements of `size` bytes: out[i] = c[i] ? t[i] : e[i], each input
// read through its broadcast strides (an odometer over the output).
Tensor SelectV2Kernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& c = in[0];
  const Tensor& t = in[1];
  const Tensor& e = in[2];
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  const int64_t n = spec.shape.num_elements();
  if (n == 0) return out;
  const size_t size = DTypeSize(spec.dtype);
  const bool* cp = c.data<bool>().data();
  const auto* tp = static_cast<const std::byte*>(internal::RawData(t));
  const auto* ep = static_cast<const std::byte*>(internal::RawData(e));
  auto* op = static_cast<std::byte*>(internal::MutableRawData(out));
  const int rank = spec.shape.rank();
  const auto cs = BroadcastStrides(c.shape(), spec.shape);
  const auto ts = BroadcastStrides(t.shape(), spec.shape);
  const auto es = BroadcastStrides(e.shape(), spec.shape);
  std::array<int64_t, Shape::kMaxRank> index{};
  int64_t ci = 0;
  int64_t ti = 0;
  int64_t ei = 0;
  for (int64_t i = 0; i < n; ++i) {
    const std::byte* from =
        cp[ci] ? tp + ti * static_cast<int64_t>(size) : ep + ei * static_cast<int64_t>(size);
    std::memcpy(op + i * static_cast<int64_t>(size), from, size);
    for (int d = rank - 1; d >= 0; --d) {  // odometer, innermost first
      const auto u = static_cast<size_t>(d);
      ci += cs[u];
      ti += ts[u];
      ei += es[u];
      if (++index[u] < spec.shape.dim(d)) break;
      ci -= cs[u] * spec.shape.dim(d);
      ti -= ts[u] * spec.shape.dim(d);
      ei -= es[u] * spec.shape.dim(d);
      index[u] = 0;
    }
  }
  return out;
}

// g (the output's shape) summed back to `input`'s shape. Where input's shape
// is partly unknown in a graph, the axes it was broadcast along show only
// when the graph runs (each of the three inputs may broadcast against the
// other two): as TF's _SelectGradV2, BroadcastGradientArgs(Shape(input),
// Shape(output)) names them, and the sum is reshaped to Shape(input).
Tensor SumToSelectInput(const Tensor& g, const Tensor& input, const Tensor& output) {
  const Shape& shape = input.shape();
  if (shape.IsFullyDefined() && !g.shape().unknown_rank()) return internal::SumToShape(g, shape);
  const Tensor input_shape = ShapeOf(input);
  const Tensor axes = BroadcastGradientArgs(input_shape, ShapeOf(output)).first;
  return internal::ReshapeToTensor(internal::SumOverTensor(g, axes), input_shape, shape);
}

Grads SelectV2Gradient(const OpCall& call, const Tensor& grad) {
  const Tensor& c = call.inputs[0];
  const Tensor zero = internal::ScalarLike(0.0, grad.dtype());
  Grads grads(3);
  if (call.NeedsGradient(1)) {
    grads[1] = SumToSelectInput(SelectV2(c, grad, zero), call.inputs[1], call.output);
  }
  if (call.NeedsGradient(2)) {
    grads[2] = SumToSelectInput(SelectV2(c, zero, grad), call.inputs[2], call.output);
  }
  return grads;
}

}  // namespace

const OpDef kFloorOp = {
    .type = "Floor",
    .num_inputs = 1,
    .infer = InferFloor,
    .compute = FloorKernel,
    .gradient = FloorGradient,
};
const OpDef kGreaterEqualOp = {
    .type = "GreaterEqual",
    .num_inputs = 2,
    .infer = InferGreaterEqual,
    .compute = GreaterEqualKernel,
    .gradient = nullptr,  // a comparison: no gradient, as TF
    .infer_partial = InferGreaterEqualPartial,
};
// T is t's dtype (input 0 is the bool condition).
constexpr TypeAttr kSelectTypes[] = {{"T", 1}};
const OpDef kSelectV2Op = {
    .type = "SelectV2",
    .num_inputs = 3,
    .infer = InferSelectV2,
    .compute = SelectV2Kernel,
    .gradient = SelectV2Gradient,
    .type_attrs = kSelectTypes,
    .infer_partial = InferSelectV2Partial,
};

Tensor Floor(const Tensor& x) { return Execute(kFloorOp, {x}); }
Tensor GreaterEqual(const Tensor& x, const Tensor& y) { return Execute(kGreaterEqualOp, x, y); }
Tensor SelectV2(const Tensor& condition, const Tensor& t, const Tensor& e) {
  return Execute(kSelectV2Op, {condition, t, e});
}

}  // namespace eager
