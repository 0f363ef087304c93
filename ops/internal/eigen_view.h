#pragma once

// Eigen views over eager's row-major buffers. Private to ops/ (never include
// this from a public header): Eigen types must not leak into the API.
//
// Every map is Eigen::RowMajor, matching Tensor's storage; mapping a buffer
// column-major would silently transpose it. Maps never own memory and never
// outlive the tensors they view.

#include <Eigen/Core>
#include <cstdint>

#include "runtime/tensor.h"
#include "runtime/tensor_access.h"

namespace eager::internal {

template <typename T>
using ArrayMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using ConstArrayMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

template <typename T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using MatrixMap = Eigen::Map<RowMajorMatrix<T>>;
template <typename T>
using ConstMatrixMap = Eigen::Map<const RowMajorMatrix<T>>;

template <typename T>
using RowMajorArray2D = Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using Array2DMap = Eigen::Map<RowMajorArray2D<T>>;
template <typename T>
using ConstArray2DMap = Eigen::Map<const RowMajorArray2D<T>>;

// All elements of `t` as a flat array. REQUIRES: T matches t.dtype().
template <typename T>
ConstArrayMap<T> FlatView(const Tensor& t) {
  return ConstArrayMap<T>(t.data<T>().data(), static_cast<Eigen::Index>(t.num_elements()));
}
// Writable flat view of a tensor fresh from NewTensor.
template <typename T>
ArrayMap<T> MutableFlatView(Tensor& fresh) {
  return ArrayMap<T>(MutableData<T>(fresh), static_cast<Eigen::Index>(fresh.num_elements()));
}

// `t` seen as rows x cols (row-major). REQUIRES: rows * cols == num_elements.
template <typename T>
ConstMatrixMap<T> MatrixView(const Tensor& t, int64_t rows, int64_t cols) {
  return ConstMatrixMap<T>(t.data<T>().data(), static_cast<Eigen::Index>(rows),
                           static_cast<Eigen::Index>(cols));
}
template <typename T>
MatrixMap<T> MutableMatrixView(Tensor& fresh, int64_t rows, int64_t cols) {
  return MatrixMap<T>(MutableData<T>(fresh), static_cast<Eigen::Index>(rows),
                      static_cast<Eigen::Index>(cols));
}

}  // namespace eager::internal
