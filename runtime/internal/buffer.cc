#include "runtime/internal/buffer.h"

#include <new>
#include <string>

namespace eager::internal {

Buffer::Buffer(PrivateTag, DType dtype, int64_t num_elements)
    : num_elements_(num_elements), dtype_(dtype) {
  bytes_ = static_cast<size_t>(num_elements) * DTypeSize(dtype);
  if (bytes_ <= kInlineBytes) {
    data_ = inline_;
  } else {
    data_ = ::operator new(bytes_, std::align_val_t(kAlignment));
    heap_ = true;
  }
  if (dtype_ == DType::kString) {
    auto* strings = static_cast<std::string*>(data_);
    for (int64_t i = 0; i < num_elements_; ++i) new (strings + i) std::string();
  }
}

Buffer::~Buffer() {
  if (dtype_ == DType::kString) {
    auto* strings = static_cast<std::string*>(data_);
    for (int64_t i = 0; i < num_elements_; ++i) strings[i].~basic_string();
  }
  if (heap_) ::operator delete(data_, std::align_val_t(kAlignment));
}

std::shared_ptr<Buffer> Buffer::Allocate(DType dtype, int64_t num_elements) {
  return std::make_shared<Buffer>(PrivateTag{}, dtype, num_elements);
}

}  // namespace eager::internal
