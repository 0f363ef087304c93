#include "saving/internal/own_copies.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "runtime/internal/tensor_access.h"

namespace eager::internal {
namespace {

// The bytes a copy would take; 0 for what is never copied (strings, a
// tensor without values: BundleWriter::Add reports those).
size_t CopyableBytes(const Tensor& tensor) {
  if (tensor.dtype() == DType::kString || BufferOf(tensor) == nullptr) return 0;
  return tensor.bytes().size();
}

}  // namespace

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
    std::memcpy(MutableRawData(copy), RawData(tensor), n);
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
