#include "autodiff/layers/normalization.h"

#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/fused_normalization.h"
#include "ops/graph_ops.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/names.h"

namespace eager::layers {
namespace {

std::string LayerName(std::string_view name, std::string_view base) {
  return name.empty() ? UniqueObjectName(base) : std::string(name);
}

// A scalar of `dtype` holding `value` rounded once, as Python's float
// becomes a tensor of the variable's dtype in Keras's arithmetic.
Tensor ScalarOf(double value, DType dtype) {
  if (dtype == DType::kFloat64) return Tensor::Scalar<double>(value);
  return Tensor::Scalar<float>(static_cast<float>(value));
}

// [n] filled with `value`, a plain value (no op, so no graph node at build).
Tensor Filled(int64_t n, double value, DType dtype) {
  if (dtype == DType::kFloat64) return Tensor::FromVector<double>(std::vector<double>(n, value));
  return Tensor::FromVector<float>(std::vector<float>(n, static_cast<float>(value)));
}

// tf.nn.batch_normalization: x * inv + (offset - mean * inv), inv =
// rsqrt(variance + epsilon) * scale; gamma/beta may be null (scale/center off).
Tensor Normalize(const Tensor& x, const Tensor& mean, const Tensor& variance, const Variable* gamma,
                 const Variable* beta, double epsilon) {
  Tensor inv = Rsqrt(Add(variance, ScalarOf(epsilon, x.dtype())));
  if (gamma != nullptr) inv = Mul(inv, gamma->value());
  const Tensor shift = beta != nullptr ? Sub(beta->value(), Mul(mean, inv)) : Neg(Mul(mean, inv));
  // Per channel (BatchNormalization's inv and shift are [channels]),
  // Add(Mul(x, inv), shift) in one pass (ops/fused_normalization.h); per
  // position (LayerNormalization's [..., 1]) the broadcasting ops.
  if (inv.rank() == 1 && shift.rank() == 1 && x.rank() >= 1 &&
      inv.shape().dim(0) == x.shape().dim(x.rank() - 1)) {
    return ChannelScaleShift(x, inv, shift);
  }
  return Add(Mul(x, inv), shift);
}

void CheckInput(const Tensor& x, int min_rank, const std::string& layer, const char* kind) {
  EAGER_CHECK(x.rank() >= min_rank, kind, " '", layer, "': expected an input of rank ", min_rank,
              " or more [..., channels], got shape ", x.shape());
  EAGER_CHECK(IsFloating(x.dtype()), kind, " '", layer,
              "': expected a float32 or float64 input, got ", x.dtype());
}

void CheckBuildArgs(int64_t channels, DType dtype, const std::string& layer, const char* kind) {
  EAGER_CHECK(channels > 0, kind, " '", layer, "': channels must be positive, got ", channels);
  EAGER_CHECK(IsFloating(dtype), kind, " '", layer, "': variables must be float32 or float64, got ",
              dtype);
}

}  // namespace

// ---------------------------------------------------------------------------
// BatchNormalization

BatchNormalization::BatchNormalization(double momentum, double epsilon, bool center, bool scale,
                                       std::string_view name)
    : Layer(LayerName(name, "batch_normalization")),
      momentum_(momentum),
      epsilon_(epsilon),
      center_(center),
      scale_(scale) {
  EAGER_CHECK(momentum >= 0.0 && momentum <= 1.0, "BatchNormalization '", this->name(),
              "': momentum must be in [0, 1], got ", momentum);
  EAGER_CHECK(epsilon > 0.0, "BatchNormalization '", this->name(),
              "': epsilon must be positive, got ", epsilon);
}

BatchNormalization::~BatchNormalization() = default;

void BatchNormalization::Build(int64_t channels, DType dtype) {
  if (built()) {
    throw FailedPreconditionError(StrCat("BatchNormalization '", name(),
                                         "': Build called on a layer already built with ",
                                         moving_mean_->shape().dim(0), " channels"));
  }
  CheckBuildArgs(channels, dtype, name(), "BatchNormalization");
  NameScope scope(NameScope::Current() + name() + "/");
  // Keras's order: gamma, beta, moving_mean, moving_variance.
  if (scale_) gamma_ = &AddVariable("gamma", Filled(channels, 1.0, dtype));
  if (center_) beta_ = &AddVariable("beta", Filled(channels, 0.0, dtype));
  moving_mean_ = &AddVariable("moving_mean", Filled(channels, 0.0, dtype), /*trainable=*/false);
  moving_variance_ =
      &AddVariable("moving_variance", Filled(channels, 1.0, dtype), /*trainable=*/false);
}

Tensor BatchNormalization::Call(const Tensor& x) { return Call(x, /*training=*/false); }

Tensor BatchNormalization::Call(const Tensor& x, bool training) {
  return CallMasked(x, std::nullopt, training);
}

Tensor BatchNormalization::CallMasked(const Tensor& x, const std::optional<Tensor>& mask,
                                      bool training) {
  CheckInput(x, 2, name(), "BatchNormalization");
  const int64_t channels = x.shape().dim(x.rank() - 1);
  if (!built()) Build(channels, x.dtype());
  EAGER_CHECK(x.dtype() == moving_mean_->dtype() && channels == moving_mean_->shape().dim(0),
              "BatchNormalization '", name(), "': built for ", moving_mean_->dtype(),
              " inputs of shape [..., ", moving_mean_->shape().dim(0), "], got ", x.dtype(),
              " of shape ", x.shape());
  if (mask) {
    const Shape& m = mask->shape();
    bool fits = m.rank() == x.rank() - 1;
    for (int i = 0; fits && i < m.rank(); ++i) fits = m.dim(i) == x.shape().dim(i);
    EAGER_CHECK(fits, "BatchNormalization '", name(), "': expected a mask of shape ", x.shape(),
                " without its last axis, got ", m);
  }
  std::optional<NameScope> scope;
  if (Graph::Current() != nullptr) scope.emplace(NameScope::Current() + name() + "/");
  if (!training) {
    return Normalize(x, moving_mean_->value(), moving_variance_->value(), gamma_, beta_, epsilon_);
  }
  return TrainingCall(x, mask);
}

Tensor BatchNormalization::TrainingCall(const Tensor& x, const std::optional<Tensor>& mask) {
  std::vector<int64_t> axes(x.rank() - 1);
  std::iota(axes.begin(), axes.end(), 0);
  Tensor mean, variance;
  if (!mask && Graph::Current() == nullptr && x.dtype() == DType::kFloat32) {
    // The same moments in two fused passes (ops/fused_normalization.h).
    const Tensor moments = BatchMoments(x);
    mean = StridedSlice(moments, {0, 0}, {1, 0}, {1, 1}, {.begin = 2, .end = 2, .shrink_axis = 1});
    variance =
        StridedSlice(moments, {1, 0}, {2, 0}, {1, 1}, {.begin = 2, .end = 2, .shrink_axis = 1});
  } else if (!mask) {
    // tf.nn.moments: the variance about the stopped mean (the same gradient,
    // since d variance / d mean is zero at the mean).
    mean = ReduceMean(x, axes);
    variance = ReduceMean(SquaredDifference(x, StopGradient(mean)), axes);
  } else {
    // Keras 3's _moments with a mask: sums over the valid positions, over
    // their count plus Keras's epsilon (1e-7).
    const Tensor valid = BroadcastTo(ExpandDims(Cast(*mask, DType::kBool), -1), x.shape());
    const Tensor zero = ZerosLike(x);
    const Tensor count = Add(ReduceSum(Cast(valid, x.dtype()), axes), ScalarOf(1e-7, x.dtype()));
    mean = Div(ReduceSum(SelectV2(valid, x, zero), axes), count);
    const Tensor difference = SelectV2(valid, Sub(x, mean), zero);
    variance = Div(ReduceSum(Square(difference), axes), count);
  }
  // Keras: moving * momentum + batch * (1 - momentum), (1 - momentum) in
  // Python's double, each rounded to the variable's dtype.
  const Tensor m = ScalarOf(momentum_, x.dtype());
  const Tensor one_minus_m = ScalarOf(1.0 - momentum_, x.dtype());
  const Tensor new_mean = Add(Mul(moving_mean_->value(), m), Mul(StopGradient(mean), one_minus_m));
  const Tensor new_variance =
      Add(Mul(moving_variance_->value(), m), Mul(StopGradient(variance), one_minus_m));
  if (Graph* graph = Graph::Current()) {
    // TF1's way: the updates are Assign nodes in UPDATE_OPS, which the
    // training step runs beside its train op.
    for (auto [variable, value] :
         {std::pair{moving_mean_, new_mean}, {moving_variance_, new_variance}}) {
      graph->AddToCollection(Graph::kUpdateOps, OperationOf(Assign(*variable, value)).name());
    }
  } else {
    moving_mean_->Assign(new_mean);
    moving_variance_->Assign(new_variance);
  }
  return Normalize(x, mean, variance, gamma_, beta_, epsilon_);
}

Variable* BatchNormalization::gamma() const {
  RequireBuilt(built(), "BatchNormalization", "gamma");
  return gamma_;
}

Variable* BatchNormalization::beta() const {
  RequireBuilt(built(), "BatchNormalization", "beta");
  return beta_;
}

Variable& BatchNormalization::moving_mean() const {
  RequireBuilt(built(), "BatchNormalization", "moving_mean");
  return *moving_mean_;
}

Variable& BatchNormalization::moving_variance() const {
  RequireBuilt(built(), "BatchNormalization", "moving_variance");
  return *moving_variance_;
}

// ---------------------------------------------------------------------------
// LayerNormalization

LayerNormalization::LayerNormalization(double epsilon, bool center, bool scale,
                                       std::string_view name)
    : Layer(LayerName(name, "layer_normalization")),
      epsilon_(epsilon),
      center_(center),
      scale_(scale) {
  EAGER_CHECK(epsilon > 0.0, "LayerNormalization '", this->name(),
              "': epsilon must be positive, got ", epsilon);
}

LayerNormalization::~LayerNormalization() = default;

void LayerNormalization::Build(int64_t channels, DType dtype) {
  if (built()) {
    throw FailedPreconditionError(StrCat("LayerNormalization '", name(),
                                         "': Build called on a layer already built with ",
                                         channels_, " channels"));
  }
  CheckBuildArgs(channels, dtype, name(), "LayerNormalization");
  NameScope scope(NameScope::Current() + name() + "/");
  if (scale_) gamma_ = &AddVariable("gamma", Filled(channels, 1.0, dtype));
  if (center_) beta_ = &AddVariable("beta", Filled(channels, 0.0, dtype));
  channels_ = channels;
  dtype_ = dtype;
  built_ = true;
}

Tensor LayerNormalization::Call(const Tensor& x) {
  CheckInput(x, 1, name(), "LayerNormalization");
  const int64_t channels = x.shape().dim(x.rank() - 1);
  if (!built()) Build(channels, x.dtype());
  EAGER_CHECK(x.dtype() == dtype_ && channels == channels_, "LayerNormalization '", name(),
              "': built for ", dtype_, " inputs of shape [..., ", channels_, "], got ", x.dtype(),
              " of shape ", x.shape());
  std::optional<NameScope> scope;
  if (Graph::Current() != nullptr) scope.emplace(NameScope::Current() + name() + "/");
  const Tensor mean = ReduceMean(x, {-1}, /*keepdims=*/true);
  const Tensor variance = ReduceMean(SquaredDifference(x, StopGradient(mean)), {-1}, true);
  return Normalize(x, mean, variance, gamma_, beta_, epsilon_);
}

Variable* LayerNormalization::gamma() const {
  RequireBuilt(built(), "LayerNormalization", "gamma");
  return gamma_;
}

Variable* LayerNormalization::beta() const {
  RequireBuilt(built(), "LayerNormalization", "beta");
  return beta_;
}

}  // namespace eager::layers
