#include "runtime/internal/buffer.h"

#include <new>
#include <string>

#include "runtime/buffer_cache.h"
#include "runtime/variant.h"

namespace eager::internal {
namespace {

constexpr size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

// An allocator for allocate_shared that over-allocates: after the control
// block (which contains the Buffer) it reserves `extra` bytes, 64-byte
// aligned, and reports their address through `storage`. allocate_shared
// calls allocate() exactly once, before constructing the Buffer, which reads
// the address in its constructor.
template <typename T>
struct CoAllocator {
  using value_type = T;

  CoAllocator(size_t extra_bytes, void** storage_out) : extra(extra_bytes), storage(storage_out) {}
  template <typename U>
  CoAllocator(const CoAllocator<U>& other)  // NOLINT(google-explicit-constructor)
      : extra(other.extra), storage(other.storage) {}

  T* allocate(size_t n) {
    const size_t head = RoundUp(n * sizeof(T), Buffer::kAlignment);
    void* block = AllocateBufferBlock(head + extra);
    if (storage != nullptr) *storage = static_cast<std::byte*>(block) + head;
    return static_cast<T*>(block);
  }
  void deallocate(T* block, size_t n) noexcept {
    FreeBufferBlock(block, RoundUp(n * sizeof(T), Buffer::kAlignment) + extra);
  }
  template <typename U>
  bool operator==(const CoAllocator<U>& other) const {
    return extra == other.extra;
  }

  size_t extra;
  void** storage;
};

}  // namespace

Buffer::Buffer(PrivateTag, DType dtype, int64_t num_elements, void* const* storage)
    : data_(*storage),
      bytes_(static_cast<size_t>(num_elements) * DTypeSize(dtype)),
      num_elements_(num_elements),
      dtype_(dtype) {
  if (dtype_ == DType::kString) {
    auto* strings = static_cast<std::string*>(data_);
    for (int64_t i = 0; i < num_elements_; ++i) new (strings + i) std::string();
  } else if (dtype_ == DType::kVariant) {
    auto* values = static_cast<Variant*>(data_);
    for (int64_t i = 0; i < num_elements_; ++i) new (values + i) Variant();
  }
}

Buffer::~Buffer() {
  if (dtype_ == DType::kString) {
    auto* strings = static_cast<std::string*>(data_);
    for (int64_t i = 0; i < num_elements_; ++i) strings[i].~basic_string();
  } else if (dtype_ == DType::kVariant) {
    auto* values = static_cast<Variant*>(data_);
    for (int64_t i = 0; i < num_elements_; ++i) values[i].~Variant();
  }
}

std::shared_ptr<const Buffer> Buffer::Allocate(DType dtype, int64_t num_elements) {
  const size_t bytes = static_cast<size_t>(num_elements) * DTypeSize(dtype);
  void* storage = nullptr;
  return std::allocate_shared<Buffer>(CoAllocator<Buffer>(bytes, &storage), PrivateTag{}, dtype,
                                      num_elements, &storage);
}

}  // namespace eager::internal
