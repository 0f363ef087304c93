#include "ops/array_ops.h"

// Shape ops: Reshape, Transpose, ConcatV2, Slice, BroadcastTo.

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ops/binary_ops.h"
#include "ops/execute.h"
#include "ops/internal/broadcast.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/dynamic_shape.h"
#include "ops/internal/eigen_view.h"
#include "ops/internal/elementwise.h"
#include "ops/internal/gradient_sum.h"
#include "ops/internal/graph_builder.h"
#include "ops/internal/scalar_like.h"
#include "ops/op_def.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using Grads = std::vector<std::optional<Tensor>>;
using Dims = std::array<int64_t, Shape::kMaxRank>;

Shape MakeShape(const Dims& dims, int rank) {
  return Shape(std::span<const int64_t>(dims.data(), static_cast<size_t>(rank)));
}

// out (row-major, shape out_dims) [i...] = in[base + sum_d i_d * in_strides[d]].
// The one loop behind Transpose and Slice.
template <typename T>
void StridedCopy(const T* in, int64_t base, const Dims& in_strides, T* out, const Dims& out_dims,
                 int rank) {
  if (rank == 0) {
    out[0] = in[base];
    return;
  }
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) total *= out_dims[d];
  if (total == 0) return;
  const int last = rank - 1;
  const int64_t n = out_dims[last];
  const int64_t step = in_strides[last];
  Dims index{};
  int64_t offset = base;
  for (int64_t o = 0; o < total; o += n) {
    const T* src = in + offset;
    if (step == 1) {
      std::copy(src, src + n, out + o);
    } else {
      for (int64_t j = 0; j < n; ++j) out[o + j] = src[j * step];
    }
    for (int d = last - 1; d >= 0; --d) {
      offset += in_strides[d];
      if (++index[d] < out_dims[d]) break;
      offset -= in_strides[d] * out_dims[d];
      index[d] = 0;
    }
  }
}

Dims StridesOf(const Shape& shape) {
  Dims strides{};
  int64_t s = 1;
  for (int d = shape.rank() - 1; d >= 0; --d) {
    strides[d] = s;
    s *= shape.dim(d);
  }
  return strides;
}

// ---- Reshape ---------------------------------------------------------------

OutputSpec InferReshape(std::span<const Tensor> in, const Attrs& attrs) {
  const Tensor& x = in[0];
  std::vector<int64_t> dims = attrs.GetInts("shape");
  int unknown = -1;
  int64_t known = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (unknown >= 0) {
        throw InvalidArgumentError(StrCat("only one dimension of the requested shape ",
                                          DimsToString(dims), " may be -1 (input shape ", x.shape(),
                                          ")"));
      }
      unknown = static_cast<int>(i);
    } else if (dims[i] < 0) {
      throw InvalidArgumentError(StrCat("requested shape ", DimsToString(dims),
                                        " has a negative dimension (input shape ", x.shape(), ")"));
    } else if (dims[i] != 0 && known > std::numeric_limits<int64_t>::max() / dims[i]) {
      throw InvalidArgumentError(StrCat("requested shape ", DimsToString(dims),
                                        " has more elements than an int64 counts (input shape ",
                                        x.shape(), ")"));
    } else {
      known *= dims[i];
    }
  }
  if (unknown >= 0) {
    if (known == 0 || x.num_elements() % known != 0) {
      throw InvalidArgumentError(StrCat("Input to reshape is a tensor with ", x.num_elements(),
                                        " values (shape ", x.shape(), "), which cannot fill the ",
                                        "requested shape ", DimsToString(dims)));
    }
    dims[unknown] = x.num_elements() / known;
    known *= dims[unknown];
  }
  if (known != x.num_elements()) {
    throw InvalidArgumentError(StrCat("Input to reshape is a tensor with ", x.num_elements(),
                                      " values (shape ", x.shape(), "), but the requested shape ",
                                      DimsToString(dims), " has ", known));
  }
  return {Shape(dims), x.dtype()};
}

// Zero-copy: the output shares the input's buffer.
Tensor ReshapeKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::WithShape(in[0], spec.shape);
}

Grads ReshapeGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  if (x.shape().IsFullyDefined()) return {Reshape(grad, x.shape().ToVector())};
  return {internal::ReshapeToTensor(grad, ShapeOf(x), x.shape())};  // graph: from Shape(x)
}

// ---- Transpose -------------------------------------------------------------

OutputSpec InferTranspose(std::span<const Tensor> in, const Attrs& attrs) {
  const Tensor& x = in[0];
  const std::vector<int64_t>& perm = attrs.GetInts("perm");
  std::array<bool, Shape::kMaxRank> seen{};
  bool ok = static_cast<int>(perm.size()) == x.rank();
  for (size_t i = 0; ok && i < perm.size(); ++i) {
    ok = perm[i] >= 0 && perm[i] < x.rank() && !seen[perm[i]];
    if (ok) seen[perm[i]] = true;
  }
  if (!ok) {
    throw InvalidArgumentError(StrCat("perm ", DimsToString(perm),
                                      " is not a permutation of the dimensions of shape ",
                                      x.shape()));
  }
  Dims dims{};
  for (size_t i = 0; i < perm.size(); ++i) dims[i] = x.shape().dim(static_cast<int>(perm[i]));
  return {MakeShape(dims, x.rank()), x.dtype()};
}

Tensor TransposeKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Tensor& x = in[0];
  const std::vector<int64_t>& perm = attrs.GetInts("perm");
  const Dims x_strides = StridesOf(x.shape());
  Dims in_strides{}, out_dims{};
  for (int d = 0; d < x.rank(); ++d) {
    in_strides[d] = x_strides[perm[d]];
    out_dims[d] = spec.shape.dim(d);
  }
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  VisitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_arithmetic_v<T>) {
      if (x.rank() == 2 && perm[0] == 1) {  // a matrix: Eigen's transpose
        internal::MutableMatrixView<T>(out, out_dims[0], out_dims[1]) =
            internal::MatrixView<T>(x, x.shape().dim(0), x.shape().dim(1)).transpose();
        return;
      }
    }
    StridedCopy(x.data<T>().data(), 0, in_strides, internal::MutableData<T>(out), out_dims,
                x.rank());
  });
  return out;
}

Grads TransposeGradient(const OpCall& call, const Tensor& grad) {
  const std::vector<int64_t>& perm = call.attrs.GetInts("perm");
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  return {Transpose(grad, inverse)};
}

// ---- ConcatV2 --------------------------------------------------------------

OutputSpec InferConcat(std::span<const Tensor> in, const Attrs& attrs) {
  if (in.empty()) throw InvalidArgumentError("expected at least one input tensor, got none");
  const Tensor& first = in[0];
  if (first.rank() == 0) {
    throw InvalidArgumentError(StrCat("cannot concatenate scalars (input 0 has shape ",
                                      first.shape(), "); expected rank >= 1"));
  }
  const int axis = internal::NormalizeAxis(attrs.GetInt("axis"), first.shape());
  Dims dims{};
  for (int d = 0; d < first.rank(); ++d) dims[d] = first.shape().dim(d);
  dims[axis] = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const Tensor& t = in[i];
    if (t.dtype() != first.dtype()) {
      throw InvalidArgumentError(StrCat("input ", i, " has dtype ", t.dtype(), " (shape ",
                                        t.shape(), "), expected ", first.dtype(),
                                        " like input 0 (shape ", first.shape(), ")"));
    }
    bool ok = t.rank() == first.rank();
    for (int d = 0; ok && d < t.rank(); ++d) {
      ok = d == axis || t.shape().dim(d) == first.shape().dim(d);
    }
    if (!ok) {
      throw InvalidArgumentError(StrCat("input ", i, " has shape ", t.shape(),
                                        ", which does not match input 0's shape ", first.shape(),
                                        " outside the concat axis ", axis));
    }
    dims[axis] += t.shape().dim(axis);
  }
  return {MakeShape(dims, first.rank()), first.dtype()};
}

Tensor ConcatKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const int axis = internal::NormalizeAxis(attrs.GetInt("axis"), spec.shape);
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= spec.shape.dim(d);
  const int64_t out_row = outer == 0 ? 0 : spec.shape.num_elements() / outer;
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  VisitDType(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = internal::MutableData<T>(out);
    int64_t column = 0;  // where this input's chunk starts within an output row
    for (const Tensor& t : in) {
      const int64_t chunk = outer == 0 ? 0 : t.num_elements() / outer;
      const T* src = t.data<T>().data();
      for (int64_t r = 0; r < outer; ++r) {
        std::copy(src + r * chunk, src + (r + 1) * chunk, o + r * out_row + column);
      }
      column += chunk;
    }
  });
  return out;
}

