#include "saving/checkpoint/internal/own_copies.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>

#include "runtime/tensor_access.h"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace eager::internal {
namespace {

// The bytes a copy would take; 0 for what is never copied (strings, a
// tensor without values: BundleWriter::Add reports those).
size_t CopyableBytes(const Tensor& tensor) {
  if (tensor.dtype() == DType::kString || BufferOf(tensor) == nullptr) return 0;
  return tensor.bytes().size();
}

}  // namespace

void CopyBypassingCaches(void* destination, const void* source, size_t bytes) {
#if defined(__SSE2__)
  auto* to = static_cast<char*>(destination);
  const auto* from = static_cast<const char*>(source);
  // Up to the first 64-byte boundary of the destination with plain stores.
  const size_t head = std::min(bytes, (64 - reinterpret_cast<uintptr_t>(to) % 64) % 64);
  std::memcpy(to, from, head);
  to += head;
  from += head;
  bytes -= head;
  // Whole lines, each with streaming stores that write-combine into one line
  // write to memory and leave no copy of it in any cache.
  const size_t lines = bytes / 64;
  for (size_t i = 0; i < lines; ++i, to += 64, from += 64) {
#if defined(__AVX512F__)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(to),
                        _mm512_loadu_si512(reinterpret_cast<const void*>(from)));
#else
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(to), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(to + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(to + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(to + 48), d);
#endif
  }
  std::memcpy(to, from, bytes % 64);
  // Streaming stores are weakly ordered: make them visible before whatever
  // publishes the copy (a mutex, a release) does.
  _mm_sfence();
#else
  std::memcpy(destination, source, bytes);
#endif
}

std::vector<bool> OwnCopiesOfHeldValues(std::vector<std::pair<std::string, Tensor>>& tensors,
                                        size_t budget_bytes) {
  std::vector<bool> copied(tensors.size(), false);
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Largest first: the big values are what an optimizer step would copy.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return CopyableBytes(tensors[a].second) > CopyableBytes(tensors[b].second);
  });
  size_t budget = budget_bytes;
  for (const size_t i : order) {
    Tensor& tensor = tensors[i].second;
    const size_t n = CopyableBytes(tensor);
    if (n == 0 || n > budget || BufferOf(tensor).use_count() <= 1) continue;
    Tensor copy = NewTensor(tensor.shape(), tensor.dtype());
    CopyBypassingCaches(MutableRawData(copy), RawData(tensor), n);
    // Dropping our reference is a release: an optimizer that then sees its
    // variable as the only holder writes in place after its acquire fence
    // (autodiff/internal/writable_value.cc), so after our reads above.
    tensor = std::move(copy);
    copied[i] = true;
    budget -= n;
  }
  return copied;
}

}  // namespace eager::internal
