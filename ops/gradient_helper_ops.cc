#include "ops/gradient_helper_ops.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "ops/execute.h"
#include "ops/internal/dispatch.h"
#include "ops/shape_ops.h"
#include "runtime/graph.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using internal::DTypeSet;
using Grads = std::vector<std::optional<Tensor>>;

// ---- BiasAddGrad ----

OutputSpec InferBiasAddGrad(std::span<const Tensor> in, const Attrs&) {
  const Shape& s = in[0].shape();
  internal::CheckDTypeIn(in[0], "out_backprop", DTypeSet::kNumeric);
  if (s.unknown_rank()) return {Shape::Partial({Shape::kUnknownDim}), in[0].dtype()};
  if (s.rank() < 2) {
    throw InvalidArgumentError(StrCat("out_backprop must be at least 2-D, got shape ", s));
  }
  return {Shape::Partial({s.dim(s.rank() - 1)}), in[0].dtype()};
}

Tensor BiasAddGradKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& g = in[0];
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  const int64_t c = spec.shape.dim(0);
  internal::Dispatch<DTypeSet::kNumeric>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = internal::MutableData<T>(out);
    std::fill(o, o + c, T(0));
    const auto src = g.data<T>();
    for (size_t i = 0; i < src.size(); ++i) o[static_cast<int64_t>(i) % c] += src[i];
  });
  return out;
}

// TF's _BiasAddGradGrad: grad [C] broadcast back to out_backprop's shape.
Grads BiasAddGradGradient(const OpCall& call, const Tensor& grad) {
  return {BroadcastTo(grad, ShapeOf(call.inputs[0]))};
}

// ---- Rank ----

OutputSpec InferRank(std::span<const Tensor>, const Attrs&) { return {Shape{}, DType::kInt32}; }

Tensor RankKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec&) {
  return Tensor(static_cast<int32_t>(in[0].rank()));
}

// ---- InvertPermutation ----

OutputSpec InferInvertPermutation(std::span<const Tensor> in, const Attrs&) {
  internal::CheckDTypeIn(in[0], "x", DTypeSet::kIndex);
  const Shape& s = in[0].shape();
  if (!s.unknown_rank() && s.rank() != 1) {
    throw InvalidArgumentError(StrCat("x must be a vector, got shape ", s));
  }
  return {s, in[0].dtype()};
}

Tensor InvertPermutationKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kIndex>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto x = in[0].data<T>();
    T* y = internal::MutableData<T>(out);
    const auto n = static_cast<int64_t>(x.size());
    std::vector<bool> seen(x.size(), false);
    for (int64_t i = 0; i < n; ++i) {
      const auto v = static_cast<int64_t>(x[static_cast<size_t>(i)]);
      if (v < 0 || v >= n || seen[static_cast<size_t>(v)]) {
        throw InvalidArgumentError(
            StrCat("InvertPermutation: x[", i, "] = ", v,
                   (v < 0 || v >= n) ? " is not in [0, " : " repeats in [0, ", n,
                   "); x must be a permutation of 0 .. ", n - 1));
      }
      seen[static_cast<size_t>(v)] = true;
      y[v] = static_cast<T>(i);
    }
  });
  return out;
}

std::string Where(const NodeContext& c) {
  return StrCat("node '", c.node.name, "' (", c.node.op, ")");
}

std::vector<int64_t> Ints(const Tensor& t) {
  if (t.dtype() == DType::kInt64) return t.ToVector<int64_t>();
  const auto d = t.data<int32_t>();
  return {d.begin(), d.end()};
}

// ---- ConcatOffset ----