Grads ConcatGradient(const OpCall& call, const Tensor& grad) {
  const int axis = internal::NormalizeAxis(call.attrs.GetInt("axis"), grad.shape());
  Grads grads;
  std::vector<int64_t> begin(grad.rank(), 0);
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const Tensor& t = call.inputs[i];
    grads.push_back(call.NeedsGradient(i) ? std::optional(Slice(grad, begin, t.shape().ToVector()))
                                          : std::nullopt);
    begin[axis] += t.shape().dim(axis);
  }
  return grads;
}

// ---- Slice -----------------------------------------------------------------

// begin and size resolved against x (size -1 = to the end), validated.
void ResolveSlice(const Tensor& x, const Attrs& attrs, Dims& begin, Dims& size) {
  const std::vector<int64_t>& b = attrs.GetInts("begin");
  const std::vector<int64_t>& s = attrs.GetInts("size");
  if (static_cast<int>(b.size()) != x.rank() || static_cast<int>(s.size()) != x.rank()) {
    throw InvalidArgumentError(StrCat("begin ", DimsToString(b), " and size ", DimsToString(s),
                                      " must both have one entry per dimension of shape ",
                                      x.shape()));
  }
  for (int d = 0; d < x.rank(); ++d) {
    const int64_t dim = x.shape().dim(d);
    const int64_t sz = s[d] == -1 ? dim - b[d] : s[d];
    if (b[d] < 0 || b[d] > dim || sz < 0 || sz > dim - b[d]) {
      throw InvalidArgumentError(StrCat("slice begin ", DimsToString(b), " size ", DimsToString(s),
                                        " is out of bounds in dimension ", d, " of shape ",
                                        x.shape(),
                                        "; expected 0 <= begin <= ", "begin + size <= dim"));
    }
    begin[d] = b[d];
    size[d] = sz;
  }
}

OutputSpec InferSlice(std::span<const Tensor> in, const Attrs& attrs) {
  Dims begin{}, size{};
  ResolveSlice(in[0], attrs, begin, size);
  return {MakeShape(size, in[0].rank()), in[0].dtype()};
}

Tensor SliceKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Tensor& x = in[0];
  Dims begin{}, size{};
  ResolveSlice(x, attrs, begin, size);
  const Dims strides = StridesOf(x.shape());
  int64_t base = 0;
  for (int d = 0; d < x.rank(); ++d) base += begin[d] * strides[d];
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  VisitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    StridedCopy(x.data<T>().data(), base, strides, internal::MutableData<T>(out), size, x.rank());
  });
  return out;
}

// The gradient is grad padded with zeros back to x's shape (TF pads); built
// with Concat so that it stays differentiable.
Grads SliceGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  Dims begin{}, size{};
  ResolveSlice(x, call.attrs, begin, size);
  Tensor padded = grad;
  for (int d = 0; d < x.rank(); ++d) {
    const int64_t before = begin[d];
    const int64_t after = x.shape().dim(d) - begin[d] - size[d];
    if (before == 0 && after == 0) continue;
    std::vector<Tensor> parts;
    std::vector<int64_t> dims = padded.shape().ToVector();
    if (before > 0) {
      dims[d] = before;
      parts.push_back(Zeros(Shape(dims), grad.dtype()));
    }
    parts.push_back(padded);
    if (after > 0) {
      dims[d] = after;
      parts.push_back(Zeros(Shape(dims), grad.dtype()));
    }
    padded = Concat(parts, d);
  }
  return {padded};
}

// ---- BroadcastTo -----------------------------------------------------------

OutputSpec InferBroadcastTo(std::span<const Tensor> in, const Attrs& attrs) {
  const Shape& shape = attrs.GetShape("shape");
  if (!internal::BroadcastsTo(in[0].shape(), shape)) {
    throw InvalidArgumentError(StrCat("Unable to broadcast tensor of shape ", in[0].shape(),
                                      " to tensor of shape ", shape));
  }
  return {shape, in[0].dtype()};
}

Tensor BroadcastToKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& x = in[0];
  if (x.shape() == spec.shape) return internal::WithShape(x, spec.shape);
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  VisitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = x.data<T>().data();
    T* o = internal::MutableData<T>(out);
    internal::ForEachRun(internal::MakeBroadcastPlan(x.shape(), spec.shape, spec.shape),
                         [&](int64_t xo, int64_t, int64_t oo, int64_t n, int64_t xs, int64_t) {
                           if (xs == 1) {
                             std::copy(src + xo, src + xo + n, o + oo);
                           } else {
                             std::fill(o + oo, o + oo + n, src[xo]);
                           }
                         });
  });
  return out;
}

Grads BroadcastToGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  if (x.shape().IsFullyDefined() && !grad.shape().unknown_rank()) {
    return {internal::SumToShape(grad, x.shape())};
  }
  // In a graph, x's unknown dimensions may be 1 or the target's when it
  // runs: the axes come from BroadcastGradientArgs, as TF's _BroadcastToGrad.
  // The target is the node's shape input when that is not a Const.
  const Tensor* shape_input = call.TensorAttr("shape");
  const Tensor target_shape = shape_input != nullptr ? *shape_input : [&] {
    const std::vector<int64_t> target = call.attrs.GetShape("shape").ToVector();
    return Tensor::FromVector<int32_t>(std::vector<int32_t>(target.begin(), target.end()));
  }();
  // x's shape in the target's integer type (TF's out_type=shape.dtype): an
  // int64 shape input pairs with an int64 Shape(x).
  const Tensor axes = BroadcastGradientArgs(ShapeOf(x, target_shape.dtype()), target_shape).first;
  return {internal::ReshapeToTensor(internal::SumOverTensor(grad, axes), ShapeOf(x), x.shape())};
}

// ---- Squeeze ---------------------------------------------------------------------------

// Axes to drop from `shape` for Squeeze `axes`; unknown dimensions count as
// size 1 where listed (TF's shape function does the same).
std::vector<bool> SqueezedAxes(const Shape& shape, const std::vector<int64_t>& axes) {
  const int rank = shape.rank();
  std::vector<bool> drop(static_cast<size_t>(rank), false);
  if (axes.empty()) {
    for (int i = 0; i < rank; ++i) drop[static_cast<size_t>(i)] = shape.dim(i) == 1;
    return drop;
  }
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) {
      throw InvalidArgumentError(StrCat("Tried to squeeze dim index ", axis, " for tensor with ",
                                        rank, " dimensions (shape ", shape, ")"));
    }
    const int a = static_cast<int>(axis < 0 ? axis + rank : axis);
    const int64_t size = shape.dim(a);
    if (size != 1 && size != Shape::kUnknownDim) {
      throw InvalidArgumentError(StrCat("Can not squeeze dim[", a,
                                        "], expected a dimension of 1, got ", size, " (shape ",
                                        shape, ")"));
    }
    drop[static_cast<size_t>(a)] = true;
  }
  return drop;
}

std::vector<int64_t> SqueezeAttr(const Attrs& attrs) {
  return attrs.Has("squeeze_dims") ? attrs.GetInts("squeeze_dims") : std::vector<int64_t>{};
}

OutputSpec InferSqueeze(std::span<const Tensor> in, const Attrs& attrs) {
  const Shape& shape = in[0].shape();
  const std::vector<bool> drop = SqueezedAxes(shape, SqueezeAttr(attrs));
  std::vector<int64_t> dims;
  for (int i = 0; i < shape.rank(); ++i) {
    if (!drop[static_cast<size_t>(i)]) dims.push_back(shape.dim(i));
  }
  return {Shape::Partial(dims), in[0].dtype()};
}

// Unknown dimensions: with no axes listed, whether one is dropped is unknown,
// so the rank is too (TF's shape function returns an unknown shape).
OutputSpec PartialSqueeze(std::span<const Tensor> in, const Attrs& attrs) {
  if (SqueezeAttr(attrs).empty()) {
    for (int64_t d : in[0].shape().dims()) {
      if (d == Shape::kUnknownDim) return {Shape::UnknownRank(), in[0].dtype()};
    }
  }
  return InferSqueeze(in, attrs);
}

Tensor SqueezeKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::WithShape(in[0], spec.shape);
}
Grads SqueezeGradient(const OpCall& call, const Tensor& grad) {
  return {Reshape(grad, call.inputs[0].shape().ToVector())};
}

// ---- Shape, BroadcastTo with a shape tensor --------------------------------------------

DType OutType(const Attrs& attrs) {
  const DType out = attrs.Has("out_type") ? attrs.GetType("out_type") : DType::kInt32;
  if (out != DType::kInt32 && out != DType::kInt64) {
    throw InvalidArgumentError(StrCat("out_type must be int32 or int64, got ", out));
  }
  return out;
}

