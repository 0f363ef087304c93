#pragma once

// The write side of Tensor, for eager's own code: ops' kernels, autodiff's
// optimizers, saving's readers, the examples' data loaders. Not user API and
// not installed (cmake/package.cmake).
//
// A Tensor is immutable to its users. The code that creates one (an op
// kernel, Tensor's own factories, a checkpoint reader, an optimizer's
// in-place update, the main job's batcher) allocates it here, fills it
// through MutableData() before anyone else sees it, and then hands it out.
// Only files that include this header can do so; Tensor befriends
// TensorAccess and nothing else.

#include <memory>

#include "runtime/tensor.h"

namespace eager::internal {

class TensorAccess {
 public:
  static Tensor NewTensor(const Shape& shape, DType dtype) {
    return Tensor::Uninitialized(shape, dtype);
  }
  static void* MutableRawData(Tensor& fresh) { return const_cast<void*>(fresh.raw_data()); }
  static const void* RawData(const Tensor& tensor) { return tensor.raw_data(); }
  static const std::shared_ptr<const Buffer>& BufferOf(const Tensor& tensor) {
    return tensor.buffer_;
  }
  static Tensor WithShape(const Tensor& tensor, const Shape& shape);

  // A view of an eager tensor that does not own its elements (no reference
  // count is touched): for Execute, which hands a kernel its inputs while the
  // caller's tensors keep them alive. It must not outlive `tensor`: Execute
  // never lets one escape (see Adopt).
  static Tensor Borrow(const Tensor& tensor) { return Tensor(Tensor::BorrowTag{}, tensor); }
  // True when `tensor` is such a view, or was made from one (a kernel that
  // passes an input's buffer on, as Reshape does).
  static bool IsBorrowed(const Tensor& tensor) {
    return tensor.buffer_ != nullptr && tensor.buffer_.use_count() == 0;
  }
  // Gives `view` the owning pointer of `owner`, whose buffer it shows.
  static void Adopt(Tensor& view, const Tensor& owner) { view.buffer_ = owner.buffer_; }
};

// A fresh process-wide tensor id (never 0).
TensorId NewTensorId();

// A new tensor with uninitialized storage (default strings) and a fresh id.
// Its creator fills it through MutableData() before anyone else sees it.
inline Tensor NewTensor(const Shape& shape, DType dtype) {
  return TensorAccess::NewTensor(shape, dtype);
}

// Writable elements of a tensor made by NewTensor that nobody else has seen.
// Throws InvalidArgumentError unless T matches its dtype.
template <typename T>
T* MutableData(Tensor& fresh) {
  return const_cast<T*>(fresh.data<T>().data());
}
inline void* MutableRawData(Tensor& fresh) { return TensorAccess::MutableRawData(fresh); }

// The element storage of any tensor, read-only (string tensors included).
inline const void* RawData(const Tensor& tensor) { return TensorAccess::RawData(tensor); }

// The buffer behind `tensor`: its use_count() tells whether anyone else
// holds the elements (see autodiff/internal/writable_value.h).
inline const std::shared_ptr<const Buffer>& BufferOf(const Tensor& tensor) {
  return TensorAccess::BufferOf(tensor);
}

// The same elements under another shape with the same element count, new id.
// Throws InvalidArgumentError when the element counts differ.
inline Tensor WithShape(const Tensor& tensor, const Shape& shape) {
  return TensorAccess::WithShape(tensor, shape);
}

}  // namespace eager::internal
