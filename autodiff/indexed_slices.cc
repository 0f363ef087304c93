#include "autodiff/indexed_slices.h"

#include "ops/index_ops.h"
#include "ops/unary_ops.h"

namespace eager {

Tensor IndexedSlices::ToDense() const {
  return UnsortedSegmentSum(values, indices, dense_shape.dim(0));
}

Tensor IndexedSlices::SquaresToDense() const {
  return UnsortedSegmentSum(Square(values), indices, dense_shape.dim(0));
}

Tensor ToDense(const GradientValue& gradient) {
  if (const auto* slices = std::get_if<IndexedSlices>(&gradient)) return slices->ToDense();
  return std::get<Tensor>(gradient);
}

}  // namespace eager