OutputSpec InferShape(std::span<const Tensor> in, const Attrs& attrs) {
  return {Shape{in[0].rank()}, OutType(attrs)};
}

Tensor ShapeKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Shape& shape = in[0].shape();
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  for (int i = 0; i < shape.rank(); ++i) {
    const int64_t d = shape.dim(i);
    if (spec.dtype == DType::kInt64) {
      internal::MutableData<int64_t>(out)[i] = d;
      continue;
    }
    if (d > std::numeric_limits<int32_t>::max()) {
      throw InvalidArgumentError(
          StrCat("dimension ", i, " of shape ", shape, " does not fit out_type int32; use int64"));
    }
    internal::MutableData<int32_t>(out)[i] = static_cast<int32_t>(d);
  }
  return out;
}

// Size: the number of elements, a scalar of out_type.
OutputSpec InferSize(std::span<const Tensor>, const Attrs& attrs) {
  return {Shape{}, OutType(attrs)};
}

Tensor SizeKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const int64_t n = in[0].num_elements();
  if (spec.dtype == DType::kInt64) return Tensor(n);
  if (n > std::numeric_limits<int32_t>::max()) {
    throw InvalidArgumentError(StrCat("Number of elements of shape ", in[0].shape(),
                                      " does not fit out_type int32; use int64"));
  }
  return Tensor(static_cast<int32_t>(n));
}

std::vector<int64_t> ToInt64(const Tensor& t) {
  const auto d = t.data<int32_t>();
  return {d.begin(), d.end()};
}

// ---- BroadcastGradientArgs -------------------------------------------------------------

std::vector<int64_t> ShapeVector(const Tensor& s, const char* name) {
  if (s.dtype() != DType::kInt32 && s.dtype() != DType::kInt64) {
    throw InvalidArgumentError(StrCat("BroadcastGradientArgs: ", name,
                                      " must be an int32 or int64 vector, got ", s.dtype()));
  }
  if (s.rank() != 1) {
    throw InvalidArgumentError(
        StrCat("BroadcastGradientArgs: ", name, " must be a vector, got shape ", s.shape()));
  }
  std::vector<int64_t> dims;
  if (s.dtype() == DType::kInt32) {
    const auto d = s.data<int32_t>();
    dims.assign(d.begin(), d.end());
  } else {
    dims = s.ToVector<int64_t>();
  }
  // A negative "dimension" is compared like any other number, as TF's BCast
  // does: -1 matches -1 and broadcasts against 1, and is refused against 5.
  return dims;
}

std::string ShapeText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += StrCat(i == 0 ? "" : ",", dims[i]);
  return text + "]";
}

Tensor IndexVector(const std::vector<int64_t>& values, DType dtype) {
  if (dtype == DType::kInt64) return Tensor::FromVector<int64_t>(values);
  return Tensor::FromVector<int32_t>(std::vector<int32_t>(values.begin(), values.end()));
}

std::pair<Tensor, Tensor> Compute(const Tensor& s0, const Tensor& s1) {
  if (s0.dtype() != s1.dtype()) {
    throw InvalidArgumentError(StrCat("BroadcastGradientArgs: s0 and s1 must have one dtype, got ",
                                      s0.dtype(), " and ", s1.dtype()));
  }
  const std::vector<int64_t> a = ShapeVector(s0, "s0");
  const std::vector<int64_t> b = ShapeVector(s1, "s1");
  std::vector<int64_t> r0, r1;
  if (a != b) {  // equal shapes reduce nothing, even their 1s (TF's BCast)
    const size_t rank = std::max(a.size(), b.size());
    for (size_t i = 0; i < rank; ++i) {
      const int64_t ad = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
      const int64_t bd = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
      if (ad != bd && ad != 1 && bd != 1) {
        throw InvalidArgumentError(
            StrCat("Incompatible shapes: ", ShapeText(a), " vs. ", ShapeText(b)));
      }
      if (ad == 1) r0.push_back(static_cast<int64_t>(i));
      if (bd == 1) r1.push_back(static_cast<int64_t>(i));
    }
  }
  return {IndexVector(r0, s0.dtype()), IndexVector(r1, s0.dtype())};
}

NodeOutputs RunNode(const NodeContext& c) {
  EAGER_CHECK(c.refs.empty() && c.inputs.size() == 2, "node '", c.node.name, "' (", c.node.op,
              ") needs 2 inputs, has ", c.refs.size() + c.inputs.size());
  auto [r0, r1] = Compute(c.inputs[0], c.inputs[1]);
  return {{std::move(r0), std::move(r1)}};
}

}  // namespace

// Graph facts: TF passes these attrs as int32 input tensors.
constexpr InputAttr kReshapeInputs[] = {{"shape", "shape", InputAttr::Kind::kInts}};
constexpr TypeAttr kReshapeTypes[] = {{"T", 0}, {"Tshape", TypeAttr::kInt32}};
constexpr InputAttr kTransposeInputs[] = {{"perm", "perm", InputAttr::Kind::kInts}};
constexpr TypeAttr kTransposeTypes[] = {{"T", 0}, {"Tperm", TypeAttr::kInt32}};
constexpr InputAttr kConcatInputs[] = {{"axis", "axis", InputAttr::Kind::kInt}};
constexpr TypeAttr kConcatTypes[] = {{"T", 0}, {"Tidx", TypeAttr::kInt32}};
constexpr InputAttr kSliceInputs[] = {{"begin", "begin", InputAttr::Kind::kInts},
                                      {"size", "size", InputAttr::Kind::kInts}};
constexpr TypeAttr kSliceTypes[] = {{"T", 0}, {"Index", TypeAttr::kInt32}};
constexpr InputAttr kBroadcastToInputs[] = {{"shape", "shape", InputAttr::Kind::kShape}};
constexpr TypeAttr kBroadcastToTypes[] = {{"T", 0}, {"Tidx", TypeAttr::kInt32}};

const OpDef kReshapeOp = {.type = "Reshape",
                          .num_inputs = 1,
                          .infer = InferReshape,
                          .compute = ReshapeKernel,
                          .gradient = ReshapeGradient,
                          .input_attrs = kReshapeInputs,
                          .type_attrs = kReshapeTypes,
                          .gradient_takes_tensor_attrs = true};

const OpDef kTransposeOp = {.type = "Transpose",
                            .num_inputs = 1,
                            .infer = InferTranspose,
                            .compute = TransposeKernel,
                            .gradient = TransposeGradient,
                            .input_attrs = kTransposeInputs,
                            .type_attrs = kTransposeTypes};

const OpDef kConcatOp = {.type = "ConcatV2",
                         .num_inputs = OpDef::kVariadic,
                         .infer = InferConcat,
                         .compute = ConcatKernel,
                         .gradient = ConcatGradient,
                         .input_attrs = kConcatInputs,
                         .type_attrs = kConcatTypes};

const OpDef kSliceOp = {.type = "Slice",
                        .num_inputs = 1,
                        .infer = InferSlice,
                        .compute = SliceKernel,
                        .gradient = SliceGradient,
                        .input_attrs = kSliceInputs,
                        .type_attrs = kSliceTypes};

const OpDef kBroadcastToOp = {.type = "BroadcastTo",
                              .num_inputs = 1,
                              .infer = InferBroadcastTo,
                              .compute = BroadcastToKernel,
                              .gradient = BroadcastToGradient,
                              .input_attrs = kBroadcastToInputs,
                              .type_attrs = kBroadcastToTypes,
                              .gradient_takes_tensor_attrs = true};

Tensor Reshape(const Tensor& x, const std::vector<int64_t>& shape) {
  return Execute(kReshapeOp, x, Attrs{{"shape", shape}});
}

Tensor Transpose(const Tensor& x, const std::vector<int64_t>& perm) {
  std::vector<int64_t> p = perm;
  if (p.empty()) {  // tf.transpose's default reverses the dimensions
    for (int d = x.rank() - 1; d >= 0; --d) p.push_back(d);
  }
  return Execute(kTransposeOp, x, Attrs{{"perm", std::move(p)}});
}

Tensor Concat(const std::vector<Tensor>& values, int64_t axis) {
  return Execute(kConcatOp, std::span<const Tensor>(values.data(), values.size()),
                 Attrs{{"axis", axis}});
}

Tensor Slice(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& size) {
  return Execute(kSliceOp, x, Attrs{{"begin", begin}, {"size", size}});
}

Tensor BroadcastTo(const Tensor& x, const Shape& shape) {
  return Execute(kBroadcastToOp, x, Attrs{{"shape", shape}});
}

