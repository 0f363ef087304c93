#include "ops/array_ops.h"

// Index ops: GatherV2, UnsortedSegmentSum, OneHot, ScatterNd, GatherNd,
// DynamicStitch.

#include <algorithm>

#include "ops/execute.h"
#include "ops/index_ops.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/dynamic_shape.h"
#include "ops/internal/eigen_view.h"
#include "ops/internal/memory_limit.h"
#include "ops/shape_ops.h"
#include "runtime/graph.h"
#include "runtime/half.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using internal::DTypeSet;
using Grads = std::vector<std::optional<Tensor>>;

// ---- GatherV2 / UnsortedSegmentSum -----------------------------------------

// GatherV2's axis and batch_dims resolved against the shapes (TF's
// gather_op.cc checks, in its order), and the sizes the kernel walks:
// params [batch, outer, gather, inner], indices [batch, count].
struct GatherPlan {
  int axis = 0;
  int batch_dims = 0;
  int64_t batch = 1, outer = 1, gather = 0, inner = 1, count = 1;
  Shape output;
};

GatherPlan PlanGather(const Tensor& params, const Tensor& indices, const Attrs& attrs) {
  internal::CheckDTypeIn(indices, "indices", DTypeSet::kIndex);
  if (params.rank() == 0) {
    throw InvalidArgumentError(
        StrCat("params must be at least 1 dimensional, got shape ", params.shape()));
  }
  const int64_t axis = attrs.Has("axis") ? attrs.GetInt("axis") : 0;
  if (axis < -params.rank() || axis >= params.rank()) {
    throw InvalidArgumentError(StrCat("Expected axis in the range [", -params.rank(), ", ",
                                      params.rank(), "), but got ", axis, " (params shape ",
                                      params.shape(), ")"));
  }
  int64_t batch_dims = attrs.Has("batch_dims") ? attrs.GetInt("batch_dims") : 0;
  GatherPlan plan;
  plan.axis = static_cast<int>(axis < 0 ? axis + params.rank() : axis);
  if (batch_dims != 0) {
    if (batch_dims < -indices.rank() || batch_dims > indices.rank()) {
      throw InvalidArgumentError(StrCat("Expected batch_dims in the range [", -indices.rank(), ", ",
                                        indices.rank(), "], but got ", batch_dims,
                                        " (indices shape ", indices.shape(), ")"));
    }
    if (batch_dims < 0) batch_dims += indices.rank();
    if (batch_dims >= params.rank()) {
      throw InvalidArgumentError(StrCat("batch_dims (", batch_dims,
                                        ") must be less than rank(params) (", params.rank(), ")"));
    }
    if (plan.axis < batch_dims) {
      throw InvalidArgumentError(StrCat("batch_dims (", batch_dims,
                                        ") must be less than or equal to axis (", plan.axis, ")"));
    }
    for (int d = 0; d < batch_dims; ++d) {
      if (params.shape().dim(d) != indices.shape().dim(d)) {
        throw InvalidArgumentError(StrCat("params.shape[", d, "]: ", params.shape().dim(d),
                                          " should be equal to indices.shape[", d,
                                          "]: ", indices.shape().dim(d)));
      }
    }
  }
  plan.batch_dims = static_cast<int>(batch_dims);
  const int out_rank = params.rank() - 1 + indices.rank() - plan.batch_dims;
  if (out_rank > Shape::kMaxRank) {
    throw InvalidArgumentError(StrCat("result rank ", out_rank, " too large for indices ",
                                      indices.shape(), " and params ", params.shape()));
  }
  std::vector<int64_t> dims;
  dims.reserve(static_cast<size_t>(out_rank));
  for (int d = 0; d < plan.axis; ++d) dims.push_back(params.shape().dim(d));
  for (int d = plan.batch_dims; d < indices.rank(); ++d) dims.push_back(indices.shape().dim(d));
  for (int d = plan.axis + 1; d < params.rank(); ++d) dims.push_back(params.shape().dim(d));
  plan.output = Shape(dims);  // checks that the element count fits int64
  for (int d = 0; d < plan.batch_dims; ++d) plan.batch *= params.shape().dim(d);
  for (int d = plan.batch_dims; d < plan.axis; ++d) plan.outer *= params.shape().dim(d);
  plan.gather = params.shape().dim(plan.axis);
  for (int d = plan.axis + 1; d < params.rank(); ++d) plan.inner *= params.shape().dim(d);
  for (int d = plan.batch_dims; d < indices.rank(); ++d) plan.count *= indices.shape().dim(d);
  return plan;
}

