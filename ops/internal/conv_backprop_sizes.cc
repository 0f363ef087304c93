#include "ops/internal/conv_backprop_sizes.h"

#include <string>
#include <vector>

#include "ops/internal/dispatch.h"
#include "ops/internal/dynamic_shape.h"
#include "ops/internal/window_geometry.h"
#include "runtime/tensor_access.h"

namespace eager::internal {

std::optional<Shape> ReadSizes(const Tensor& t, std::string_view what) {
  CheckDTypeIn(t, what, DTypeSet::kIndex);
  if (t.rank() != 1 || (t.shape().dim(0) != 4 && t.shape().dim(0) != Shape::kUnknownDim)) {
    throw InvalidArgumentError(StrCat(what, " must be a vector of 4 sizes, got shape ", t.shape()));
  }
  if (t.is_symbolic()) return std::nullopt;
  std::vector<int64_t> dims;
  if (t.dtype() == DType::kInt32) {
    for (int32_t v : t.data<int32_t>()) dims.push_back(v);
  } else {
    dims = t.ToVector<int64_t>();
  }
  for (int64_t d : dims) {
    if (d >= 0) continue;
    // Not through Shape, which refuses a negative dimension with its own words.
    std::string values;
    for (int64_t v : dims) values += StrCat(values.empty() ? "" : ",", v);
    throw InvalidArgumentError(StrCat(what, " has a negative size: [", values, "]"));
  }
  return Shape(dims);
}

void CheckBackprop(const Tensor& out_backprop, const Shape& expected) {
  if (out_backprop.shape() != expected) {
    throw InvalidArgumentError(StrCat("out_backprop must have the forward output's shape ",
                                      expected, ", got ", out_backprop.shape()));
  }
}

OutputSpec PartialBackpropInputShape(std::span<const Tensor> in) {
  CheckImages(in[2], "out_backprop");
  CheckSameDType(in[1], in[2], "filter", "out_backprop");
  if (std::optional<Shape> sizes = ReadSizes(in[0], "input_sizes")) return {*sizes, in[2].dtype()};
  if (std::optional<Shape> partial = PartialShapeValue(in[0]); partial && partial->rank() == 4) {
    return {*partial, in[2].dtype()};
  }
  return {Shape::Partial({-1, -1, -1, in[1].rank() == 4 ? in[1].shape().dim(2) : -1}),
          in[2].dtype()};
}

OutputSpec PartialBackpropFilterShape(std::span<const Tensor> in) {
  CheckImages(in[0], "input");
  CheckImages(in[2], "out_backprop");
  CheckSameDType(in[0], in[2], "input", "out_backprop");
  if (std::optional<Shape> sizes = ReadSizes(in[1], "filter_sizes")) {
    return {*sizes, in[0].dtype()};
  }
  if (std::optional<Shape> partial = PartialShapeValue(in[1]); partial && partial->rank() == 4) {
    return {*partial, in[0].dtype()};
  }
  return {Shape::Partial({-1, -1, in[0].shape().dim(3), -1}), in[0].dtype()};
}

}  // namespace eager::internal
