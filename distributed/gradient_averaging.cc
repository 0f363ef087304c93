#include "distributed/gradient_averaging.h"

#include <algorithm>
#include <cstring>

#include "runtime/errors.h"
#include "runtime/tensor_access.h"

namespace eager::distributed {
namespace {

// One dtype's bucket being filled: which positions it holds and their
// elements, back to back.
template <typename T>
class Bucket {
 public:
  Bucket(const World& world, size_t capacity_bytes, std::vector<std::optional<Tensor>>& out,
         AveragingStats& stats)
      : world_(world),
        capacity_(std::max<size_t>(1, capacity_bytes / sizeof(T))),
        out_(out),
        stats_(stats) {}

  // Adds tensors[index]; reduces what is held first when it would not fit.
  void Add(size_t index, const Tensor& tensor) {
    const std::span<const T> values = tensor.data<T>();
    if (!members_.empty() && values_.size() + values.size() > capacity_) Flush();
    members_.push_back({index, tensor.shape(), values_.size(), values.size()});
    values_.insert(values_.end(), values.begin(), values.end());
  }

  // One MPI_Allreduce over everything held, then each member's mean.
  void Flush() {
    if (members_.empty()) return;
    world_.AllreduceSum(std::span<T>(values_));
    ++stats_.allreduce_calls;
    stats_.bytes += static_cast<int64_t>(values_.size() * sizeof(T));
    const T ranks = static_cast<T>(world_.size());
    for (const Member& m : members_) {
      Tensor mean = internal::NewTensor(m.shape, DTypeOf<T>());
      T* dst = internal::MutableData<T>(mean);
      const T* src = values_.data() + m.offset;
      for (size_t i = 0; i < m.count; ++i) dst[i] = src[i] / ranks;
      out_[m.index] = std::move(mean);
    }
    members_.clear();
    values_.clear();
  }

 private:
  struct Member {
    size_t index;
    Shape shape;
    size_t offset;
    size_t count;
  };
  const World& world_;
  size_t capacity_;  // elements
  std::vector<std::optional<Tensor>>& out_;
  AveragingStats& stats_;
  std::vector<Member> members_;
  std::vector<T> values_;
};

}  // namespace

std::vector<std::optional<Tensor>> AverageAcrossRanks(
    const World& world, std::span<const std::optional<Tensor>> tensors, size_t bucket_bytes,
    AveragingStats* stats) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i]) continue;
    const DType dtype = tensors[i]->dtype();
    if (dtype != DType::kFloat32 && dtype != DType::kFloat64) {
      throw UnimplementedError(StrCat("AverageAcrossRanks: tensor ", i, " is ", dtype,
                                      "; only float32 and float64 are averaged"));
    }
  }
  std::vector<std::optional<Tensor>> out(tensors.begin(), tensors.end());
  if (world.size() == 1) return out;
  AveragingStats local;
  AveragingStats& counted = stats != nullptr ? *stats : local;
  Bucket<float> floats(world, bucket_bytes, out, counted);
  Bucket<double> doubles(world, bucket_bytes, out, counted);
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i]) continue;
    if (tensors[i]->dtype() == DType::kFloat32) {
      floats.Add(i, *tensors[i]);
    } else {
      doubles.Add(i, *tensors[i]);
    }
  }
  floats.Flush();
  doubles.Flush();
  return out;
}

}  // namespace eager::distributed