OutputSpec InferGather(std::span<const Tensor> in, const Attrs& attrs) {
  return {PlanGather(in[0], in[1], attrs).output, in[0].dtype()};
}

// Index i of `indices` as int64, whatever its index dtype.
template <typename F>
void ForEachIndex(const Tensor& indices, F&& f) {
  internal::Dispatch<DTypeSet::kIndex>(indices.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    auto d = indices.data<I>();
    for (size_t i = 0; i < d.size(); ++i) f(static_cast<int64_t>(i), static_cast<int64_t>(d[i]));
  });
}

// out[b, o, i, k] = params[b, o, indices[b, i], k].
Tensor GatherKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Tensor& params = in[0];
  const Tensor& indices = in[1];
  const GatherPlan p = PlanGather(params, indices, attrs);
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  if (spec.shape.num_elements() == 0) return out;
  VisitDType(params.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = params.data<T>().data();
    T* o = internal::MutableData<T>(out);
    ForEachIndex(indices, [&](int64_t i, int64_t index) {
      if (index < 0 || index >= p.gather) {
        throw InvalidArgumentError(StrCat(
            "GatherV2: indices[", i, "] = ", index, " is not in [0, ", p.gather, ") (params shape ",
            params.shape(), ", indices shape ", indices.shape(), ", axis ", p.axis, ")"));
      }
      const int64_t b = i / p.count;
      const int64_t j = i % p.count;
      for (int64_t r = 0; r < p.outer; ++r) {
        const T* from = src + ((b * p.outer + r) * p.gather + index) * p.inner;
        std::copy(from, from + p.inner, o + ((b * p.outer + r) * p.count + j) * p.inner);
      }
    });
  });
  return out;
}

Grads GatherGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& params = call.inputs[0];
  const auto nonzero = [&](std::string_view attr) {
    return call.attrs.Has(attr) && call.attrs.GetInt(attr) != 0;
  };
  if (nonzero("axis") || nonzero("batch_dims")) {
    throw UnimplementedError(
        "GatherV2: the gradient is implemented for axis 0 and batch_dims 0 only");
  }
  return {UnsortedSegmentSum(grad, call.inputs[1], params.shape().dim(0)), std::nullopt};
}

OutputSpec InferSegmentSum(std::span<const Tensor> in, const Attrs& attrs) {
  const Tensor& data = in[0];
  const Tensor& ids = in[1];
  internal::CheckDTypeIn(data, "data", DTypeSet::kNumeric);
  internal::CheckDTypeIn(ids, "segment_ids", DTypeSet::kIndex);
  bool prefix = ids.rank() <= data.rank();
  for (int d = 0; prefix && d < ids.rank(); ++d) prefix = ids.shape().dim(d) == data.shape().dim(d);
  if (!prefix) {
    throw InvalidArgumentError(StrCat("segment_ids shape ", ids.shape(),
                                      " must be a prefix of data shape ", data.shape()));
  }
  const int64_t num_segments = attrs.GetInt("num_segments");
  if (num_segments < 0) {
    throw InvalidArgumentError(StrCat("num_segments must be >= 0, got ", num_segments));
  }
  std::vector<int64_t> dims = {num_segments};
  for (int d = ids.rank(); d < data.rank(); ++d) dims.push_back(data.shape().dim(d));
  return {Shape(dims), data.dtype()};
}

Tensor SegmentSumKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const Tensor& data = in[0];
  const Tensor& ids = in[1];
  const int64_t num_segments = attrs.GetInt("num_segments");
  const int64_t row_size = ids.num_elements() == 0 ? 0 : data.num_elements() / ids.num_elements();
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kNumeric>(data.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    internal::MutableFlatView<T>(out).setZero();
    const T* src = data.data<T>().data();
    T* o = internal::MutableData<T>(out);
    ForEachIndex(ids, [&](int64_t i, int64_t id) {
      if (id < 0) return;  // TF drops the rows of negative ids
      if (id >= num_segments) {
        throw InvalidArgumentError(StrCat(
            "UnsortedSegmentSum: segment_ids[", i, "] = ", id, " is not in [0, ", num_segments,
            ") nor negative (data shape ", data.shape(), ", segment_ids shape ", ids.shape(), ")"));
      }
      internal::ArrayMap<T>(o + id * row_size, row_size) +=
          internal::ConstArrayMap<T>(src + i * row_size, row_size);
    });
  });
  return out;
}