const OpDef kSqueezeOp = {.type = "Squeeze",
                          .num_inputs = 1,
                          .infer = InferSqueeze,
                          .compute = SqueezeKernel,
                          .gradient = SqueezeGradient,
                          .infer_partial = PartialSqueeze};
Tensor Squeeze(const Tensor& x, const std::vector<int64_t>& axes) {
  return Execute(kSqueezeOp, {x}, Attrs{{"squeeze_dims", axes}});
}

// The output's shape is [rank] whatever the dimensions are, so the rule
// holds for partially known inputs as it is.
const OpDef kShapeOp = {.type = "Shape",
                        .num_inputs = 1,
                        .infer = InferShape,
                        .compute = ShapeKernel,
                        .gradient = nullptr,
                        .infer_partial = InferShape};

// The output is a scalar whatever the dimensions are, so the rule holds for
// partially known inputs as it is.
const OpDef kSizeOp = {.type = "Size",
                       .num_inputs = 1,
                       .infer = InferSize,
                       .compute = SizeKernel,
                       .gradient = nullptr,
                       .infer_partial = InferSize};

Tensor Size(const Tensor& x, DType out_type) {
  return Execute(kSizeOp, x, Attrs{{"out_type", out_type}});
}

Tensor BroadcastTo(const Tensor& x, const Tensor& shape) {
  if ((shape.dtype() != DType::kInt32 && shape.dtype() != DType::kInt64) ||
      (!shape.shape().unknown_rank() && shape.rank() != 1)) {
    throw InvalidArgumentError(
        StrCat("BroadcastTo: the shape must be an int32 or int64 vector, got a ", shape.dtype(),
               " tensor of shape ", shape.shape()));
  }
  if (Graph::Current() == nullptr) {
    return BroadcastTo(
        x, Shape(shape.dtype() == DType::kInt64 ? shape.ToVector<int64_t>() : ToInt64(shape)));
  }
  Shape static_shape = Shape::UnknownRank();
  if (!shape.shape().unknown_rank() && shape.shape().dim(0) != Shape::kUnknownDim) {
    static_shape = Shape::Partial(
        std::vector<int64_t>(static_cast<size_t>(shape.shape().dim(0)), Shape::kUnknownDim));
  }
  return internal::BroadcastToTensor(x, shape, static_shape);
}

Tensor ShapeOf(const Tensor& x, DType out_type) {
  return Execute(kShapeOp, x, Attrs{{"out_type", out_type}});
}

const OpDef kBroadcastGradientArgsOp = {
    .type = "BroadcastGradientArgs", .num_inputs = 2, .run = RunNode, .num_outputs = 2};

std::pair<Tensor, Tensor> BroadcastGradientArgs(const Tensor& s0, const Tensor& s1) {
  Graph* graph = Graph::Current();
  if (graph == nullptr) return Compute(s0, s1);
  for (const auto& [s, name] : {std::pair{&s0, "s0"}, std::pair{&s1, "s1"}}) {
    const bool index = s->dtype() == DType::kInt32 || s->dtype() == DType::kInt64;
    if (!index || (!s->shape().unknown_rank() && s->rank() != 1) || s->dtype() != s0.dtype()) {
      throw InvalidArgumentError(StrCat("BroadcastGradientArgs: ", name,
                                        " must be an int32 or int64 vector of s0's dtype, got a ",
                                        s->dtype(), " tensor of shape ", s->shape()));
    }
  }
  Node node{.name = graph->UniqueName("BroadcastGradientArgs"), .op = "BroadcastGradientArgs"};
  node.inputs = {internal::GraphInput(*graph, s0), internal::GraphInput(*graph, s1)};
  node.attrs = {{"T", s0.dtype()}};
  node.output_specs = {{Shape::Partial({Shape::kUnknownDim}), s0.dtype()},
                       {Shape::Partial({Shape::kUnknownDim}), s0.dtype()}};
  const int index = graph->AddNode(std::move(node));
  return {graph->Output(index, 0), graph->Output(index, 1)};
}

// ---- ExpandDims, Tile, Pack, Pad, PadV2, StridedSlice, StridedSliceGrad ----------------
// Ops of TF 2.21's graphs of common layers (issue 39). Their index arguments
// are tensor inputs, as TF's (a graph computes them: Tile's multiples from a
// Shape, StridedSlice's input a Shape): the shape rules read them when they
// are known (ops/internal/dynamic_shape.h: KnownInts) and leave the shape
// unknown otherwise.

namespace {

using internal::DTypeSet;

// An int32 vector of `values` (int64 when one does not fit), as TF converts
// a Python list of indices.
Tensor IndexTensor(const std::vector<int64_t>& values) {
  bool fits = true;
  for (int64_t v : values) {
    fits = fits && v >= std::numeric_limits<int32_t>::min() &&
           v <= std::numeric_limits<int32_t>::max();
  }
  if (!fits) return Tensor::FromVector<int64_t>(values);
  std::vector<int32_t> narrow(values.begin(), values.end());
  return Tensor::FromVector<int32_t>(std::move(narrow));
}

void CheckIndexInput(const Tensor& t, std::string_view name, bool scalar_ok, bool vector_ok,
                     bool matrix_ok = false) {
  internal::CheckDTypeIn(t, name, DTypeSet::kIndex);
  if (t.shape().unknown_rank()) return;
  const bool ok =
      (scalar_ok && t.rank() == 0) || (vector_ok && t.rank() == 1) || (matrix_ok && t.rank() == 2);
  if (!ok) {
    throw InvalidArgumentError(StrCat(name, " must be ",
                                      matrix_ok   ? "a matrix"
                                      : scalar_ok ? (vector_ok ? "a scalar or vector" : "a scalar")
                                                  : "a vector",
                                      ", got shape ", t.shape()));
  }
}

// A shape of `rank` unknown dimensions (unknown rank for rank < 0).
Shape UnknownDims(int64_t rank) {
  if (rank < 0) return Shape::UnknownRank();
  return Shape::Partial(std::vector<int64_t>(static_cast<size_t>(rank), Shape::kUnknownDim));
}

// Bytes of x copied into out at a strided position per element: the loop
// behind StridedSlice (gather) and StridedSliceGrad (scatter).
template <bool kScatter>
void StridedBytes(const std::byte* src, std::byte* dst, int64_t base, const Dims& strides,
                  const Dims& dims, int rank, size_t size) {
  // A last dimension of stride 1 moves as one run (a row of a column slice).
  int64_t run = 1;
  if (rank > 0 && strides[rank - 1] == 1) run = dims[--rank];
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) total *= dims[d];
  Dims index{};
  int64_t offset = base;
  const auto n = static_cast<int64_t>(size);
  const auto run_bytes = static_cast<size_t>(run * n);
  for (int64_t i = 0; i < total; ++i) {
    if constexpr (kScatter) {
      std::memcpy(dst + offset * n, src + i * run * n, run_bytes);
    } else {
      std::memcpy(dst + i * run * n, src + offset * n, run_bytes);
    }
    for (int d = rank - 1; d >= 0; --d) {
      offset += strides[d];
      if (++index[d] < dims[d]) break;
      offset -= strides[d] * dims[d];
      index[d] = 0;
    }
  }
}

// dst[base + index . strides] += src[index] over the index space `dims`
// (src dense): StridedSliceGrad's scatter, added into a gradient sum.
template <typename T>
void StridedAdd(const T* src, T* dst, int64_t base, const Dims& strides, const Dims& dims,
                int rank) {
  int64_t run = 1;
  int64_t step = 1;  // the last dimension's stride in dst
  if (rank > 0) {
    --rank;
    run = dims[rank];
    step = strides[rank];
  }
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) total *= dims[d];
  Dims index{};
  int64_t offset = base;
  for (int64_t i = 0; i < total; ++i) {
    const T* from = src + i * run;
    T* to = dst + offset;
    if (step == 1) {
      for (int64_t k = 0; k < run; ++k) to[k] += from[k];
    } else {
      for (int64_t k = 0; k < run; ++k) to[k * step] += from[k];
    }
    for (int d = rank - 1; d >= 0; --d) {
      offset += strides[d];
      if (++index[d] < dims[d]) break;
      offset -= strides[d] * dims[d];
      index[d] = 0;
    }
  }
}

// ---- ExpandDims ----

