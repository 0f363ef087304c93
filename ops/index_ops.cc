#include "ops/array_ops.h"

// Index ops: GatherV2, UnsortedSegmentSum, OneHot.

#include <algorithm>

#include "ops/execute.h"
#include "ops/internal/dispatch.h"
#include "ops/internal/eigen_view.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using internal::DTypeSet;
using Grads = std::vector<std::optional<Tensor>>;

// ---- GatherV2 / UnsortedSegmentSum -----------------------------------------

OutputSpec InferGather(std::span<const Tensor> in, const Attrs&) {
  const Tensor& params = in[0];
  const Tensor& indices = in[1];
  internal::CheckDTypeIn(indices, "indices", DTypeSet::kIndex);
  if (params.rank() == 0) {
    throw InvalidArgumentError(
        StrCat("params must have rank >= 1 to gather rows, got shape ", params.shape()));
  }
  if (indices.rank() + params.rank() - 1 > Shape::kMaxRank) {
    throw InvalidArgumentError(StrCat("result rank too large for indices ", indices.shape(),
                                      " and params ", params.shape()));
  }
  std::vector<int64_t> dims = indices.shape().ToVector();
  for (int d = 1; d < params.rank(); ++d) dims.push_back(params.shape().dim(d));
  return {Shape(dims), params.dtype()};
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

Tensor GatherKernel(std::span<const Tensor> in, const Attrs&, const OutputSpec& spec) {
  const Tensor& params = in[0];
  const Tensor& indices = in[1];
  const int64_t rows = params.shape().dim(0);
  const int64_t row_size = rows == 0 ? 0 : params.num_elements() / rows;
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  VisitDType(params.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = params.data<T>().data();
    T* o = internal::MutableData<T>(out);
    ForEachIndex(indices, [&](int64_t i, int64_t index) {
      if (index < 0 || index >= rows) {
        throw InvalidArgumentError(StrCat("GatherV2: indices[", i, "] = ", index, " is not in [0, ",
                                          rows, ") (params shape ", params.shape(),
                                          ", indices shape ", indices.shape(), ")"));
      }
      std::copy(src + index * row_size, src + (index + 1) * row_size, o + i * row_size);
    });
  });
  return out;
}

Grads GatherGradient(const OpCall& call, const Tensor& grad) {
  const Tensor& params = call.inputs[0];
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
      if (id < 0 || id >= num_segments) {
        throw InvalidArgumentError(StrCat("UnsortedSegmentSum: segment_ids[", i, "] = ", id,
                                          " is not in [0, ", num_segments, ") (data shape ",
                                          data.shape(), ", segment_ids shape ", ids.shape(), ")"));
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
  std::vector<int64_t> dims = indices.shape().ToVector();
  dims.push_back(depth);
  return {Shape(dims), dtype};
}

Tensor OneHotKernel(std::span<const Tensor> in, const Attrs& attrs, const OutputSpec& spec) {
  const int64_t depth = attrs.GetInt("depth");
  Tensor out = internal::NewTensor(spec.shape, spec.dtype);
  internal::Dispatch<DTypeSet::kNumericOrBool>(spec.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T on = static_cast<T>(attrs.GetFloat("on_value"));
    const T off = static_cast<T>(attrs.GetFloat("off_value"));
    T* o = internal::MutableData<T>(out);
    std::fill(o, o + out.num_elements(), off);
    ForEachIndex(in[0], [&](int64_t i, int64_t index) {
      if (index >= 0 && index < depth) o[i * depth + index] = on;
    });
  });
  return out;
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

Tensor Gather(const Tensor& params, const Tensor& indices) {
  return Execute(kGatherOp, params, indices,
                 Attrs{{"axis", int64_t{0}}, {"batch_dims", int64_t{0}}});
}

Tensor UnsortedSegmentSum(const Tensor& data, const Tensor& segment_ids, int64_t num_segments) {
  return Execute(kUnsortedSegmentSumOp, data, segment_ids, Attrs{{"num_segments", num_segments}});
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
