#include "autodiff/layers/regularization.h"

#include <optional>
#include <string>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/random_ops.h"
#include "ops/shape_ops.h"
#include "runtime/graph.h"
#include "runtime/names.h"

namespace eager::layers {
namespace {

std::string LayerName(std::string_view name) {
  return name.empty() ? UniqueObjectName("dropout") : std::string(name);
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

Tensor ScalarOf(double value, DType dtype) {
  if (dtype == DType::kFloat64) return Tensor::Scalar<double>(value);
  return Tensor::Scalar<float>(static_cast<float>(value));
}

}  // namespace

Dropout::Dropout(double rate, std::optional<uint64_t> seed, std::string_view name)
    : Layer(LayerName(name)), rate_(rate), seed_(seed ? *seed : SeedFromName(this->name())) {
  EAGER_CHECK(rate >= 0.0 && rate <= 1.0, "Dropout '", this->name(),
              "': rate must be in [0, 1], got ", rate);
}

Dropout::~Dropout() = default;

void Dropout::set_step(int64_t step) {
  EAGER_CHECK(step >= 0, "Dropout '", name(), "': step must be >= 0, got ", step);
  step_ = step;
}

Tensor Dropout::Call(const Tensor& x) { return x; }

Tensor Dropout::Call(const Tensor& x, bool training) {
  if (!training || rate_ == 0.0) return x;
  EAGER_CHECK(IsFloating(x.dtype()), "Dropout '", name(),
              "': expected a float32 or float64 input, got ", x.dtype(), " of shape ", x.shape());
  if (rate_ == 1.0) return ZerosLike(x);
  // tf.nn.dropout: keep where u >= rate; scale = 1 / (1 - rate), computed in
  // double and rounded to x's dtype as TF's Python does.
  constexpr uint64_t kSeedModulus = 2147483646;
  const auto seed = static_cast<int64_t>(seed_ % kSeedModulus);
  std::optional<NameScope> scope;
  Tensor u;
  if (Graph::Current() != nullptr) {
    // In a graph the noise is a node, so each Session run draws a new mask:
    // TF1's tf.nn.dropout(x, rate, seed=s) in a graph without a graph seed
    // (a stateful RandomUniform with TF's seeds (87654321, s) on Shape(x)),
    // so TF running the graph draws the same masks.
    scope.emplace(NameScope::Current() + name() + "/");
    constexpr int64_t kDefaultGraphSeed = 87654321;
    u = RandomUniformNode(ShapeOf(x), x.dtype(), kDefaultGraphSeed, seed);
  } else {
    // Keras 3's seed pair [seed, step], reduced as its TF backend's _cast_seed
    // reduces it (floormod by int32 max - 1) before the stateless op.
    u = StatelessRandomUniform(x.shape(), seed, step_++ % static_cast<int64_t>(kSeedModulus),
                               x.dtype());
  }
  const Tensor keep = GreaterEqual(u, ScalarOf(rate_, x.dtype()));
  return SelectV2(keep, Mul(x, ScalarOf(1.0 / (1.0 - rate_), x.dtype())), ScalarOf(0.0, x.dtype()));
}

}  // namespace eager::layers