OutputSpec InferExpandDims(std::span<const Tensor> in, const Attrs&) {
  CheckIndexInput(in[1], "dim", true, true);
  const std::optional<std::vector<int64_t>> dim = internal::KnownInts(in[1]);
  if (in[0].shape().unknown_rank()) return {Shape::UnknownRank(), in[0].dtype()};
  if (!dim) return {UnknownDims(in[0].rank() + 1), in[0].dtype()};
  if (dim->size() != 1) {
    throw InvalidArgumentError(StrCat("dim must hold exactly one axis, got ", DimsToString(*dim)));
  }
  const int rank = in[0].rank();
  const int64_t d = (*dim)[0];
  if (d < -rank - 1 || d > rank) {
    throw InvalidArgumentError(StrCat("dim ", d, " is out of range for a tensor of shape ",
                                      in[0].shape(), "; expected dim in [", -rank - 1, ", ", rank,
                                      "]"));
  }
  std::vector<int64_t> dims = in[0].shape().ToVector();
  dims.insert(dims.begin() + (d < 0 ? d + rank + 1 : d), 1);
  return {Shape::Partial(dims), in[0].dtype()};
}

Tensor ExpandDimsKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  return internal::WithShape(in[0], spec.shape);
}

// The gradient reshaped back to x's shape (from Shape(x) when unknown).
Tensor ReshapeBack(const Tensor& grad, const Tensor& x) {
  if (x.shape().IsFullyDefined()) return Reshape(grad, x.shape().ToVector());
  return internal::ReshapeToTensor(grad, ShapeOf(x), x.shape());
}

Grads ExpandDimsGradient(const OpCall& call, const Tensor& grad) {
  return {ReshapeBack(grad, call.inputs[0]), std::nullopt};
}

// ---- Tile ----

OutputSpec InferTile(std::span<const Tensor> in, const Attrs&) {
  CheckIndexInput(in[1], "multiples", false, true);
  const Tensor& x = in[0];
  const std::optional<std::vector<int64_t>> m = internal::KnownInts(in[1]);
  if (!m) return {UnknownDims(x.shape().unknown_rank() ? -1 : x.rank()), x.dtype()};
  if (static_cast<int>(m->size()) != x.rank()) {
    throw InvalidArgumentError(StrCat("multiples ", DimsToString(*m),
                                      " must have one entry per dimension of shape ", x.shape()));
  }
  std::vector<int64_t> dims = x.shape().ToVector();
  for (size_t d = 0; d < dims.size(); ++d) {
    if ((*m)[d] < 0) {
      throw InvalidArgumentError(StrCat("multiples ", DimsToString(*m), " has a negative entry"));
    }
    if (dims[d] != Shape::kUnknownDim) dims[d] *= (*m)[d];
  }
  return {Shape::Partial(dims), x.dtype()};
}

Tensor TileKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& x = in[0];
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  if (spec.shape.num_elements() == 0) return out;
  const int rank = x.rank();
  const Dims in_strides = StridesOf(x.shape());
  Dims out_dims{};
  for (int d = 0; d < rank; ++d) out_dims[d] = spec.shape.dim(d);
  const size_t size = DTypeSize(x.dtype());
  const auto* src = static_cast<const std::byte*>(internal::RawData(x));
  auto* dst = static_cast<std::byte*>(internal::MutableRawData(out));
  // Odometer over the output; the input index is the output's modulo x's dims.
  Dims index{};
  int64_t offset = 0;
  const int64_t total = spec.shape.num_elements();
  for (int64_t i = 0; i < total; ++i) {
    std::memcpy(dst + i * static_cast<int64_t>(size), src + offset * static_cast<int64_t>(size),
                size);
    for (int d = rank - 1; d >= 0; --d) {
      ++index[d];
      const int64_t xd = x.shape().dim(d);
      if (index[d] % xd == 0) {
        offset -= (xd - 1) * in_strides[d];
      } else {
        offset += in_strides[d];
      }
      if (index[d] < out_dims[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// TF's _TileGrad: grad reshaped to [m0, d0, m1, d1, ...] and summed over the
// multiples' axes.
Grads TileGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  if (!x.shape().IsFullyDefined() || !grad.shape().IsFullyDefined()) {
    throw UnimplementedError(StrCat("Tile's gradient needs the input's shape when the graph is ",
                                    "built; got ", x.shape()));
  }
  std::vector<int64_t> split;
  std::vector<int64_t> axes;
  for (int d = 0; d < x.rank(); ++d) {
    const int64_t xd = x.shape().dim(d);
    split.push_back(xd == 0 ? 0 : grad.shape().dim(d) / xd);
    split.push_back(xd);
    axes.push_back(2 * d);
  }
  if (x.num_elements() == 0) return {Zeros(x.shape(), grad.dtype()), std::nullopt};
  return {ReduceSum(Reshape(grad, split), axes), std::nullopt};
}

// ---- Pack ----

OutputSpec InferPack(std::span<const Tensor> in, const Attrs& attrs) {
  if (in.empty()) throw InvalidArgumentError("Pack needs at least one value, got none");
  for (size_t i = 1; i < in.size(); ++i) {
    internal::CheckSameDType(in[0], in[i], "values[0]", StrCat("values[", i, "]"));
    if (in[i].shape() != in[0].shape()) {
      throw InvalidArgumentError(StrCat("values must have the same shape, got values[0] ",
                                        in[0].shape(), " and values[", i, "] ", in[i].shape()));
    }
  }
  const int rank = in[0].rank();
  const int64_t axis = attrs.GetInt("axis");
  if (axis < -rank - 1 || axis > rank) {
    throw InvalidArgumentError(
        StrCat("axis ", axis, " is out of range for packing values of shape ", in[0].shape(),
               "; expected axis in [", -rank - 1, ", ", rank, "]"));
  }
  std::vector<int64_t> dims = in[0].shape().ToVector();
  dims.insert(dims.begin() + (axis < 0 ? axis + rank + 1 : axis), static_cast<int64_t>(in.size()));
  return {Shape::Partial(dims), in[0].dtype()};
}

Tensor PackKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const int rank = in[0].rank();
  int64_t axis = attrs.GetInt("axis");
  if (axis < 0) axis += rank + 1;
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= in[0].shape().dim(d);
  const int64_t inner = in[0].num_elements() / std::max<int64_t>(outer, 1);
  const size_t size = DTypeSize(spec.dtype);
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  if (spec.shape.num_elements() == 0) return out;
  auto* dst = static_cast<std::byte*>(internal::MutableRawData(out));
  const auto chunk = static_cast<size_t>(inner) * size;
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor& t : in) {
      std::memcpy(dst, static_cast<const std::byte*>(internal::RawData(t)) + o * chunk, chunk);
      dst += chunk;
    }
  }
  return out;
}

// TF's _PackGrad (Unpack): each value's slice of grad along axis.
Grads PackGradient(const OpCall& call, const Tensor& grad) {
  const int rank = call.inputs[0].rank();
  int64_t axis = call.attrs.GetInt("axis");
  if (axis < 0) axis += rank + 1;
  Grads grads;
  std::vector<int64_t> begin(static_cast<size_t>(rank + 1), 0);
  std::vector<int64_t> size(static_cast<size_t>(rank + 1), -1);
  size[static_cast<size_t>(axis)] = 1;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    begin[static_cast<size_t>(axis)] = static_cast<int64_t>(i);
    grads.push_back(call.NeedsGradient(i) ? std::optional(Squeeze(Slice(grad, begin, size), {axis}))
                                          : std::nullopt);
  }
  return grads;
}

// ---- Unpack ----
// TF's Unpack has `num` outputs, the slices of `value` along `axis`. Eager's
// ops have one output each, so eagerly every slice is one "_UnpackOutput"
// call (eager-only), whose gradient is TF's _UnpackGrad for that output:
// Pack of zeros with grad at its index; the tape sums those of all outputs,
// which is Pack of the grads with zeros for the missing ones. A graph holds
// TF's one Unpack node (RunUnpack).

// `axis` in [-rank, rank) of a value of shape `shape`, made non-negative.
// An unknown rank leaves `axis` as it is.
int64_t UnpackAxis(const Shape& shape, int64_t axis) {
  if (shape.unknown_rank()) return axis;
  const int rank = shape.rank();
  if (rank == 0) {
    throw InvalidArgumentError(
        StrCat("cannot unpack a scalar (shape ", shape, "); expected a value of rank >= 1"));
  }
  if (axis < -rank || axis >= rank) {
    throw InvalidArgumentError(StrCat("axis = ", axis, " not in [", -rank, ", ", rank,
                                      ") for unpacking a value of shape ", shape));
  }
  return axis < 0 ? axis + rank : axis;
}

// The shape of one output: `shape` without dimension `axis`.
Shape UnpackedShape(const Shape& shape, int64_t axis) {
  std::vector<int64_t> dims = shape.ToVector();
  dims.erase(dims.begin() + axis);
  return Shape::Partial(dims);
}

