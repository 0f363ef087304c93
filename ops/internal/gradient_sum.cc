#include "ops/internal/gradient_sum.h"

#include "runtime/tensor_access.h"

namespace eager::internal {
namespace {

template <typename T>
void AddRows(const T* piece, T* sum, int64_t outer, int64_t row, int64_t offset, int64_t width) {
  for (int64_t o = 0; o < outer; ++o) {
    const T* from = piece + o * width;
    T* to = sum + o * row + offset;
    for (int64_t i = 0; i < width; ++i) to[i] += from[i];
  }
}

}  // namespace

bool AddPieceInto(const Tensor& piece, Tensor& sum, int64_t outer, int64_t row, int64_t offset,
                  int64_t width) {
  if (piece.dtype() != sum.dtype()) return false;
  if (piece.dtype() == DType::kFloat32) {
    AddRows(piece.data<float>().data(), MutableData<float>(sum), outer, row, offset, width);
    return true;
  }
  if (piece.dtype() == DType::kFloat64) {
    AddRows(piece.data<double>().data(), MutableData<double>(sum), outer, row, offset, width);
    return true;
  }
  return false;
}

}  // namespace eager::internal
