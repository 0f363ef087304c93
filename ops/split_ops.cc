#include "ops/split_ops.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "ops/execute.h"
#include "ops/internal/gradient_sum.h"
#include "ops/internal/graph_builder.h"
#include "ops/shape_ops.h"
#include "runtime/graph.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using Grads = std::vector<std::optional<Tensor>>;

// `axis` in [-rank, rank) of `shape` made non-negative; `where` prefixes
// the error.
int64_t SplitAxis(std::string_view where, const Shape& shape, int64_t axis) {
  const int rank = shape.rank();
  if (axis < -rank || axis >= rank) {
    throw InvalidArgumentError(StrCat(where, ": split_dim ", axis, " not in [", -rank, ", ", rank,
                                      ") for a value of shape ", shape));
  }
  return axis < 0 ? axis + rank : axis;
}

// The pieces' sizes along a dimension of `dim` elements: `sizes` with a -1
// resolved, checked to add up to dim (TF's SplitV rule).
std::vector<int64_t> ResolveSizes(std::string_view where, std::vector<int64_t> sizes, int64_t dim) {
  int64_t known = 0;
  std::optional<size_t> rest;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1 && !rest) {
      rest = i;
    } else if (sizes[i] < 0) {
      throw InvalidArgumentError(StrCat(where, ": size_splits ", DimsToString(sizes),
                                        " may hold one -1 and sizes >= 0 only"));
    } else {
      known += sizes[i];
    }
  }
  if (rest && known <= dim) sizes[*rest] = dim - known;
  if ((rest && known > dim) || (!rest && known != dim)) {
    throw InvalidArgumentError(StrCat(where, ": size_splits ", DimsToString(sizes), " add up to ",
                                      known, ", expected ", rest ? "at most " : "", dim,
                                      " (the size of split_dim)"));
  }
  return sizes;
}

// ---- _SplitOutput: elements [begin, begin + size) of `axis` ----

OutputSpec InferSplitOutput(std::span<const Tensor> in, const Attrs& attrs) {
  const Shape& shape = in[0].shape();
  if (shape.unknown_rank()) return {Shape::UnknownRank(), in[0].dtype()};
  const int64_t axis = SplitAxis("_SplitOutput", shape, attrs.GetInt("axis"));
  const int64_t begin = attrs.GetInt("begin");
  const int64_t size = attrs.GetInt("size");
  const int64_t dim = shape.dim(static_cast<int>(axis));
  if (begin < 0 || size < 0 || (dim != Shape::kUnknownDim && begin + size > dim)) {
    throw InvalidArgumentError(StrCat("piece [", begin, ", ", begin + size, ") of axis ", axis,
                                      " is outside shape ", shape));
  }
  std::vector<int64_t> dims = shape.ToVector();
  dims[static_cast<size_t>(axis)] = size;
  return {Shape::Partial(dims), in[0].dtype()};
}

Tensor SplitOutputKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Shape& shape = in[0].shape();
  const auto axis = static_cast<int>(attrs.GetInt("axis"));
  const int64_t begin = attrs.GetInt("begin");
  const int64_t size = attrs.GetInt("size");
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= shape.dim(d);
  int64_t inner = 1;
  for (int d = axis + 1; d < shape.rank(); ++d) inner *= shape.dim(d);
  const int64_t dim = shape.dim(axis);
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  if (spec.shape.num_elements() == 0) return out;
  VisitDType(spec.dtype, [&](auto tag) {  // every dtype, string too
    using T = typename decltype(tag)::type;
    const T* src = in[0].data<T>().data();
    T* dst = internal::MutableData<T>(out);
    for (int64_t o = 0; o < outer; ++o) {
      const T* from = src + (o * dim + begin) * inner;
      std::copy(from, from + size * inner, dst + o * size * inner);
    }
  });
  return out;
}

// The piece's gradient in place, zeros around it along `axis`.
Grads SplitOutputGradient(const OpCall& call, const Tensor& grad) {
  const Shape& shape = call.inputs[0].shape();
  const int64_t axis = call.attrs.GetInt("axis");
  const int64_t begin = call.attrs.GetInt("begin");
  const int64_t size = call.attrs.GetInt("size");
  std::vector<std::pair<int64_t, int64_t>> paddings(static_cast<size_t>(shape.rank()), {0, 0});
  paddings[static_cast<size_t>(axis)] = {begin, shape.dim(static_cast<int>(axis)) - begin - size};
  return {Pad(grad, paddings)};
}

