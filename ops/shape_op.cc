#include "ops/shape_op.h"

#include <limits>
#include <vector>

#include "ops/array_ops.h"
#include "ops/execute.h"
#include "ops/internal/dynamic_shape.h"
#include "runtime/graph.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

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

std::vector<int64_t> ToInt64(const Tensor& t) {
  const auto d = t.data<int32_t>();
  return {d.begin(), d.end()};
}

}  // namespace

// The output's shape is [rank] whatever the dimensions are, so the rule
// holds for partially known inputs as it is.
const OpDef kShapeOp = {.type = "Shape",
                        .num_inputs = 1,
                        .infer = InferShape,
                        .compute = ShapeKernel,
                        .gradient = nullptr,
                        .infer_partial = InferShape};

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

}  // namespace eager
