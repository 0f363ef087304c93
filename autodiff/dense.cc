#include "autodiff/dense.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/fused_matmul.h"
#include "ops/matmul.h"
#include "ops/random_generator.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/names.h"

namespace eager {
namespace {

std::string LayerName(std::string_view name) {
  // Keras: an explicit name is used as given; otherwise snake_case class
  // name made unique per class ("dense", "dense_1").
  return name.empty() ? UniqueObjectName("dense") : std::string(name);
}

// FNV-1a: a fixed, portable hash, so the default seed of "dense_1" is the
// same on every platform and run (std::hash is neither).
uint64_t SeedFromName(std::string_view name) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

bool IsRelu(const Activation& activation) {
  using Fn = Tensor (*)(const Tensor&);
  const Fn* fn = activation.target<Fn>();
  return fn != nullptr && *fn == &Relu;
}

}  // namespace

Dense::Dense(int64_t units, Activation activation, bool use_bias, std::optional<uint64_t> seed,
             std::string_view name)
    : Layer(LayerName(name)),
      units_(units),
      activation_(std::move(activation)),
      use_bias_(use_bias),
      relu_(IsRelu(activation_)),
      seed_(seed ? *seed : SeedFromName(this->name())) {
  EAGER_CHECK(units > 0, "Dense '", this->name(), "': units must be positive, got ", units);
}

Dense::~Dense() = default;

void Dense::Build(int64_t input_dim, DType dtype) {
  if (built()) {
    throw FailedPreconditionError(StrCat("Dense '", name(), "': Build called on a layer already",
                                         " built with input_dim ", kernel_->shape().dim(0)));
  }
  EAGER_CHECK(input_dim > 0, "Dense '", name(), "': input_dim must be positive, got ", input_dim);
  EAGER_CHECK(IsFloating(dtype), "Dense '", name(), "': variables must be float32 or float64, got ",
              dtype);
  // The layer's own scope, entered exactly (not uniquified again): the layer
  // name is already unique among Dense layers, as Keras's name scopes are.
  NameScope scope(NameScope::Current() + name() + "/");
  const double limit = std::sqrt(6.0 / static_cast<double>(input_dim + units_));
  Tensor initial_kernel = RandomUniform(Shape{input_dim, units_}, seed_, -limit, limit, dtype);
  kernel_ = &AddVariable(layout_ == KerasLayout::kKeras3 ? "_kernel" : "kernel", initial_kernel,
                         /*trainable=*/true, "kernel");
  if (use_bias_) bias_ = &AddVariable("bias", Tensor::Zeros(Shape{units_}, dtype));
}

std::vector<Trackable::Child> Dense::Children() {
  std::vector<Child> children = Module::Children();
  for (Child& c : children) {
    if (c.object == kernel_) c.name = layout_ == KerasLayout::kKeras3 ? "_kernel" : "kernel";
  }
  return children;
}

Tensor Dense::Call(const Tensor& x) {
  EAGER_CHECK(x.rank() >= 2, "Dense '", name(), "': expected an input of rank 2 or more [..., ",
              "input_dim], got shape ", x.shape());
  const int64_t input_dim = x.shape().dim(x.rank() - 1);
  if (!built()) Build(input_dim, x.dtype());
  EAGER_CHECK(x.dtype() == kernel_->dtype() && input_dim == kernel_->shape().dim(0), "Dense '",
              name(), "': built for ", kernel_->dtype(), " inputs of shape [..., ",
              kernel_->shape().dim(0), "], got ", x.dtype(), " of shape ", x.shape());
  if (x.rank() == 2) return Apply(x);
  // Keras (core Dense on rank > 2): over the last axis, as tensordot does it:
  // [..., input_dim] -> [n, input_dim] -> [n, units] -> [..., units].
  std::vector<int64_t> out = x.shape().ToVector();
  out.back() = units_;
  return Reshape(Apply(Reshape(x, {-1, input_dim})), out);
}

Tensor Dense::Apply(const Tensor& x) {
  // In a graph the layer's nodes go under its scope, as Keras's __call__
  // ("dense/MatMul"); eager skips the cost of opening a scope.
  std::optional<NameScope> scope;
  if (Graph::Current() != nullptr) scope.emplace(NameScope::Current() + name() + "/");
  if (bias_ != nullptr && (relu_ || !activation_)) {
    // Eagerly one op instead of MatMul, AddV2 and Relu, with the same bits
    // and gradients; in a graph, those three nodes (ops/fused_matmul.h).
    return FusedMatMul(x, kernel_->value(), bias_->value(), relu_);
  }
  Tensor y = MatMul(x, kernel_->value());
  if (bias_ != nullptr) y = Add(y, bias_->value());
  return activation_ ? activation_(y) : y;
}

Variable& Dense::kernel() const {
  RequireBuilt(built(), "Dense", "kernel");
  return *kernel_;
}

Variable* Dense::bias() const {
  RequireBuilt(built(), "Dense", "bias");
  return bias_;
}

}  // namespace eager