Grads SegmentSumGradient(const OpCall& call, const Tensor& grad) {
  return {Gather(grad, call.inputs[1]), std::nullopt};
}

// ---- OneHot ----------------------------------------------------------------

// OneHot's axis: where the depth dimension goes among the output's
// dimensions (-1: last), checked as TF does.
int OneHotAxis(const Tensor& indices, const Attrs& attrs) {
  const int64_t axis = attrs.Has("axis") ? attrs.GetInt("axis") : -1;
  if (axis < -1 || axis > indices.rank()) {
    throw InvalidArgumentError(StrCat("Expected axis to be -1 or between [0, ", indices.rank(),
                                      "].  But received: ", axis, " (indices shape ",
                                      indices.shape(), ")"));
  }
  return axis == -1 ? indices.rank() : static_cast<int>(axis);
}

OutputSpec InferOneHot(std::span<const Tensor> in, const Attrs& attrs) {
  const Tensor& indices = in[0];
  internal::CheckDTypeIn(indices, "indices", DTypeSet::kIndex);
  const int64_t depth = attrs.GetInt("depth");
  if (depth < 0) {
    throw InvalidArgumentError(
        StrCat("depth must be >= 0, got ", depth, " (indices shape ", indices.shape(), ")"));
  }
  const DType dtype = attrs.GetType("T");
  if (!internal::DTypeIn(dtype, DTypeSet::kNumericOrBool)) {
    throw InvalidArgumentError(StrCat("output dtype ", dtype, " is not supported; expected ",
                                      internal::DTypeSetName(DTypeSet::kNumericOrBool)));
  }
  const int axis = OneHotAxis(indices, attrs);
  if (indices.rank() + 1 > Shape::kMaxRank) {
    throw InvalidArgumentError(StrCat("indices of shape ", indices.shape(),
                                      " make an output of rank above ", Shape::kMaxRank));
  }
  std::vector<int64_t> dims = indices.shape().ToVector();
  dims.insert(dims.begin() + axis, depth);
  return {Shape(dims), dtype};
}

// out[p, d, s] = indices[p, s] == d ? on_value : off_value.
Tensor OneHotKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const int64_t depth = attrs.GetInt("depth");
  const int axis = OneHotAxis(in[0], attrs);
  int64_t suffix = 1;
  for (int d = axis; d < in[0].rank(); ++d) suffix *= in[0].shape().dim(d);
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kNumericOrBool>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T on = static_cast<T>(attrs.GetFloat("on_value"));
    const T off = static_cast<T>(attrs.GetFloat("off_value"));
    T* o = internal::MutableData<T>(out);
    std::fill(o, o + out.num_elements(), off);
    ForEachIndex(in[0], [&](int64_t i, int64_t index) {
      if (index < 0 || index >= depth) return;
      const int64_t p = i / suffix;
      const int64_t s = i % suffix;
      o[(p * depth + index) * suffix + s] = on;
    });
  });
  return out;
}

// ---- ScatterNd ----
// TF's ScatterNd: zeros of `shape`, with updates[i...] added at the slice
// indices[i..., :] names (indices [..., D], updates indices.shape[:-1] +
// shape[D:]); a repeated index sums. TF 2.21's gradient graph of TopKV2
// scatters with it.