NodeOutputs RunConcatOffset(const NodeContext& c) {
  if (!c.refs.empty() || c.inputs.size() < 3) {
    throw InvalidArgumentError(StrCat(Where(c), " takes concat_dim and 2 or more shapes, has ",
                                      c.refs.size() + c.inputs.size(), " inputs"));
  }
  const Tensor& dim_t = c.inputs[0];
  if (dim_t.dtype() != DType::kInt32 || dim_t.rank() != 0) {
    throw InvalidArgumentError(StrCat(Where(c), ": concat_dim must be an int32 scalar, got a ",
                                      dim_t.dtype(), " tensor of shape ", dim_t.shape()));
  }
  const std::span<const Tensor> shapes = c.inputs.subspan(1);
  const DType type = shapes[0].dtype();
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Tensor& s = shapes[i];
    if (s.dtype() != type || (type != DType::kInt32 && type != DType::kInt64) || s.rank() != 1) {
      throw InvalidArgumentError(StrCat(Where(c), ": shape ", i, " must be an int32 or int64 ",
                                        "vector of shape 0's dtype, got a ", s.dtype(),
                                        " tensor of shape ", s.shape()));
    }
    dims.push_back(Ints(s));
  }
  const auto rank = static_cast<int64_t>(dims[0].size());
  const int64_t cdim = dim_t.data<int32_t>()[0];
  const int64_t axis = cdim < 0 ? cdim + rank : cdim;
  if (axis < 0 || axis >= rank) {
    throw InvalidArgumentError(
        StrCat(Where(c), ": Concat dim is out of range: ", cdim, " vs. ", rank));
  }
  NodeOutputs out;
  int64_t offset = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    bool match = static_cast<int64_t>(dims[i].size()) == rank;
    for (int64_t d = 0; match && d < rank; ++d) {
      match = d == axis || dims[i][static_cast<size_t>(d)] == dims[0][static_cast<size_t>(d)];
    }
    if (!match) {
      throw InvalidArgumentError(StrCat(Where(c), ": All dimensions except ", axis,
                                        " must match. Input ", i, " has shape ",
                                        DimsToString(dims[i]), " and doesn't match input 0 with ",
                                        "shape ", DimsToString(dims[0]), "."));
    }
    std::vector<int64_t> begin(static_cast<size_t>(rank), 0);
    begin[static_cast<size_t>(axis)] = offset;
    offset += dims[i][static_cast<size_t>(axis)];
    if (type == DType::kInt64) {
      out.values.push_back(Tensor::FromVector<int64_t>(std::move(begin), Shape{rank}));
    } else {
      out.values.push_back(Tensor::FromVector<int32_t>(
          std::vector<int32_t>(begin.begin(), begin.end()), Shape{rank}));
    }
  }
  return out;
}

// ---- ShapeN ----

NodeOutputs RunShapeN(const NodeContext& c) {
  if (!c.refs.empty() || c.inputs.empty()) {
    throw InvalidArgumentError(StrCat(Where(c), " takes 1 or more value inputs, has ",
                                      c.inputs.size(), " values and ", c.refs.size(),
                                      " references"));
  }
  const Attrs attrs{{"out_type", c.attrs.GetType("out_type")}};
  NodeOutputs out;
  for (const Tensor& x : c.inputs) {
    const Tensor one[] = {x};
    out.values.push_back(RunKernel(kShapeOp, one, attrs));
  }
  return out;
}

}  // namespace

const OpDef kBiasAddGradOp = {.type = "BiasAddGrad",
                              .num_inputs = 1,
                              .infer = InferBiasAddGrad,
                              .compute = BiasAddGradKernel,
                              .gradient = BiasAddGradGradient};
// The output is a scalar whatever the input's shape.
const OpDef kRankOp = {.type = "Rank",
                       .num_inputs = 1,
                       .infer = InferRank,
                       .compute = RankKernel,
                       .gradient = nullptr,
                       .infer_partial = InferRank};
const OpDef kInvertPermutationOp = {.type = "InvertPermutation",
                                    .num_inputs = 1,
                                    .infer = InferInvertPermutation,
                                    .compute = InvertPermutationKernel,
                                    .gradient = nullptr,  // integers
                                    .infer_partial = InferInvertPermutation};
const OpDef kConcatOffsetOp = {.type = "ConcatOffset",
                               .num_inputs = OpDef::kVariadic,
                               .run = RunConcatOffset,
                               .num_outputs = OpDef::kVariadic};
const OpDef kShapeNOp = {.type = "ShapeN",
                         .num_inputs = OpDef::kVariadic,
                         .run = RunShapeN,
                         .num_outputs = OpDef::kVariadic};

Tensor BiasAddGrad(const Tensor& out_backprop) { return Execute(kBiasAddGradOp, {out_backprop}); }
Tensor Rank(const Tensor& x) { return Execute(kRankOp, {x}); }
Tensor InvertPermutation(const Tensor& x) { return Execute(kInvertPermutationOp, {x}); }

}  // namespace eager