// OpDef::add_input0_gradient: the piece's gradient added into its place.
bool AddSplitOutputGradient(const OpCall& call, const Tensor& grad, Tensor& sum) {
  const Shape& shape = call.inputs[0].shape();
  const auto axis = static_cast<int>(call.attrs.GetInt("axis"));
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= shape.dim(d);
  if (outer == 0 || grad.num_elements() == 0) return true;
  const int64_t inner = shape.num_elements() / outer / std::max<int64_t>(shape.dim(axis), 1);
  return internal::AddPieceInto(grad, sum, outer, shape.dim(axis) * inner,
                                call.attrs.GetInt("begin") * inner,
                                call.attrs.GetInt("size") * inner);
}

std::string Where(const NodeContext& c) {
  return StrCat("node '", c.node.name, "' (", c.node.op, ")");
}

// split_dim: an int32 scalar.
int64_t SplitDimOf(const NodeContext& c, const Tensor& t) {
  if (t.dtype() != DType::kInt32 || t.rank() != 0) {
    throw InvalidArgumentError(StrCat(Where(c), ": split_dim must be an int32 scalar, got a ",
                                      t.dtype(), " tensor of shape ", t.shape()));
  }
  return t.data<int32_t>()[0];
}

// The pieces of `value` of `sizes` along `axis` (non-negative), as kernels.
NodeOutputs RunPieces(const Tensor& value, int64_t axis, const std::vector<int64_t>& sizes) {
  NodeOutputs out;
  int64_t begin = 0;
  const Tensor in[] = {value};
  for (int64_t size : sizes) {
    out.values.push_back(
        RunKernel(kSplitOutputOp, in, Attrs{{"axis", axis}, {"begin", begin}, {"size", size}}));
    begin += size;
  }
  return out;
}

void CheckArity(const NodeContext& c) {
  const size_t want = c.node.op == "Split" ? 2 : 3;
  if (!c.refs.empty() || c.inputs.size() != want) {
    throw InvalidArgumentError(
        StrCat(Where(c), " takes ", want, " inputs, has ", c.refs.size() + c.inputs.size()));
  }
}

// Equal sizes: dim / num, which must divide (TF's message).
std::vector<int64_t> EqualSizes(std::string_view where, const Shape& shape, int64_t axis,
                                int64_t num) {
  const int64_t dim = shape.dim(static_cast<int>(axis));
  if (num < 1 || dim % num != 0) {
    throw InvalidArgumentError(
        StrCat(where,
               ": Number of ways to split should evenly divide the split dimension, but "
               "got split_dim ",
               axis, " (size = ", dim, ") and num_split ", num));
  }
  return std::vector<int64_t>(static_cast<size_t>(num), dim / num);
}

NodeOutputs RunSplit(const NodeContext& c) {
  CheckArity(c);
  const Tensor& value = c.inputs[1];
  const int64_t axis = SplitAxis(Where(c), value.shape(), SplitDimOf(c, c.inputs[0]));
  return RunPieces(value, axis,
                   EqualSizes(Where(c), value.shape(), axis, c.attrs.GetInt("num_split")));
}

NodeOutputs RunSplitV(const NodeContext& c) {
  CheckArity(c);
  const Tensor& value = c.inputs[0];
  const Tensor& sizes = c.inputs[1];
  const int64_t axis = SplitAxis(Where(c), value.shape(), SplitDimOf(c, c.inputs[2]));
  if ((sizes.dtype() != DType::kInt32 && sizes.dtype() != DType::kInt64) || sizes.rank() != 1) {
    throw InvalidArgumentError(StrCat(Where(c), ": size_splits must be an int32 or int64 vector, ",
                                      "got a ", sizes.dtype(), " tensor of shape ", sizes.shape()));
  }
  std::vector<int64_t> s =
      sizes.dtype() == DType::kInt64
          ? sizes.ToVector<int64_t>()
          : std::vector<int64_t>(sizes.data<int32_t>().begin(), sizes.data<int32_t>().end());
  const int64_t num = c.attrs.GetInt("num_split");
  if (static_cast<int64_t>(s.size()) != num) {
    throw InvalidArgumentError(
        StrCat(Where(c), ": size_splits has ", s.size(), " entries, expected num_split = ", num));
  }
  return RunPieces(value, axis,
                   ResolveSizes(Where(c), std::move(s), value.shape().dim(static_cast<int>(axis))));
}