OutputSpec InferScatterNd(std::span<const Tensor> in, const Attrs&) {
  const Tensor& indices = in[0];
  const Tensor& updates = in[1];
  internal::CheckDTypeIn(indices, "indices", DTypeSet::kIndex);
  internal::CheckDTypeIn(updates, "updates", DTypeSet::kNumeric);
  internal::CheckDTypeIn(in[2], "shape", DTypeSet::kIndex);
  if (!in[2].shape().unknown_rank() && in[2].rank() != 1) {
    throw InvalidArgumentError(StrCat("shape must be a vector, got shape ", in[2].shape()));
  }
  const std::optional<std::vector<int64_t>> known = internal::KnownInts(in[2]);
  if (!known) return {Shape::UnknownRank(), updates.dtype()};
  const std::vector<int64_t>& out = *known;
  for (int64_t d : out) {
    if (d < 0) {
      throw InvalidArgumentError(StrCat("shape ", DimsToString(out), " has a negative entry"));
    }
  }
  const Shape& is = indices.shape();
  const Shape& us = updates.shape();
  if (is.unknown_rank() || us.unknown_rank()) return {Shape(out), updates.dtype()};
  if (is.rank() < 1) {
    throw InvalidArgumentError(StrCat("indices must be at least a vector, got shape ", is));
  }
  const int64_t depth = is.dim(is.rank() - 1);
  // updates.shape must be indices.shape[:-1] + shape[depth:].
  std::vector<int64_t> want(is.ToVector());
  want.pop_back();
  bool ok = depth != Shape::kUnknownDim && depth <= static_cast<int64_t>(out.size());
  if (ok) want.insert(want.end(), out.begin() + depth, out.end());
  ok = ok && static_cast<size_t>(us.rank()) == want.size();
  for (size_t d = 0; ok && d < want.size(); ++d) {
    const int64_t u = us.dim(static_cast<int>(d));
    ok = u == want[d] || u == Shape::kUnknownDim || want[d] == Shape::kUnknownDim;
  }
  if (!ok) {
    throw InvalidArgumentError(StrCat("updates of shape ", us, " do not match indices of shape ",
                                      is, " into shape ", DimsToString(out),
                                      "; expected updates.shape = indices.shape[:-1] + "
                                      "shape[indices.shape[-1]:]"));
  }
  return {Shape(out), updates.dtype()};
}

Tensor ScatterNdKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& indices = in[0];
  const Tensor& updates = in[1];
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kNumeric>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = internal::MutableData<T>(out);
    std::fill(o, o + out.num_elements(), T(0));
  });
  const int depth = static_cast<int>(indices.shape().dim(indices.rank() - 1));
  int64_t rows = 1;  // index tuples: the product of indices.shape[:-1]
  for (int d = 0; d + 1 < indices.rank(); ++d) rows *= indices.shape().dim(d);
  int64_t slice = 1;
  for (int d = depth; d < spec.shape.rank(); ++d) slice *= spec.shape.dim(d);
  if (rows == 0 || slice == 0) return out;
  std::vector<int64_t> idx =
      indices.dtype() == DType::kInt64
          ? indices.ToVector<int64_t>()
          : std::vector<int64_t>(indices.data<int32_t>().begin(), indices.data<int32_t>().end());
  internal::Dispatch<DTypeSet::kNumeric>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = internal::MutableData<T>(out);
    const T* u = updates.data<T>().data();
    for (int64_t i = 0; i < rows; ++i) {
      int64_t offset = 0;
      for (int d = 0; d < depth; ++d) {
        const int64_t v = idx[static_cast<size_t>(i * depth + d)];
        if (v < 0 || v >= spec.shape.dim(d)) {
          std::vector<int64_t> bad(idx.begin() + i * depth, idx.begin() + (i + 1) * depth);
          throw InvalidArgumentError(StrCat("ScatterNd: indices[", i, "] = ", DimsToString(bad),
                                            " does not index into shape ", spec.shape));
        }
        offset = offset * spec.shape.dim(d) + v;
      }
      T* dst = o + offset * slice;
      const T* src = u + i * slice;
      for (int64_t j = 0; j < slice; ++j) dst[j] += src[j];
    }
  });
  return out;
}

// ---- GatherNd ----
// TF's GatherNd: the slices params[indices[i..., :]] (indices [..., D], D
// <= rank of params), output indices.shape[:-1] + params.shape[D:]. Its
// gradient is ScatterNd of grad into zeros of params' shape, ScatterNd's
// (for updates) GatherNd of grad: each the other's.

