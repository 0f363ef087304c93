#include "autodiff/internal/writable_value.h"

#include <atomic>
#include <cstring>

#include "runtime/tensor_access.h"

namespace eager::internal {

Tensor WritableValue(const Variable& variable) {
  Tensor value = variable.value();
  // Two owners: the variable's value_ and `value`. A third (a tape record, a
  // tensor the user kept, a save in progress) would see the write, so then
  // copy. The caller holds the variable's lock, so no other thread can take
  // a new reference until the result is assigned.
  if (BufferOf(value).use_count() == 2) {
    // use_count() is a relaxed load. The last other holder may have let go
    // on another thread (an asynchronous save that has copied the bytes,
    // saving/checkpoint/internal/own_copies.h); its release of the reference orders
    // its reads of the buffer before our writes only through this fence.
    std::atomic_thread_fence(std::memory_order_acquire);
    return value;
  }
  Tensor fresh = NewTensor(value.shape(), value.dtype());
  std::memcpy(MutableRawData(fresh), RawData(value), value.bytes().size());
  return fresh;
}

bool UpdateTarget::in_place() const { return RawData(in) == RawData(out); }

UpdateTarget UpdateTargetOf(const Variable& variable) {
  Tensor value = variable.value();
  if (BufferOf(value).use_count() == 2) {
    std::atomic_thread_fence(std::memory_order_acquire);  // as in WritableValue
    return {value, value};
  }
  Tensor fresh = NewTensor(value.shape(), value.dtype());
  return {std::move(value), std::move(fresh)};
}

}  // namespace eager::internal