OutputSpec InferUnpackOutput(std::span<const Tensor> in, const Attrs& attrs) {
  const Shape& shape = in[0].shape();
  if (shape.unknown_rank()) return {Shape::UnknownRank(), in[0].dtype()};
  const int64_t axis = UnpackAxis(shape, attrs.GetInt("axis"));
  const int64_t index = attrs.GetInt("index");
  const int64_t n = shape.dim(static_cast<int>(axis));
  if (index < 0 || (n != Shape::kUnknownDim && index >= n)) {
    throw InvalidArgumentError(StrCat("index ", index, " is out of range for unpacking shape ",
                                      shape, " along axis ", axis, " (", n, " outputs)"));
  }
  return {UnpackedShape(shape, axis), in[0].dtype()};
}

Tensor UnpackOutputKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Shape& shape = in[0].shape();
  const int64_t axis = UnpackAxis(shape, attrs.GetInt("axis"));
  const int64_t index = attrs.GetInt("index");
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= shape.dim(d);
  const int64_t n = shape.dim(static_cast<int>(axis));
  const int64_t inner = spec.shape.num_elements() / std::max<int64_t>(outer, 1);
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  if (spec.shape.num_elements() == 0) return out;
  VisitDType(spec.dtype, [&](auto tag) {  // every dtype, string too
    using T = typename decltype(tag)::type;
    const T* src = in[0].data<T>().data();
    T* dst = internal::MutableData<T>(out);
    for (int64_t o = 0; o < outer; ++o) {
      const T* from = src + (o * n + index) * inner;
      std::copy(from, from + inner, dst + o * inner);
    }
  });
  return out;
}

// TF's _UnpackGrad for output `index` alone.
Grads UnpackOutputGradient(const OpCall& call, const Tensor& grad) {
  const Shape& shape = call.inputs[0].shape();
  const int64_t axis = UnpackAxis(shape, call.attrs.GetInt("axis"));
  const int64_t index = call.attrs.GetInt("index");
  const Tensor zeros = ZerosLike(grad);
  std::vector<Tensor> grads(static_cast<size_t>(shape.dim(static_cast<int>(axis))), zeros);
  grads[static_cast<size_t>(index)] = grad;
  return {Pack(grads, axis)};
}

// OpDef::add_input0_gradient: output `index`'s gradient added into its
// place.
bool AddUnpackOutputGradient(const OpCall& call, const Tensor& grad, Tensor& sum) {
  const Shape& shape = call.inputs[0].shape();
  const int64_t axis = UnpackAxis(shape, call.attrs.GetInt("axis"));
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= shape.dim(d);
  if (outer == 0 || grad.num_elements() == 0) return true;
  const int64_t n = shape.dim(static_cast<int>(axis));
  const int64_t inner = grad.num_elements() / outer;
  return internal::AddPieceInto(grad, sum, outer, n * inner, call.attrs.GetInt("index") * inner,
                                inner);
}

NodeOutputs RunUnpack(const NodeContext& c) {
  if (!c.refs.empty() || c.inputs.size() != 1) {
    throw InvalidArgumentError(StrCat("node '", c.node.name, "' (Unpack) takes 1 input, has ",
                                      c.refs.size() + c.inputs.size()));
  }
  const Tensor& value = c.inputs[0];
  const int64_t num = c.attrs.GetInt("num");
  const int64_t axis = UnpackAxis(value.shape(), c.attrs.GetInt("axis"));
  if (value.shape().dim(static_cast<int>(axis)) != num) {
    throw InvalidArgumentError(StrCat("node '", c.node.name, "' (Unpack): input shape axis ", axis,
                                      " must equal ", num, " (attr num), got shape ",
                                      value.shape()));
  }
  NodeOutputs out;
  out.values.reserve(static_cast<size_t>(num));
  for (int64_t i = 0; i < num; ++i) {
    out.values.push_back(RunKernel(kUnpackOutputOp, c.inputs, Attrs{{"axis", axis}, {"index", i}}));
  }
  return out;
}

// ---- Pad, PadV2 ----

// paddings [rank, 2] as (before, after) pairs; nullopt when unknown.
std::optional<std::vector<int64_t>> KnownPaddings(std::span<const Tensor> in) {
  CheckIndexInput(in[1], "paddings", false, false, true);
  const Tensor& x = in[0];
  std::optional<std::vector<int64_t>> p = internal::KnownInts(in[1]);
  if (!p) return std::nullopt;
  const Shape& ps = in[1].shape();
  if (x.shape().unknown_rank() || ps.dim(0) != x.rank() || ps.dim(1) != 2) {
    throw InvalidArgumentError(StrCat("paddings must be of shape [rank, 2] = [", x.rank(),
                                      ", 2] for input of shape ", x.shape(), ", got ", ps));
  }
  for (int64_t v : *p) {
    if (v < 0) {
      throw InvalidArgumentError(
          StrCat("paddings ", DimsToString(*p), " has a negative entry (input ", x.shape(), ")"));
    }
  }
  return p;
}

OutputSpec InferPad(std::span<const Tensor> in, const Attrs&) {
  const Tensor& x = in[0];
  if (in.size() == 3) {
    internal::CheckSameDType(x, in[2], "input", "constant_values");
    if (!in[2].shape().unknown_rank() && in[2].rank() != 0) {
      throw InvalidArgumentError(
          StrCat("constant_values must be a scalar, got shape ", in[2].shape()));
    }
  }
  const std::optional<std::vector<int64_t>> p = KnownPaddings(in);
  if (!p) return {UnknownDims(x.shape().unknown_rank() ? -1 : x.rank()), x.dtype()};
  std::vector<int64_t> dims = x.shape().ToVector();
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] != Shape::kUnknownDim) dims[d] += (*p)[2 * d] + (*p)[2 * d + 1];
  }
  return {Shape::Partial(dims), x.dtype()};
}

Tensor PadKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& x = in[0];
  const std::vector<int64_t> p = *internal::KnownInts(in[1]);
  Tensor out = in.size() == 3 ? Fill(spec.shape, in[2]) : Tensor::Zeros(spec.shape, spec.dtype);
  if (x.num_elements() == 0) return out;
  const Dims out_strides = StridesOf(spec.shape);
  int64_t base = 0;
  Dims dims{};
  for (int d = 0; d < x.rank(); ++d) {
    base += p[2 * static_cast<size_t>(d)] * out_strides[d];
    dims[d] = x.shape().dim(d);
  }
  StridedBytes<true>(static_cast<const std::byte*>(internal::RawData(x)),
                     static_cast<std::byte*>(internal::MutableRawData(out)), base, out_strides,
                     dims, x.rank(), DTypeSize(x.dtype()));
  return out;
}

// TF's _PadGrad: the slice of grad where x is; none for paddings and
// constant_values.
Grads PadGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const std::optional<std::vector<int64_t>> p = internal::KnownInts(call.inputs[1]);
  if (!p || !x.shape().IsFullyDefined()) {
    throw UnimplementedError(StrCat("Pad's gradient needs constant paddings and the input's ",
                                    "shape when the graph is built; got ", x.shape()));
  }
  std::vector<int64_t> begin(static_cast<size_t>(x.rank()));
  for (size_t d = 0; d < begin.size(); ++d) begin[d] = (*p)[2 * d];
  Grads grads(call.inputs.size());
  grads[0] = Slice(grad, begin, x.shape().ToVector());
  return grads;
}

// ---- StridedSlice, StridedSliceGrad (TF's ValidateStridedSliceOp) ----

// Where each dimension of the input is read: begin, stride and size per
// input dimension (the "processing shape"), and the final shape.
struct StridedSpec {
  Dims begin{};
  Dims stride{};
  Dims size{};
  std::vector<int64_t> final_dims;
};

