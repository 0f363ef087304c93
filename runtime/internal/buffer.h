#pragma once

// internal::Buffer: the storage behind a Tensor. Not part of the public API.
//
// A Buffer is allocated once, filled by whoever created it (a kernel, a
// factory, a file reader) and then only read: a Tensor holds it as
// shared_ptr<const Buffer>. The shared_ptr control block, the Buffer and its
// elements share ONE allocation whatever the size, taken from the per-thread
// size-class cache (buffer_cache.h), so creating an op's output usually costs
// no malloc at all (the per-op overhead budget). Elements are
// 64-byte aligned for vectorized kernels. String buffers hold constructed
// std::string objects.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "runtime/dtype.h"

namespace eager::internal {

class Buffer {
 public:
  static constexpr size_t kAlignment = 64;

  // Uninitialized numeric storage, or default-constructed strings.
  static std::shared_ptr<const Buffer> Allocate(DType dtype, int64_t num_elements);

  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  size_t size_bytes() const { return bytes_; }

  // Public only for allocate_shared; use Allocate(). `storage` points at the
  // element storage co-allocated right after this object.
  struct PrivateTag {};
  Buffer(PrivateTag, DType dtype, int64_t num_elements, void* const* storage);

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  int64_t num_elements_ = 0;
  DType dtype_;
};

}  // namespace eager::internal