// The eager pieces, or the graph node with one output per piece; `sizes`
// resolved, `axis` non-negative.
std::vector<Tensor> Pieces(const Tensor& value, int64_t axis, const std::vector<int64_t>& sizes,
                           Node node) {
  Graph* graph = Graph::Current();
  std::vector<Tensor> out;
  if (graph == nullptr) {
    int64_t begin = 0;
    for (int64_t size : sizes) {
      out.push_back(
          Execute(kSplitOutputOp, value, Attrs{{"axis", axis}, {"begin", begin}, {"size", size}}));
      begin += size;
    }
    return out;
  }
  std::vector<int64_t> dims = value.shape().ToVector();
  for (int64_t size : sizes) {
    dims[static_cast<size_t>(axis)] = size;
    node.output_specs.push_back({Shape::Partial(dims), value.dtype()});
  }
  const int index = graph->AddNode(std::move(node));
  for (size_t i = 0; i < sizes.size(); ++i)
    out.push_back(graph->Output(index, static_cast<int>(i)));
  return out;
}

// Checks shared by Split and SplitV's functions: a known rank, a known size
// along axis; the non-negative axis.
int64_t CheckedAxis(std::string_view op, const Tensor& value, int64_t axis) {
  if (value.shape().unknown_rank()) {
    throw InvalidArgumentError(StrCat(op, ": the rank of the value must be known"));
  }
  const int64_t a = SplitAxis(op, value.shape(), axis);
  if (value.shape().dim(static_cast<int>(a)) == Shape::kUnknownDim) {
    throw InvalidArgumentError(StrCat(op, ": the size of split_dim ", axis, " of shape ",
                                      value.shape(), " must be known when the graph is built"));
  }
  return a;
}

}  // namespace

const OpDef kSplitOp = {
    .type = "Split", .num_inputs = 2, .run = RunSplit, .num_outputs = OpDef::kVariadic};
const OpDef kSplitVOp = {
    .type = "SplitV", .num_inputs = 3, .run = RunSplitV, .num_outputs = OpDef::kVariadic};
const OpDef kSplitOutputOp = {.type = "_SplitOutput",
                              .num_inputs = 1,
                              .infer = InferSplitOutput,
                              .compute = SplitOutputKernel,
                              .gradient = SplitOutputGradient,
                              .add_input0_gradient = AddSplitOutputGradient,
                              .eager_only = true};

std::vector<Tensor> Split(const Tensor& value, int64_t num_split, int64_t axis) {
  const int64_t a = CheckedAxis("Split", value, axis);
  const std::vector<int64_t> sizes = EqualSizes("Split", value.shape(), a, num_split);
  Node node{.op = "Split"};
  if (Graph* graph = Graph::Current()) {
    node.name = graph->UniqueName("split");
    node.inputs = {
        internal::GraphInput(*graph, Tensor(static_cast<int32_t>(axis)), "split/split_dim"),
        internal::GraphInput(*graph, value)};
    node.attrs = {{"T", value.dtype()}, {"num_split", num_split}};
  }
  return Pieces(value, a, sizes, std::move(node));
}

std::vector<Tensor> SplitV(const Tensor& value, const std::vector<int64_t>& sizes, int64_t axis) {
  if (sizes.empty()) throw InvalidArgumentError("SplitV: needs at least one size, got none");
  const int64_t a = CheckedAxis("SplitV", value, axis);
  const std::vector<int64_t> resolved =
      ResolveSizes("SplitV", sizes, value.shape().dim(static_cast<int>(a)));
  Node node{.op = "SplitV"};
  if (Graph* graph = Graph::Current()) {
    node.name = graph->UniqueName("split");
    std::vector<int32_t> s32;
    for (int64_t s : sizes) {
      if (s > std::numeric_limits<int32_t>::max()) {
        throw InvalidArgumentError(StrCat("SplitV: size ", s, " does not fit int32"));
      }
      s32.push_back(static_cast<int32_t>(s));
    }
    node.inputs = {
        internal::GraphInput(*graph, value),
        internal::GraphInput(
            *graph,
            Tensor::FromVector<int32_t>(std::move(s32), Shape{static_cast<int64_t>(sizes.size())}),
            "split/size_splits"),
        internal::GraphInput(*graph, Tensor(static_cast<int32_t>(axis)), "split/split_dim")};
    node.attrs = {{"T", value.dtype()},
                  {"Tlen", DType::kInt32},
                  {"num_split", static_cast<int64_t>(sizes.size())}};
  }
  return Pieces(value, a, resolved, std::move(node));
}

}  // namespace eager
