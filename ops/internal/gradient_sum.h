#pragma once

// Adding a piece's gradient into a running gradient sum in place, for
// OpDef::add_input0_gradient of ops that cut a tensor into pieces along one
// axis (_UnpackOutput, _SplitOutput): the tape then touches the piece, not
// a zero-padded tensor the whole input's size.

#include <cstdint>

#include "runtime/tensor.h"

namespace eager::internal {

// `sum` viewed as [outer, row] elements and `piece` as [outer, width]:
// sum[o, offset + i] += piece[o, i] for every o and i < width. float32 and
// float64 only (false, nothing added, otherwise or when the dtypes differ).
// REQUIRES: nobody else holds sum's buffer; offset + width <= row;
// outer * row == sum's elements, outer * width == piece's.
bool AddPieceInto(const Tensor& piece, Tensor& sum, int64_t outer, int64_t row, int64_t offset,
                  int64_t width);

}  // namespace eager::internal
