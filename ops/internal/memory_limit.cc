#include "ops/internal/memory_limit.h"

#include <unistd.h>

#include <algorithm>
#include <limits>

#include "runtime/errors.h"

namespace eager::internal {
namespace {

int64_t PhysicalMemory() {
  static const int64_t bytes = [] {
    const long pages = ::sysconf(_SC_PHYS_PAGES);  // NOLINT(google-runtime-int): POSIX's type
    const long page = ::sysconf(_SC_PAGESIZE);     // NOLINT(google-runtime-int)
    if (pages <= 0 || page <= 0 || pages > std::numeric_limits<int64_t>::max() / page) {
      return std::numeric_limits<int64_t>::max();
    }
    return static_cast<int64_t>(pages) * page;
  }();
  return bytes;
}

thread_local int64_t limit = 0;  // 0: PhysicalMemory()

// Where TensorByteLimit() came from, for messages.
const char* LimitSource() {
  return limit > 0 ? "SessionOptions::memory_limit_bytes" : "the machine's physical memory";
}

}  // namespace

int64_t TensorByteLimit() { return limit > 0 ? limit : PhysicalMemory(); }

void CheckTensorBytes(std::string_view op, const Shape& shape, DType dtype) {
  const int64_t n = shape.num_elements();
  const auto size = static_cast<int64_t>(DTypeSize(dtype));
  const int64_t max = TensorByteLimit();
  if (n <= max / size) return;
  throw ResourceExhaustedError(StrCat(
      "OOM when allocating tensor with shape", shape, " and type ", dtype, " for ", op, ": ", n,
      " elements of ", size, " bytes exceed the limit of ", max, " bytes (", LimitSource(), ")"));
}

void CheckStringTensorBytes(std::string_view op, const Tensor& strings) {
  const int64_t max = TensorByteLimit();
  auto bytes = static_cast<int64_t>(static_cast<uint64_t>(strings.num_elements()) *
                                    DTypeSize(DType::kString));
  for (const std::string& s : strings.data<std::string>()) {
    bytes += static_cast<int64_t>(s.size());
    if (bytes > max) break;
  }
  if (bytes <= max) return;
  throw ResourceExhaustedError(StrCat("OOM when allocating tensor with shape", strings.shape(),
                                      " and type string for ", op, ": its strings take more than ",
                                      max, " bytes (", LimitSource(), ")"));
}

ScopedMemoryLimit::ScopedMemoryLimit(int64_t bytes) : previous_(limit) {
  if (bytes > 0 && (limit == 0 || bytes < limit)) limit = bytes;
}

ScopedMemoryLimit::~ScopedMemoryLimit() { limit = previous_; }

}  // namespace eager::internal
