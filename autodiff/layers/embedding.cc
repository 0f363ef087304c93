#include "autodiff/layers/embedding.h"

#include <optional>
#include <string>
#include <vector>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/index_ops.h"
#include "ops/random_generator.h"
#include "runtime/graph.h"
#include "runtime/names.h"

namespace eager::layers {
namespace {

std::string LayerName(std::string_view name) {
  return name.empty() ? UniqueObjectName("embedding") : std::string(name);
}

// FNV-1a, as Dense derives its default seed: the same on every platform.
uint64_t SeedFromName(std::string_view name) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

bool IsInteger(DType d) { return d == DType::kInt32 || d == DType::kInt64; }

}  // namespace

Embedding::Embedding(int64_t input_dim, int64_t output_dim, bool mask_zero,
                     std::optional<uint64_t> seed, DType dtype, std::string_view name)
    : Layer(LayerName(name)),
      input_dim_(input_dim),
      output_dim_(output_dim),
      mask_zero_(mask_zero),
      seed_(seed ? *seed : SeedFromName(this->name())),
      dtype_(dtype) {
  EAGER_CHECK(input_dim > 0 && output_dim > 0, "Embedding '", this->name(),
              "': input_dim and output_dim must be positive, got ", input_dim, " and ", output_dim);
  EAGER_CHECK(IsFloating(dtype), "Embedding '", this->name(),
              "': the table must be float32 or float64, got ", dtype);
}

Embedding::~Embedding() = default;

void Embedding::Build() {
  if (built()) {
    throw FailedPreconditionError(
        StrCat("Embedding '", name(), "': Build called on a layer already built"));
  }
  NameScope scope(NameScope::Current() + name() + "/");
  const Tensor initial = RandomUniform(Shape{input_dim_, output_dim_}, seed_, -0.05, 0.05, dtype_);
  embeddings_ = &AddVariable(TableEdge(), initial, /*trainable=*/true, "embeddings");
}

std::vector<Trackable::Child> Embedding::Children() {
  std::vector<Child> children = Module::Children();
  for (Child& c : children) {
    if (c.object == embeddings_) c.name = TableEdge();
  }
  return children;
}

Tensor Embedding::Call(const Tensor& ids) {
  const bool numeric = IsInteger(ids.dtype()) || IsFloating(ids.dtype());
  EAGER_CHECK(numeric, "Embedding '", name(), "': expected int32 or int64 ids, got ", ids.dtype(),
              " of shape ", ids.shape());
  if (!built()) Build();
  std::optional<NameScope> scope;
  if (Graph::Current() != nullptr) scope.emplace(NameScope::Current() + name() + "/");
  // Keras 3: ids that are not int32/int64 are cast to int32.
  const Tensor index = IsInteger(ids.dtype()) ? ids : Cast(ids, DType::kInt32);
  return Gather(embeddings_->value(), index);
}

std::optional<Tensor> Embedding::ComputeMask(const Tensor& ids) const {
  if (!mask_zero_) return std::nullopt;
  // ids != 0 as ids >= 1: valid ids are never negative (Gather rejects them).
  const Tensor index = IsInteger(ids.dtype()) ? ids : Cast(ids, DType::kInt32);
  const Tensor one =
      index.dtype() == DType::kInt64 ? Tensor::Scalar<int64_t>(1) : Tensor::Scalar<int32_t>(1);
  return GreaterEqual(index, one);
}

Variable& Embedding::embeddings() const {
  if (!built()) {
    throw FailedPreconditionError(StrCat("Embedding '", name(),
                                         "': embeddings do not exist before the layer is built ",
                                         "(call it on ids or call Build first)"));
  }
  return *embeddings_;
}

}  // namespace eager::layers
