#include "autodiff/internal/writable_value.h"

#include <cstring>

#include "runtime/internal/tensor_access.h"

namespace eager::internal {

Tensor WritableValue(const Variable& variable) {
  Tensor value = variable.value();
  // Two owners: the variable's value_ and `value`. A third (a tape record, a
  // tensor the user kept, a save in progress) would see the write, so then
  // copy. The caller holds the variable's lock, so no other thread can take
  // a new reference until the result is assigned.
  if (BufferOf(value).use_count() == 2) return value;
  Tensor fresh = NewTensor(value.shape(), value.dtype());
  std::memcpy(MutableRawData(fresh), RawData(value), value.bytes().size());
  return fresh;
}

}  // namespace eager::internal