StridedSpec ResolveStridedSlice(const Shape& input, const std::vector<int64_t>& b,
                                const std::vector<int64_t>& e, const std::vector<int64_t>& s,
                                const Attrs& attrs) {
  if (b.size() != e.size() || b.size() != s.size() || b.size() > 32) {
    throw InvalidArgumentError(StrCat("Expected begin, end, and strides to be 1D equal size ",
                                      "tensors, but got shapes [", b.size(), "], [", e.size(),
                                      "], and [", s.size(), "] instead."));
  }
  const int64_t begin_mask = attrs.GetInt("begin_mask");
  const int64_t end_mask = attrs.GetInt("end_mask");
  int64_t ellipsis_mask = attrs.GetInt("ellipsis_mask");
  const int64_t new_axis_mask = attrs.GetInt("new_axis_mask");
  const int64_t shrink_mask = attrs.GetInt("shrink_axis_mask");
  if ((ellipsis_mask & (ellipsis_mask - 1)) != 0) {
    throw InvalidArgumentError("Multiple ellipses in slice spec not allowed");
  }
  const auto bit = [](int64_t mask, int i) { return ((mask >> i) & 1) != 0; };
  int sparse_dims = static_cast<int>(b.size());
  int add_after_ellipsis = 0;
  bool ellipsis_seen = false;
  for (int i = 0; i < sparse_dims; ++i) {
    if (ellipsis_seen && bit(new_axis_mask, i)) ++add_after_ellipsis;
    if (bit(ellipsis_mask, i)) ellipsis_seen = true;
  }
  if (!ellipsis_seen) ellipsis_mask |= int64_t{1} << sparse_dims++;
  const int rank = input.rank();
  StridedSpec spec;
  Dims dbegin{}, dend{}, dstride{};
  std::array<bool, Shape::kMaxRank> dbegin_mask{}, dend_mask{}, dshrink{};
  // Final-shape entries: >= 0 a processing dim, -1 a new axis, -2 shrunk.
  std::vector<int> gather;
  int full = 0;
  for (int i = 0; i < sparse_dims; ++i) {
    if (bit(ellipsis_mask, i)) {
      const int next = std::min(rank - (sparse_dims - i) + 1 + add_after_ellipsis, rank);
      for (; full < next; ++full) {
        dbegin[full] = dend[full] = 0;
        dstride[full] = 1;
        dbegin_mask[full] = dend_mask[full] = true;
        gather.push_back(full);
      }
    } else if (bit(new_axis_mask, i)) {
      gather.push_back(-1);
    } else {
      if (full == rank) {
        throw InvalidArgumentError(StrCat("Index out of range using input dim ", full,
                                          "; input has only ", rank, " dims"));
      }
      dbegin[full] = b[static_cast<size_t>(i)];
      dend[full] = e[static_cast<size_t>(i)];
      dstride[full] = s[static_cast<size_t>(i)];
      dbegin_mask[full] = bit(begin_mask, i);
      dend_mask[full] = bit(end_mask, i);
      dshrink[full] = bit(shrink_mask, i);
      gather.push_back(dshrink[full] ? -2 : full);
      ++full;
    }
  }
  for (int d = 0; d < rank; ++d) {
    const int64_t dim = input.dim(d);
    const int64_t stride = dstride[d];
    if (stride == 0) throw InvalidArgumentError(StrCat("strides[", d, "] must be non-zero"));
    if (dshrink[d] && stride <= 0) {
      throw InvalidArgumentError("only stride 1 allowed on non-range indexing.");
    }
    const int64_t lo = stride > 0 ? 0 : -1;
    const int64_t hi = stride > 0 ? dim : dim - 1;
    const auto canonical = [&](int64_t x, bool masked, int c) {
      if (masked) return (stride > 0) == (c == 0) ? lo : hi;
      const int64_t fwd = x < 0 ? dim + x : x;
      return fwd < lo ? lo : fwd > hi ? hi : fwd;
    };
    int64_t begin = 0, end = 0;
    if (dshrink[d]) {
      const int64_t fwd = dbegin[d] < 0 ? dim + dbegin[d] : dbegin[d];
      if (fwd < 0 || fwd >= dim) {
        throw InvalidArgumentError(StrCat("slice index ", dbegin[d], " of dimension ", d,
                                          " out of bounds (input shape ", input, ")"));
      }
      begin = fwd;
      end = fwd + 1;
    } else {
      begin = canonical(dbegin[d], dbegin_mask[d], 0);
      end = canonical(dend[d], dend_mask[d], 1);
    }
    const int64_t length = end - begin;
    int64_t size = 0;
    if (length != 0 && ((length < 0) == (stride < 0))) {
      size = length / stride + (length % stride != 0 ? 1 : 0);
    }
    spec.begin[d] = begin;
    spec.stride[d] = stride;
    spec.size[d] = size;
  }
  for (int g : gather) {
    if (g >= 0) spec.final_dims.push_back(spec.size[g]);
    if (g == -1) spec.final_dims.push_back(1);
  }
  return spec;
}

void CheckStridedIndices(std::span<const Tensor> idx) {
  CheckIndexInput(idx[0], "begin", false, true);
  CheckIndexInput(idx[1], "end", false, true);
  CheckIndexInput(idx[2], "strides", false, true);
  internal::CheckSameDType(idx[0], idx[1], "begin", "end");
  internal::CheckSameDType(idx[0], idx[2], "begin", "strides");
}

OutputSpec InferStridedSlice(std::span<const Tensor> in, const Attrs& attrs) {
  CheckStridedIndices(in.subspan(1, 3));
  const auto b = internal::KnownInts(in[1]);
  const auto e = internal::KnownInts(in[2]);
  const auto s = internal::KnownInts(in[3]);
  if (!b || !e || !s || in[0].shape().unknown_rank()) {
    return {Shape::UnknownRank(), in[0].dtype()};
  }
  return {Shape::Partial(ResolveStridedSlice(in[0].shape(), *b, *e, *s, attrs).final_dims),
          in[0].dtype()};
}

Tensor StridedSliceKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Tensor& x = in[0];
  const StridedSpec ss =
      ResolveStridedSlice(x.shape(), *internal::KnownInts(in[1]), *internal::KnownInts(in[2]),
                          *internal::KnownInts(in[3]), attrs);
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  if (spec.shape.num_elements() == 0) return out;
  const Dims x_strides = StridesOf(x.shape());
  int64_t base = 0;
  Dims strides{};
  for (int d = 0; d < x.rank(); ++d) {
    base += ss.begin[d] * x_strides[d];
    strides[d] = ss.stride[d] * x_strides[d];
  }
  StridedBytes<false>(static_cast<const std::byte*>(internal::RawData(x)),
                      static_cast<std::byte*>(internal::MutableRawData(out)), base, strides,
                      ss.size, x.rank(), DTypeSize(x.dtype()));
  return out;
}

Attrs StridedMasks(const Attrs& attrs) {
  Attrs masks;
  for (const char* name :
       {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"}) {
    masks.Set(name, attrs.GetInt(name));
  }
  return masks;
}

// TF's _StridedSliceGrad: StridedSliceGrad(Shape(x), begin, end, strides, grad).
Grads StridedSliceGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& x = call.inputs[0];
  const DType index = call.inputs[1].dtype();
  Tensor shape = x.shape().IsFullyDefined()
                     ? (index == DType::kInt64 ? Tensor::FromVector<int64_t>(x.shape().ToVector())
                                               : IndexTensor(x.shape().ToVector()))
                     : ShapeOf(x, index);
  if (shape.dtype() != index) shape = Cast(shape, index);
  return {
      Execute(kStridedSliceGradOp, {shape, call.inputs[1], call.inputs[2], call.inputs[3], grad},
              StridedMasks(call.attrs)),
      std::nullopt, std::nullopt, std::nullopt};
}

OutputSpec InferStridedSliceGrad(std::span<const Tensor> in, const Attrs& attrs) {
  CheckIndexInput(in[0], "shape", false, true);
  CheckStridedIndices(in.subspan(1, 3));
  internal::CheckSameDType(in[0], in[1], "shape", "begin");
  const auto shape = internal::KnownInts(in[0]);
  if (!shape) {
    return {UnknownDims(in[0].shape().unknown_rank() ? -1 : in[0].shape().dim(0)), in[4].dtype()};
  }
  for (int64_t d : *shape) {
    if (d < 0) throw InvalidArgumentError(StrCat("shape ", DimsToString(*shape), " is negative"));
  }
  const Shape out(*shape);
  const auto b = internal::KnownInts(in[1]);
  const auto e = internal::KnownInts(in[2]);
  const auto s = internal::KnownInts(in[3]);
  if (b && e && s && in[4].shape().IsFullyDefined()) {
    const StridedSpec ss = ResolveStridedSlice(out, *b, *e, *s, attrs);
    if (Shape(ss.final_dims) != in[4].shape()) {
      throw InvalidArgumentError(
          StrCat("shape of dy was ", in[4].shape(), " instead of ", Shape(ss.final_dims)));
    }
  }
  return {out, in[4].dtype()};
}

Tensor StridedSliceGradKernel(std::span<const Tensor> in, const Attrs& attrs,
                              const OutputSpec& spec) {
  const StridedSpec ss =
      ResolveStridedSlice(spec.shape, *internal::KnownInts(in[1]), *internal::KnownInts(in[2]),
                          *internal::KnownInts(in[3]), attrs);
  Tensor out = Tensor::Zeros(spec.shape, spec.dtype);
  const Tensor& dy = in[4];
  if (dy.num_elements() == 0) return out;
  const Dims out_strides = StridesOf(spec.shape);
  int64_t base = 0;
  Dims strides{};
  for (int d = 0; d < spec.shape.rank(); ++d) {
    base += ss.begin[d] * out_strides[d];
    strides[d] = ss.stride[d] * out_strides[d];
  }
  StridedBytes<true>(static_cast<const std::byte*>(internal::RawData(dy)),
                     static_cast<std::byte*>(internal::MutableRawData(out)), base, strides, ss.size,
                     spec.shape.rank(), DTypeSize(dy.dtype()));
  return out;
}