OutputSpec InferGatherNd(std::span<const Tensor> in, const Attrs&) {
  const Tensor& params = in[0];
  const Tensor& indices = in[1];
  internal::CheckDTypeIn(indices, "indices", DTypeSet::kIndex);
  const Shape& ps = params.shape();
  const Shape& is = indices.shape();
  if (ps.unknown_rank() || is.unknown_rank()) return {Shape::UnknownRank(), params.dtype()};
  if (is.rank() < 1) {
    throw InvalidArgumentError(StrCat("indices must be at least a vector, got shape ", is));
  }
  const int64_t depth = is.dim(is.rank() - 1);
  if (depth == Shape::kUnknownDim) return {Shape::UnknownRank(), params.dtype()};
  if (depth > ps.rank()) {
    throw InvalidArgumentError(StrCat("indices of shape ", is, " name ", depth,
                                      " dimensions of params of shape ", ps,
                                      "; expected indices.shape[-1] <= rank of params"));
  }
  std::vector<int64_t> dims = is.ToVector();
  dims.pop_back();
  for (int d = static_cast<int>(depth); d < ps.rank(); ++d) dims.push_back(ps.dim(d));
  return {Shape::Partial(dims), params.dtype()};
}

Tensor GatherNdKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& params = in[0];
  const Tensor& indices = in[1];
  const Shape& ps = params.shape();
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  const int depth = static_cast<int>(indices.shape().dim(indices.rank() - 1));
  int64_t rows = 1;  // index tuples: the product of indices.shape[:-1]
  for (int d = 0; d + 1 < indices.rank(); ++d) rows *= indices.shape().dim(d);
  int64_t slice = 1;
  for (int d = depth; d < ps.rank(); ++d) slice *= ps.dim(d);
  if (rows == 0) return out;
  const std::vector<int64_t> idx =
      indices.dtype() == DType::kInt64
          ? indices.ToVector<int64_t>()
          : std::vector<int64_t>(indices.data<int32_t>().begin(), indices.data<int32_t>().end());
  VisitDType(spec.dtype, [&](auto tag) {  // every dtype, string too
    using T = typename decltype(tag)::type;
    T* o = internal::MutableData<T>(out);
    const T* src = params.data<T>().data();
    for (int64_t i = 0; i < rows; ++i) {
      int64_t offset = 0;
      for (int d = 0; d < depth; ++d) {
        const int64_t v = idx[static_cast<size_t>(i * depth + d)];
        if (v < 0 || v >= ps.dim(d)) {
          std::vector<int64_t> bad(idx.begin() + i * depth, idx.begin() + (i + 1) * depth);
          throw InvalidArgumentError(StrCat("GatherNd: indices[", i, "] = ", DimsToString(bad),
                                            " does not index into param shape ", ps));
        }
        offset = offset * ps.dim(d) + v;
      }
      std::copy(src + offset * slice, src + (offset + 1) * slice, o + i * slice);
    }
  });
  return out;
}

// TF's _GatherNdGrad: grad summed into zeros of params' shape at the indices.
Grads GatherNdGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& indices = call.inputs[1];
  return {ScatterNd(indices, grad, ShapeOf(call.inputs[0], indices.dtype())), std::nullopt};
}

// TF's _ScatterNdGrad: for updates, grad gathered at the indices.
Grads ScatterNdGradient(const OpCall& call, const Tensor& grad) {
  return {std::nullopt, GatherNd(grad, call.inputs[0]), std::nullopt};
}

}  // namespace

// Graph facts: TF passes these attrs as input tensors.
constexpr InputAttr kGatherInputs[] = {{"axis", "axis", InputAttr::Kind::kInt}};
constexpr TypeAttr kGatherTypes[] = {{"Tparams", 0}, {"Tindices", 1}, {"Taxis", TypeAttr::kInt32}};
constexpr InputAttr kSegmentSumInputs[] = {{"num_segments", "num_segments", InputAttr::Kind::kInt}};
constexpr TypeAttr kSegmentSumTypes[] = {
    {"T", 0}, {"Tindices", 1}, {"Tnumsegments", TypeAttr::kInt32}};
constexpr InputAttr kOneHotInputs[] = {{"depth", "depth", InputAttr::Kind::kInt},
                                       {"on_value", "on_value", InputAttr::Kind::kOutputScalar},
                                       {"off_value", "off_value", InputAttr::Kind::kOutputScalar}};
