#pragma once

// The most bytes one tensor a kernel makes may take (RunKernel checks each
// output's size before its kernel runs): the machine's physical memory,
// or less while a ScopedMemoryLimit is alive on this thread (a Session run
// with SessionOptions::memory_limit_bytes). Not part of the public API.

#include <cstdint>
#include <string_view>

#include "runtime/dtype.h"
#include "runtime/shape.h"
#include "runtime/tensor.h"

namespace eager::internal {

// The limit on this thread now.
int64_t TensorByteLimit();

// Throws ResourceExhaustedError naming `op`, `shape` and `dtype` when a
// tensor of them would take more than TensorByteLimit() bytes (the size is
// computed without overflow).
void CheckTensorBytes(std::string_view op, const Shape& shape, DType dtype);

// The same for a string tensor already made, with its characters: a
// string's size is known only once its kernel has run.
void CheckStringTensorBytes(std::string_view op, const Tensor& strings);

// Lowers this thread's limit to `bytes` (if positive and lower) until
// destroyed.
class ScopedMemoryLimit {
 public:
  explicit ScopedMemoryLimit(int64_t bytes);
  ~ScopedMemoryLimit();
  ScopedMemoryLimit(const ScopedMemoryLimit&) = delete;
  ScopedMemoryLimit& operator=(const ScopedMemoryLimit&) = delete;

 private:
  int64_t previous_;
};

}  // namespace eager::internal