// OpDef::add_input0_gradient: StridedSliceGrad's scatter added into `sum`
// (float32 and float64; other dtypes decline).
bool AddStridedSliceGradient(const OpCall& call, const Tensor& grad, Tensor& sum) {
  if (grad.dtype() != DType::kFloat32 && grad.dtype() != DType::kFloat64) return false;
  const auto b = internal::KnownInts(call.inputs[1]);
  const auto e = internal::KnownInts(call.inputs[2]);
  const auto st = internal::KnownInts(call.inputs[3]);
  if (!b || !e || !st) return false;
  const StridedSpec ss = ResolveStridedSlice(sum.shape(), *b, *e, *st, call.attrs);
  if (grad.num_elements() == 0) return true;
  const Dims sum_strides = StridesOf(sum.shape());
  int64_t base = 0;
  Dims strides{};
  for (int d = 0; d < sum.rank(); ++d) {
    base += ss.begin[d] * sum_strides[d];
    strides[d] = ss.stride[d] * sum_strides[d];
  }
  if (grad.dtype() == DType::kFloat32) {
    StridedAdd(grad.data<float>().data(), internal::MutableData<float>(sum), base, strides, ss.size,
               sum.rank());
  } else {
    StridedAdd(grad.data<double>().data(), internal::MutableData<double>(sum), base, strides,
               ss.size, sum.rank());
  }
  return true;
}

// TF's _StridedSliceGradGrad: the slice of grad; none for the index inputs.
Grads StridedSliceGradGradient(const OpCall& call, const Tensor& grad) {
  return {std::nullopt, std::nullopt, std::nullopt, std::nullopt,
          Execute(kStridedSliceOp, {grad, call.inputs[1], call.inputs[2], call.inputs[3]},
                  StridedMasks(call.attrs))};
}

constexpr TypeAttr kExpandDimsTypes[] = {{"T", 0}, {"Tdim", 1}};
constexpr TypeAttr kTileTypes[] = {{"T", 0}, {"Tmultiples", 1}};
constexpr TypeAttr kPadTypes[] = {{"T", 0}, {"Tpaddings", 1}};
constexpr TypeAttr kStridedSliceTypes[] = {{"T", 0}, {"Index", 1}};
constexpr TypeAttr kStridedSliceGradTypes[] = {{"T", 4}, {"Index", 0}};

}  // namespace

const OpDef kExpandDimsOp = {.type = "ExpandDims",
                             .num_inputs = 2,
                             .infer = InferExpandDims,
                             .compute = ExpandDimsKernel,
                             .gradient = ExpandDimsGradient,
                             .type_attrs = kExpandDimsTypes};
const OpDef kTileOp = {.type = "Tile",
                       .num_inputs = 2,
                       .infer = InferTile,
                       .compute = TileKernel,
                       .gradient = TileGradient,
                       .type_attrs = kTileTypes};
const OpDef kPackOp = {.type = "Pack",
                       .num_inputs = OpDef::kVariadic,
                       .infer = InferPack,
                       .compute = PackKernel,
                       .gradient = PackGradient};
const OpDef kUnpackOp = {
    .type = "Unpack", .num_inputs = 1, .run = RunUnpack, .num_outputs = OpDef::kVariadic};
const OpDef kUnpackOutputOp = {.type = "_UnpackOutput",
                               .num_inputs = 1,
                               .infer = InferUnpackOutput,
                               .compute = UnpackOutputKernel,
                               .gradient = UnpackOutputGradient,
                               .add_input0_gradient = AddUnpackOutputGradient,
                               .eager_only = true};

std::vector<Tensor> Unpack(const Tensor& value, int64_t axis) {
  int64_t a = 0;
  try {
    a = UnpackAxis(value.shape(), axis);
  } catch (const InvalidArgumentError& e) {
    throw InvalidArgumentError(StrCat("Unpack: ", e.what()));
  }
  Graph* graph = Graph::Current();
  if (graph == nullptr) {
    const int64_t num = value.shape().dim(static_cast<int>(a));
    std::vector<Tensor> out;
    out.reserve(static_cast<size_t>(num));
    for (int64_t i = 0; i < num; ++i) {
      out.push_back(Execute(kUnpackOutputOp, value, Attrs{{"axis", a}, {"index", i}}));
    }
    return out;
  }
  if (value.shape().unknown_rank() ||
      value.shape().dim(static_cast<int>(a)) == Shape::kUnknownDim) {
    throw InvalidArgumentError(StrCat("Unpack: cannot infer the number of outputs from shape ",
                                      value.shape(), " along axis ", axis,
                                      "; its size must be known when the graph is built"));
  }
  const int64_t num = value.shape().dim(static_cast<int>(a));
  Node node{.name = graph->UniqueName("unstack"), .op = "Unpack"};
  node.inputs = {internal::GraphInput(*graph, value)};
  node.attrs = {{"T", value.dtype()}, {"num", num}, {"axis", axis}};
  node.output_specs.assign(static_cast<size_t>(num),
                           OutputSpec{UnpackedShape(value.shape(), a), value.dtype()});
  const int index = graph->AddNode(std::move(node));
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(num));
  for (int64_t i = 0; i < num; ++i) out.push_back(graph->Output(index, static_cast<int>(i)));
  return out;
}

const OpDef kPadOp = {.type = "Pad",
                      .num_inputs = 2,
                      .infer = InferPad,
                      .compute = PadKernel,
                      .gradient = PadGradient,
                      .type_attrs = kPadTypes};
const OpDef kPadV2Op = {.type = "PadV2",
                        .num_inputs = 3,
                        .infer = InferPad,
                        .compute = PadKernel,
                        .gradient = PadGradient,
                        .type_attrs = kPadTypes};
const OpDef kStridedSliceOp = {.type = "StridedSlice",
                               .num_inputs = 4,
                               .infer = InferStridedSlice,
                               .compute = StridedSliceKernel,
                               .gradient = StridedSliceGradient,
                               .add_input0_gradient = AddStridedSliceGradient,
                               .type_attrs = kStridedSliceTypes};
const OpDef kStridedSliceGradOp = {.type = "StridedSliceGrad",
                                   .num_inputs = 5,
                                   .infer = InferStridedSliceGrad,
                                   .compute = StridedSliceGradKernel,
                                   .gradient = StridedSliceGradGradient,
                                   .type_attrs = kStridedSliceGradTypes,
                                   // The output's rank is shape's length.
                                   .infer_partial = InferStridedSliceGrad};

Tensor ExpandDims(const Tensor& x, int64_t axis) {
  return Execute(kExpandDimsOp, x, Tensor::Scalar<int32_t>(static_cast<int32_t>(axis)));
}
Tensor Tile(const Tensor& x, const std::vector<int64_t>& multiples) {
  return Execute(kTileOp, x, IndexTensor(multiples));
}
Tensor Pack(const std::vector<Tensor>& values, int64_t axis) {
  return Execute(kPackOp, std::span<const Tensor>(values.data(), values.size()),
                 Attrs{{"axis", axis}});
}
Tensor Pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& paddings) {
  std::vector<int64_t> flat;
  for (const auto& [before, after] : paddings) {
    flat.push_back(before);
    flat.push_back(after);
  }
  Tensor p = IndexTensor(flat);
  return Execute(kPadOp, x,
                 internal::WithShape(p, Shape{static_cast<int64_t>(paddings.size()), 2}));
}
Tensor PadV2(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& paddings,
             const Tensor& constant_value) {
  std::vector<int64_t> flat;
  for (const auto& [before, after] : paddings) {
    flat.push_back(before);
    flat.push_back(after);
  }
  const Tensor p =
      internal::WithShape(IndexTensor(flat), Shape{static_cast<int64_t>(paddings.size()), 2});
  return Execute(kPadV2Op, {x, p, constant_value});
}
Tensor StridedSlice(const Tensor& x, const std::vector<int64_t>& begin,
                    const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                    const StridedSliceMasks& masks) {
  return Execute(kStridedSliceOp, {x, IndexTensor(begin), IndexTensor(end), IndexTensor(strides)},
                 Attrs{{"begin_mask", masks.begin},
                       {"end_mask", masks.end},
                       {"ellipsis_mask", masks.ellipsis},
                       {"new_axis_mask", masks.new_axis},
                       {"shrink_axis_mask", masks.shrink_axis}});
}

}  // namespace eager