constexpr TypeAttr kOneHotTypes[] = {{"TI", 0}};  // T is an attr already

const OpDef kGatherOp = {.type = "GatherV2",
                         .num_inputs = 2,
                         .infer = InferGather,
                         .compute = GatherKernel,
                         .gradient = GatherGradient,
                         .input_attrs = kGatherInputs,
                         .type_attrs = kGatherTypes};

// TF1's "Gather" (tf.gather of TF < 1.3 and embedding lookups in TF1
// estimator graphs): GatherV2 on axis 0, without an axis input.
constexpr TypeAttr kLegacyGatherTypes[] = {{"Tparams", 0}, {"Tindices", 1}};
const OpDef kLegacyGatherOp = {.type = "Gather",
                               .num_inputs = 2,
                               .infer = InferGather,
                               .compute = GatherKernel,
                               .gradient = GatherGradient,
                               .type_attrs = kLegacyGatherTypes};

const OpDef kUnsortedSegmentSumOp = {.type = "UnsortedSegmentSum",
                                     .num_inputs = 2,
                                     .infer = InferSegmentSum,
                                     .compute = SegmentSumKernel,
                                     .gradient = SegmentSumGradient,
                                     .input_attrs = kSegmentSumInputs,
                                     .type_attrs = kSegmentSumTypes};

const OpDef kOneHotOp = {.type = "OneHot",
                         .num_inputs = 1,
                         .infer = InferOneHot,
                         .compute = OneHotKernel,
                         .gradient = nullptr,
                         .input_attrs = kOneHotInputs,
                         .type_attrs = kOneHotTypes};  // piecewise constant in its indices

constexpr TypeAttr kScatterNdTypes[] = {{"T", 1}, {"Tindices", 0}};
constexpr TypeAttr kGatherNdTypes[] = {{"Tparams", 0}, {"Tindices", 1}};
const OpDef kGatherNdOp = {.type = "GatherNd",
                           .num_inputs = 2,
                           .infer = InferGatherNd,
                           .compute = GatherNdKernel,
                           .gradient = GatherNdGradient,
                           .type_attrs = kGatherNdTypes,
                           .infer_partial = InferGatherNd};
const OpDef kScatterNdOp = {.type = "ScatterNd",
                            .num_inputs = 3,
                            .infer = InferScatterNd,
                            .compute = ScatterNdKernel,
                            .gradient = ScatterNdGradient,
                            .type_attrs = kScatterNdTypes,
                            .infer_partial = InferScatterNd};

Tensor GatherNd(const Tensor& params, const Tensor& indices) {
  return Execute(kGatherNdOp, params, indices);
}

Tensor ScatterNd(const Tensor& indices, const Tensor& updates, const Tensor& shape) {
  return Execute(kScatterNdOp, {indices, updates, shape});
}

Tensor Gather(const Tensor& params, const Tensor& indices) {
  return Execute(kGatherOp, params, indices,
                 Attrs{{"axis", int64_t{0}}, {"batch_dims", int64_t{0}}});
}

Tensor UnsortedSegmentSum(const Tensor& data, const Tensor& segment_ids, int64_t num_segments) {
  return Execute(kUnsortedSegmentSumOp, data, segment_ids, Attrs{{"num_segments", num_segments}});
}

// ---- DynamicStitch / ParallelDynamicStitch ------------------------------------------
// Inputs: N int32 indices, then N data tensors; data[i] has shape
// indices[i].shape + a shape every data tensor shares. merged[indices[i][j]]
// = data[i][j], in order of i then j, so the last write of an index wins; a
// row no index names is zeros (TF's CPU kernel fills it so).

