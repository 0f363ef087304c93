#include "autodiff/layers/conv.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "ops/array_ops.h"
#include "ops/conv_ops.h"
#include "ops/fused_conv.h"
#include "ops/nn_ops.h"
#include "ops/random_generator.h"
#include "ops/shape_ops.h"
#include "ops/unary_ops.h"
#include "runtime/errors.h"
#include "runtime/graph.h"
#include "runtime/names.h"

namespace eager::layers {
namespace {

// FNV-1a, as Dense's default seed: fixed and portable, so "conv2d_1" draws
// the same kernel on every platform and run.
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
  return fn != nullptr && *fn == &eager::Relu;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string LayerName(const std::string& name, std::string_view default_name) {
  return name.empty() ? UniqueObjectName(default_name) : name;
}

Conv2DConfig From1D(Conv1DConfig c) {
  return {.strides = {1, c.strides},
          .padding = Lower(c.padding) == "causal" ? "valid" : c.padding,
          .dilation_rate = {1, c.dilation_rate},
          .activation = std::move(c.activation),
          .use_bias = c.use_bias,
          .seed = c.seed,
          .name = std::move(c.name)};
}

}  // namespace

Conv2D::Conv2D(int64_t filters, std::array<int64_t, 2> kernel_size, Conv2DConfig config)
    : Conv2D("Conv2D", "conv2d", filters, kernel_size, std::move(config), false) {}

Conv2D::Conv2D(std::string_view class_name, std::string_view default_name, int64_t filters,
               std::array<int64_t, 2> kernel_size, Conv2DConfig config, bool one_d)
    : Layer(LayerName(config.name, default_name)),
      class_name_(class_name),
      filters_(filters),
      kernel_size_(kernel_size),
      config_(std::move(config)),
      one_d_(one_d),
      relu_(IsRelu(config_.activation)),
      seed_(config_.seed ? *config_.seed : SeedFromName(this->name())) {
  const std::string who = StrCat(class_name_, " '", name(), "'");
  EAGER_CHECK(filters > 0, who, ": filters must be positive, got ", filters);
  for (int i = 0; i < 2; ++i) {
    EAGER_CHECK(kernel_size_[i] >= 1 && config_.strides[i] >= 1 && config_.dilation_rate[i] >= 1,
                who, ": kernel_size, strides and dilation_rate must be >= 1, got kernel_size ",
                Shape{kernel_size_[0], kernel_size_[1]}, ", strides ",
                Shape{config_.strides[0], config_.strides[1]}, ", dilation_rate ",
                Shape{config_.dilation_rate[0], config_.dilation_rate[1]});
  }
  const bool strided = config_.strides[0] > 1 || config_.strides[1] > 1;
  const bool dilated = config_.dilation_rate[0] > 1 || config_.dilation_rate[1] > 1;
  EAGER_CHECK(!(strided && dilated), who,
              ": strides > 1 together with dilation_rate > 1 is not supported (as in Keras), got "
              "strides ",
              Shape{config_.strides[0], config_.strides[1]}, " and dilation_rate ",
              Shape{config_.dilation_rate[0], config_.dilation_rate[1]});
  config_.padding = Lower(config_.padding);
  EAGER_CHECK(config_.padding == "valid" || config_.padding == "same", who,
              ": padding must be \"valid\" or \"same\", got \"", config_.padding, "\"");
}

Conv2D::~Conv2D() = default;

void Conv2D::Build(int64_t in_channels, DType dtype) {
  if (built()) {
    throw FailedPreconditionError(StrCat(class_name_, " '", name(),
                                         "': Build called on a layer already built with ",
                                         "in_channels ", kernel_->shape().dim(one_d_ ? 1 : 2)));
  }
  EAGER_CHECK(in_channels > 0, class_name_, " '", name(), "': in_channels must be positive, got ",
              in_channels);
  EAGER_CHECK(IsFloating(dtype), class_name_, " '", name(),
              "': variables must be float32 or float64, got ", dtype);
  NameScope scope(NameScope::Current() + name() + "/");
  const int64_t receptive = kernel_size_[0] * kernel_size_[1];
  const double fan_in = static_cast<double>(receptive * in_channels);
  const double fan_out = static_cast<double>(receptive * filters_);
  const double limit = std::sqrt(6.0 / (fan_in + fan_out));
  const Shape shape = one_d_ ? Shape{kernel_size_[1], in_channels, filters_}
                             : Shape{kernel_size_[0], kernel_size_[1], in_channels, filters_};
  kernel_ =
      &AddVariable(layout_ == KerasLayout::kKeras3 ? "_kernel" : "kernel",
                   RandomUniform(shape, seed_, -limit, limit, dtype), /*trainable=*/true, "kernel");
  if (config_.use_bias) bias_ = &AddVariable("bias", Tensor::Zeros(Shape{filters_}, dtype));
}

std::vector<Trackable::Child> Conv2D::Children() {
  std::vector<Child> children = Module::Children();
  for (Child& c : children) {
    if (c.object == kernel_) c.name = layout_ == KerasLayout::kKeras3 ? "_kernel" : "kernel";
  }
  return children;
}

void Conv2D::CheckInput(const Tensor& x, int rank, std::string_view layout) const {
  EAGER_CHECK(x.rank() == rank, class_name_, " '", name(), "': expected an input of rank ", rank,
              " ", layout, ", got shape ", x.shape());
  EAGER_CHECK(IsFloating(x.dtype()), class_name_, " '", name(),
              "': expected a float32 or float64 input, got ", x.dtype(), " of shape ", x.shape());
  const int64_t channels = x.shape().dim(rank - 1);
  EAGER_CHECK(channels > 0, class_name_, " '", name(),
              "': the input's channel dimension must be known and positive, got shape ", x.shape());
  if (!built()) return;
  const int64_t built_channels = kernel_->shape().dim(one_d_ ? 1 : 2);
  EAGER_CHECK(x.dtype() == kernel_->dtype() && channels == built_channels, class_name_, " '",
              name(), "': built for ", kernel_->dtype(), " inputs with ", built_channels,
              " channels, got ", x.dtype(), " of shape ", x.shape());
}

Tensor Conv2D::Call(const Tensor& x) {
  CheckInput(x, 4, "[batch, height, width, channels]");
  if (!built()) Build(x.shape().dim(3), x.dtype());
  return Apply(x, kernel_->value());
}

Tensor Conv2D::Apply(const Tensor& x, const Tensor& filter) {
  std::optional<NameScope> scope;
  if (Graph::Current() != nullptr) scope.emplace(NameScope::Current() + name() + "/");
  const Conv2DOptions options{
      .strides = {1, config_.strides[0], config_.strides[1], 1},
      .padding = config_.padding == "same" ? "SAME" : "VALID",
      .dilations = {1, config_.dilation_rate[0], config_.dilation_rate[1], 1}};
  try {
    if (bias_ != nullptr && (relu_ || !config_.activation)) {
      return FusedConv2D(x, filter, bias_->value(), relu_, options);
    }
    Tensor y = eager::Conv2D(x, filter, options);
    if (bias_ != nullptr) y = BiasAdd(y, bias_->value());
    return config_.activation ? config_.activation(y) : y;
  } catch (const InvalidArgumentError& e) {
    // The op's message says what does not fit; say which layer it was.
    throw InvalidArgumentError(StrCat(class_name_, " '", name(), "' on input of shape ", x.shape(),
                                      " (as NHWC): ", e.what()));
  }
}

void Conv2D::RequireBuilt(const char* what) const {
  if (!built()) {
    throw FailedPreconditionError(StrCat(class_name_, " '", name(), "': ", what,
                                         " does not exist before the layer is built (call it ",
                                         "on an input or call Build first)"));
  }
}

Variable& Conv2D::kernel() const {
  RequireBuilt("kernel");
  return *kernel_;
}

Variable* Conv2D::bias() const {
  RequireBuilt("bias");
  return bias_;
}

// ---- Conv1D ----

Conv1D::Conv1D(int64_t filters, int64_t kernel_size, Conv1DConfig config)
    : Conv2D("Conv1D", "conv1d", filters, {1, kernel_size}, From1D(config), true),
      causal_(Lower(config.padding) == "causal") {}

Conv1D::~Conv1D() = default;

Tensor Conv1D::Call(const Tensor& x) {
  CheckInput(x, 3, "[batch, steps, channels]");
  if (!built()) Build(x.shape().dim(2), x.dtype());
  const Shape& s = x.shape();
  Tensor in = x;
  if (causal_) {
    // Keras: left-pad the steps by dilation * (kernel_size - 1), then "valid".
    const int64_t pad = config().dilation_rate[1] * (kernel_size()[1] - 1);
    EAGER_CHECK(s.dim(0) >= 0, class_name(), " '", name(),
                "': causal padding needs a known batch size, got shape ", s);
    if (pad > 0) in = Concat({Zeros(Shape{s.dim(0), pad, s.dim(2)}, x.dtype()), x}, 1);
  }
  const int64_t steps = in.shape().dim(1);
  const Tensor& k = kernel().value();
  const Tensor filter = Reshape(k, {1, k.shape().dim(0), k.shape().dim(1), k.shape().dim(2)});
  const Tensor y = Apply(Reshape(in, {s.dim(0) < 0 ? -1 : s.dim(0), 1, steps, s.dim(2)}), filter);
  const Shape& ys = y.shape();
  return Reshape(y, {ys.dim(0) < 0 ? -1 : ys.dim(0), ys.dim(2), ys.dim(3)});
}

}  // namespace eager::layers