namespace {

std::string StitchWhere(std::span<const Tensor> in) {
  return StrCat(in.size() / 2, " indices and ", in.size() / 2, " data tensors");
}

OutputSpec InferStitch(std::span<const Tensor> in, const Attrs& attrs) {
  if (in.empty() || in.size() % 2 != 0) {
    throw InvalidArgumentError(StrCat("expected N >= 1 int32 indices tensors and N data tensors, ",
                                      "got ", in.size(), " inputs"));
  }
  const size_t n = in.size() / 2;
  if (attrs.Has("N") && attrs.GetInt("N") != static_cast<int64_t>(n)) {
    throw InvalidArgumentError(
        StrCat("attr N = ", attrs.GetInt("N"), " but the node has ", StitchWhere(in)));
  }
  const Tensor& data0 = in[n];
  const int rank0 = in[0].rank();
  for (size_t i = 0; i < n; ++i) {
    const Tensor& indices = in[i];
    const Tensor& data = in[n + i];
    if (indices.dtype() != DType::kInt32) {
      throw InvalidArgumentError(
          StrCat("indices[", i, "] must be int32, got ", DTypeName(indices.dtype())));
    }
    if (data.dtype() != data0.dtype()) {
      throw InvalidArgumentError(StrCat("data[", i, "] is ", DTypeName(data.dtype()),
                                        " but data[0] is ", DTypeName(data0.dtype())));
    }
    bool prefix = indices.rank() <= data.rank();
    for (int d = 0; prefix && d < indices.rank(); ++d) {
      prefix = indices.shape().dim(d) == data.shape().dim(d);
    }
    if (!prefix) {
      throw InvalidArgumentError(StrCat("data[", i, "].shape = ", data.shape(),
                                        " does not start with indices[", i,
                                        "].shape = ", indices.shape()));
    }
    bool same = data.rank() - indices.rank() == data0.rank() - rank0;
    for (int d = 0; same && d < data.rank() - indices.rank(); ++d) {
      same = data.shape().dim(indices.rank() + d) == data0.shape().dim(rank0 + d);
    }
    if (!same) {
      throw InvalidArgumentError(StrCat(
          "Need data[0].shape[", rank0, ":] = data[", i, "].shape[", indices.rank(),
          ":], got data[0].shape = ", data0.shape(), ", data[", i, "].shape = ", data.shape(),
          ", indices[0].shape = ", in[0].shape(), ", indices[", i, "].shape = ", indices.shape()));
    }
  }
  std::vector<int64_t> dims = {0};
  for (int d = rank0; d < data0.rank(); ++d) dims.push_back(data0.shape().dim(d));
  for (size_t i = 0; i < n; ++i) {
    const std::optional<std::vector<int64_t>> known = internal::KnownInts(in[i]);
    if (!known) {
      dims[0] = Shape::kUnknownDim;  // the output's rows: known when the graph runs
      return {Shape::Partial(dims), data0.dtype()};
    }
    for (size_t j = 0; j < known->size(); ++j) {
      const int64_t index = (*known)[j];
      if (index < 0) {
        throw InvalidArgumentError(
            StrCat("indices[", i, "][", j, "] = ", index, " is out of range (negative)"));
      }
      dims[0] = std::max(dims[0], index + 1);
    }
  }
  return {Shape(dims), data0.dtype()};
}

Tensor StitchKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const size_t n = in.size() / 2;
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  const int64_t rows = spec.shape.dim(0);
  const int64_t row = rows == 0 ? 0 : spec.shape.num_elements() / rows;
  VisitDType(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = internal::MutableData<T>(out);
    std::fill(o, o + spec.shape.num_elements(), T{});
    for (size_t i = 0; i < n; ++i) {
      const T* src = in[n + i].data<T>().data();
      ForEachIndex(in[i], [&](int64_t j, int64_t index) {
        if (index < 0 || index >= rows) {
          throw InvalidArgumentError(
              StrCat("indices[", i, "][", j, "] = ", index, " is out of range [0, ", rows, ")"));
        }
        std::copy(src + j * row, src + (j + 1) * row, o + index * row);
      });
    }
  });
  return out;
}

// TF's _DynamicStitchGrads: data[i]'s gradient gathers the output's at
// indices[i]; indices have none. With a repeated index, every data entry
// written there gets its gradient, the overwritten ones too, as TF's.
Grads StitchGradient(const OpCall& call, const Tensor& grad) {
  const size_t n = call.inputs.size() / 2;
  Grads grads(2 * n);
  for (size_t i = 0; i < n; ++i) {
    if (call.NeedsGradient(n + i)) grads[n + i] = Gather(grad, call.inputs[i]);
  }
  return grads;
}

constexpr TypeAttr kStitchTypes[] = {{"T", TypeAttr::kOutput}};

Tensor Stitch(const OpDef& op, const std::vector<Tensor>& indices,
              const std::vector<Tensor>& data) {
  if (indices.size() != data.size()) {
    throw InvalidArgumentError(StrCat(op.type, ": ", indices.size(), " indices tensors but ",
                                      data.size(), " data tensors"));
  }
  std::vector<Tensor> inputs = indices;
  inputs.insert(inputs.end(), data.begin(), data.end());
  return Execute(op, std::span<const Tensor>(inputs.data(), inputs.size()),
                 Attrs{{"N", static_cast<int64_t>(indices.size())}});
}

}  // namespace

namespace {

// Where: the int64 coordinates of x's nonzero (true) elements, one row each,
// in row-major order. The output is no larger than x's elements times its
// rank, so nothing here trusts a size beyond x itself.
NodeOutputs RunWhere(const NodeContext& c) {
  EAGER_CHECK(c.inputs.size() == 1 && c.refs.empty(), "node '", c.node.name,
              "' (Where) takes 1 input, has ", c.inputs.size() + c.refs.size());
  const Tensor& x = c.inputs[0];
  if (x.dtype() == DType::kString || x.dtype() == DType::kVariant) {
    throw InvalidArgumentError(StrCat("node '", c.node.name, "' (Where): input has dtype ",
                                      x.dtype(), "; expected a numeric or bool tensor"));
  }
  if (x.rank() == 0) {  // TF 2.21's kernel refuses a scalar
    throw InvalidArgumentError(
        StrCat("node '", c.node.name, "' (Where): WhereOp : Unhandled input dimensions: 0"));
  }
  std::vector<int64_t> nonzero;
  VisitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, std::string>) {
      const auto d = x.data<T>();
      for (size_t i = 0; i < d.size(); ++i) {
        bool is_nonzero = false;
        if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
          is_nonzero = static_cast<float>(d[i]) != 0.0f;
        } else {
          is_nonzero = d[i] != T{};
        }
        if (is_nonzero) nonzero.push_back(static_cast<int64_t>(i));
      }
    }
  });
  const int rank = x.rank();
  const auto count = static_cast<int64_t>(nonzero.size());
  internal::CheckTensorBytes("Where", Shape{count, rank}, DType::kInt64);
  std::vector<int64_t> coords(static_cast<size_t>(count * rank));
  for (int64_t r = 0; r < count; ++r) {
    int64_t flat = nonzero[static_cast<size_t>(r)];
    for (int d = rank - 1; d >= 0; --d) {
      coords[static_cast<size_t>(r * rank + d)] = flat % x.shape().dim(d);
      flat /= x.shape().dim(d);
    }
  }
  return {{Tensor::FromVector<int64_t>(std::move(coords), Shape{count, rank})}};
}

}  // namespace

const OpDef kWhereOp = {.type = "Where", .num_inputs = 1, .run = RunWhere};

const OpDef kDynamicStitchOp = {.type = "DynamicStitch",
                                .num_inputs = OpDef::kVariadic,
                                .infer = InferStitch,
                                .compute = StitchKernel,
                                .gradient = StitchGradient,
                                .type_attrs = kStitchTypes};
const OpDef kParallelDynamicStitchOp = {.type = "ParallelDynamicStitch",
                                        .num_inputs = OpDef::kVariadic,
                                        .infer = InferStitch,
                                        .compute = StitchKernel,
                                        .gradient = StitchGradient,
                                        .type_attrs = kStitchTypes};

Tensor DynamicStitch(const std::vector<Tensor>& indices, const std::vector<Tensor>& data) {
  return Stitch(kDynamicStitchOp, indices, data);
}
Tensor ParallelDynamicStitch(const std::vector<Tensor>& indices, const std::vector<Tensor>& data) {
  return Stitch(kParallelDynamicStitchOp, indices, data);
}

Tensor OneHot(const Tensor& indices, int64_t depth, double on_value, double off_value,
              DType dtype) {
  return Execute(kOneHotOp, indices,
                 Attrs{{"depth", depth},
                       {"on_value", on_value},
                       {"off_value", off_value},
                       {"axis", int64_t{-1}},
                       {"T", dtype}});
}

}  // namespace eager
