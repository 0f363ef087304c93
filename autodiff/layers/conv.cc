#include "autodiff/layers/conv.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "ops/array_ops.h"
#include "ops/conv_ops.h"
#include "ops/depthwise_conv.h"
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

bool IsRelu(const eager::Activation& activation) {
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

// Keras's checks of kernel size, strides, dilation and padding; returns the
// padding in lower case.
std::string CheckWindows(const std::string& who, std::array<int64_t, 2> kernel_size,
                         std::array<int64_t, 2> strides, std::array<int64_t, 2> dilation,
                         std::string_view padding) {
  for (int i = 0; i < 2; ++i) {
    EAGER_CHECK(kernel_size[i] >= 1 && strides[i] >= 1 && dilation[i] >= 1, who,
                ": kernel_size, strides and dilation_rate must be >= 1, got kernel_size ",
                Shape{kernel_size[0], kernel_size[1]}, ", strides ", Shape{strides[0], strides[1]},
                ", dilation_rate ", Shape{dilation[0], dilation[1]});
  }
  const bool strided = strides[0] > 1 || strides[1] > 1;
  const bool dilated = dilation[0] > 1 || dilation[1] > 1;
  EAGER_CHECK(!(strided && dilated), who,
              ": strides > 1 together with dilation_rate > 1 is not supported (as in Keras), got "
              "strides ",
              Shape{strides[0], strides[1]}, " and dilation_rate ",
              Shape{dilation[0], dilation[1]});
  std::string lower = Lower(padding);
  EAGER_CHECK(lower == "valid" || lower == "same", who,
              ": padding must be \"valid\" or \"same\", got \"", padding, "\"");
  return lower;
}

Conv2DConfig From1D(const Conv1DConfig& c) {
  return {.strides = {1, c.strides},
          .padding = Lower(c.padding) == "causal" ? "valid" : c.padding,
          .dilation_rate = {1, c.dilation_rate},
          .activation = c.activation,
          .use_bias = c.use_bias,
          .seed = c.seed,
          .name = c.name};
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
  config_.padding =
      CheckWindows(who, kernel_size_, config_.strides, config_.dilation_rate, config_.padding);
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

Variable& Conv2D::kernel() const {
  RequireBuilt(built(), class_name_, "kernel");
  return *kernel_;
}

Variable* Conv2D::bias() const {
  RequireBuilt(built(), class_name_, "bias");
  return bias_;
}

// ---- Conv1D ----

Conv1D::Conv1D(int64_t filters, int64_t kernel_size, const Conv1DConfig& config)
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
    if (pad > 0) {
      // In a graph with an unknown batch the zeros take it from Shape(x).
      const Tensor zeros =
          s.dim(0) >= 0
              ? Zeros(Shape{s.dim(0), pad, s.dim(2)}, x.dtype())
              : eager::Reshape(
                    BroadcastTo(Zeros(Shape{}, x.dtype()),
                                Concat({Slice(ShapeOf(x), {0}, {1}),
                                        Tensor::Vector<int32_t>({static_cast<int32_t>(pad),
                                                                 static_cast<int32_t>(s.dim(2))})},
                                       0)),
                    {-1, pad, s.dim(2)});  // static [?, pad, channels]
      in = Concat({zeros, x}, 1);
    }
  }
  const int64_t steps =
      s.dim(1) < 0 ? -1
                   : s.dim(1) + (causal_ ? config().dilation_rate[1] * (kernel_size()[1] - 1) : 0);
  const Tensor& k = kernel().value();
  const Tensor filter =
      eager::Reshape(k, {1, k.shape().dim(0), k.shape().dim(1), k.shape().dim(2)});
  const Tensor y =
      Apply(eager::Reshape(in, {s.dim(0) < 0 ? -1 : s.dim(0), 1, steps, s.dim(2)}), filter);
  const Shape& ys = y.shape();
  return eager::Reshape(y, {ys.dim(0) < 0 ? -1 : ys.dim(0), ys.dim(2), ys.dim(3)});
}

// ---- DepthwiseConv2D ----

DepthwiseConv2D::DepthwiseConv2D(std::array<int64_t, 2> kernel_size, DepthwiseConv2DConfig config)
    : Layer(LayerName(config.name, "depthwise_conv2d")),
      kernel_size_(kernel_size),
      config_(std::move(config)),
      seed_(config_.seed ? *config_.seed : SeedFromName(this->name())) {
  const std::string who = StrCat("DepthwiseConv2D '", name(), "'");
  EAGER_CHECK(config_.depth_multiplier > 0, who, ": depth_multiplier must be positive, got ",
              config_.depth_multiplier);
  config_.padding =
      CheckWindows(who, kernel_size_, config_.strides, config_.dilation_rate, config_.padding);
}

DepthwiseConv2D::~DepthwiseConv2D() = default;

void DepthwiseConv2D::Build(int64_t in_channels, DType dtype) {
  if (built()) {
    throw FailedPreconditionError(StrCat("DepthwiseConv2D '", name(),
                                         "': Build called on a layer already built with ",
                                         "in_channels ", kernel_->shape().dim(2)));
  }
  EAGER_CHECK(in_channels > 0, "DepthwiseConv2D '", name(), "': in_channels must be positive, got ",
              in_channels);
  EAGER_CHECK(IsFloating(dtype), "DepthwiseConv2D '", name(),
              "': variables must be float32 or float64, got ", dtype);
  NameScope scope(NameScope::Current() + name() + "/");
  const int64_t m = config_.depth_multiplier;
  const int64_t receptive = kernel_size_[0] * kernel_size_[1];
  const double limit =
      std::sqrt(6.0 / static_cast<double>(receptive * in_channels + receptive * m));
  kernel_ = &AddVariable(layout_ == KerasLayout::kKeras3 ? "kernel" : "depthwise_kernel",
                         RandomUniform(Shape{kernel_size_[0], kernel_size_[1], in_channels, m},
                                       seed_, -limit, limit, dtype),
                         /*trainable=*/true, "depthwise_kernel");
  if (config_.use_bias) {
    bias_ = &AddVariable("bias", Tensor::Zeros(Shape{in_channels * m}, dtype));
  }
}

std::vector<Trackable::Child> DepthwiseConv2D::Children() {
  std::vector<Child> children = Module::Children();
  for (Child& c : children) {
    if (c.object == kernel_)
      c.name = layout_ == KerasLayout::kKeras3 ? "kernel" : "depthwise_kernel";
  }
  return children;
}

Tensor DepthwiseConv2D::Call(const Tensor& x) {
  EAGER_CHECK(x.rank() == 4, "DepthwiseConv2D '", name(),
              "': expected an input of rank 4 [batch, height, width, channels], got shape ",
              x.shape());
  EAGER_CHECK(IsFloating(x.dtype()), "DepthwiseConv2D '", name(),
              "': expected a float32 or float64 input, got ", x.dtype(), " of shape ", x.shape());
  const int64_t channels = x.shape().dim(3);
  EAGER_CHECK(channels > 0, "DepthwiseConv2D '", name(),
              "': the input's channel dimension must be known and positive, got shape ", x.shape());
  if (!built()) Build(channels, x.dtype());
  EAGER_CHECK(x.dtype() == kernel_->dtype() && channels == kernel_->shape().dim(2),
              "DepthwiseConv2D '", name(), "': built for ", kernel_->dtype(), " inputs with ",
              kernel_->shape().dim(2), " channels, got ", x.dtype(), " of shape ", x.shape());
  std::optional<NameScope> scope;
  if (Graph::Current() != nullptr) scope.emplace(NameScope::Current() + name() + "/");
  const Conv2DOptions options{
      .strides = {1, config_.strides[0], config_.strides[1], 1},
      .padding = config_.padding == "same" ? "SAME" : "VALID",
      .dilations = {1, config_.dilation_rate[0], config_.dilation_rate[1], 1}};
  Tensor y;
  try {
    y = DepthwiseConv2dNative(x, kernel_->value(), options);
  } catch (const InvalidArgumentError& e) {
    throw InvalidArgumentError(StrCat("DepthwiseConv2D '", name(), "' on input of shape ",
                                      x.shape(), " (as NHWC): ", e.what()));
  }
  if (bias_ != nullptr) y = BiasAdd(y, bias_->value());
  return config_.activation ? config_.activation(y) : y;
}

Variable& DepthwiseConv2D::depthwise_kernel() const {
  RequireBuilt(built(), "DepthwiseConv2D", "depthwise_kernel");
  return *kernel_;
}

Variable* DepthwiseConv2D::bias() const {
  RequireBuilt(built(), "DepthwiseConv2D", "bias");
  return bias_;
}

// ---- SeparableConv2D ----

SeparableConv2D::SeparableConv2D(int64_t filters, std::array<int64_t, 2> kernel_size,
                                 SeparableConv2DConfig config)
    : Layer(LayerName(config.name, "separable_conv2d")),
      filters_(filters),
      kernel_size_(kernel_size),
      config_(std::move(config)),
      relu_(IsRelu(config_.activation)),
      seed_(config_.seed ? *config_.seed : SeedFromName(this->name())) {
  const std::string who = StrCat("SeparableConv2D '", name(), "'");
  EAGER_CHECK(filters > 0, who, ": filters must be positive, got ", filters);
  EAGER_CHECK(config_.depth_multiplier > 0, who, ": depth_multiplier must be positive, got ",
              config_.depth_multiplier);
  config_.padding =
      CheckWindows(who, kernel_size_, config_.strides, config_.dilation_rate, config_.padding);
}

SeparableConv2D::~SeparableConv2D() = default;

void SeparableConv2D::Build(int64_t in_channels, DType dtype) {
  if (built()) {
    throw FailedPreconditionError(StrCat("SeparableConv2D '", name(),
                                         "': Build called on a layer already built with ",
                                         "in_channels ", depthwise_->shape().dim(2)));
  }
  EAGER_CHECK(in_channels > 0, "SeparableConv2D '", name(), "': in_channels must be positive, got ",
              in_channels);
  EAGER_CHECK(IsFloating(dtype), "SeparableConv2D '", name(),
              "': variables must be float32 or float64, got ", dtype);
  NameScope scope(NameScope::Current() + name() + "/");
  const int64_t m = config_.depth_multiplier;
  const int64_t receptive = kernel_size_[0] * kernel_size_[1];
  const double depthwise_limit =
      std::sqrt(6.0 / static_cast<double>(receptive * in_channels + receptive * m));
  const double pointwise_limit = std::sqrt(6.0 / static_cast<double>(in_channels * m + filters_));
  depthwise_ = &AddVariable("depthwise_kernel",
                            RandomUniform(Shape{kernel_size_[0], kernel_size_[1], in_channels, m},
                                          seed_, -depthwise_limit, depthwise_limit, dtype));
  pointwise_ = &AddVariable("pointwise_kernel",
                            RandomUniform(Shape{1, 1, in_channels * m, filters_}, seed_ + 1,
                                          -pointwise_limit, pointwise_limit, dtype));
  if (config_.use_bias) bias_ = &AddVariable("bias", Tensor::Zeros(Shape{filters_}, dtype));
}

Tensor SeparableConv2D::Call(const Tensor& x) {
  EAGER_CHECK(x.rank() == 4, "SeparableConv2D '", name(),
              "': expected an input of rank 4 [batch, height, width, channels], got shape ",
              x.shape());
  EAGER_CHECK(IsFloating(x.dtype()), "SeparableConv2D '", name(),
              "': expected a float32 or float64 input, got ", x.dtype(), " of shape ", x.shape());
  const int64_t channels = x.shape().dim(3);
  EAGER_CHECK(channels > 0, "SeparableConv2D '", name(),
              "': the input's channel dimension must be known and positive, got shape ", x.shape());
  if (!built()) Build(channels, x.dtype());
  EAGER_CHECK(x.dtype() == depthwise_->dtype() && channels == depthwise_->shape().dim(2),
              "SeparableConv2D '", name(), "': built for ", depthwise_->dtype(), " inputs with ",
              depthwise_->shape().dim(2), " channels, got ", x.dtype(), " of shape ", x.shape());
  std::optional<NameScope> scope;
  if (Graph::Current() != nullptr) scope.emplace(NameScope::Current() + name() + "/");
  const Conv2DOptions depthwise{
      .strides = {1, config_.strides[0], config_.strides[1], 1},
      .padding = config_.padding == "same" ? "SAME" : "VALID",
      .dilations = {1, config_.dilation_rate[0], config_.dilation_rate[1], 1}};
  Tensor y;
  try {
    y = DepthwiseConv2dNative(x, depthwise_->value(), depthwise);
  } catch (const InvalidArgumentError& e) {
    throw InvalidArgumentError(StrCat("SeparableConv2D '", name(), "' on input of shape ",
                                      x.shape(), " (as NHWC): ", e.what()));
  }
  if (bias_ != nullptr && (relu_ || !config_.activation)) {
    return FusedConv2D(y, pointwise_->value(), bias_->value(), relu_);
  }
  y = eager::Conv2D(y, pointwise_->value());
  if (bias_ != nullptr) y = BiasAdd(y, bias_->value());
  return config_.activation ? config_.activation(y) : y;
}

Variable& SeparableConv2D::depthwise_kernel() const {
  RequireBuilt(built(), "SeparableConv2D", "depthwise_kernel");
  return *depthwise_;
}

Variable& SeparableConv2D::pointwise_kernel() const {
  RequireBuilt(built(), "SeparableConv2D", "pointwise_kernel");
  return *pointwise_;
}

Variable* SeparableConv2D::bias() const {
  RequireBuilt(built(), "SeparableConv2D", "bias");
  return bias_;
}

// ---- Conv2DTranspose ----

Conv2DTranspose::Conv2DTranspose(int64_t filters, std::array<int64_t, 2> kernel_size,
                                 Conv2DConfig config)
    : Layer(LayerName(config.name, "conv2d_transpose")),
      filters_(filters),
      kernel_size_(kernel_size),
      config_(std::move(config)),
      seed_(config_.seed ? *config_.seed : SeedFromName(this->name())) {
  const std::string who = StrCat("Conv2DTranspose '", name(), "'");
  EAGER_CHECK(filters > 0, who, ": filters must be positive, got ", filters);
  config_.padding =
      CheckWindows(who, kernel_size_, config_.strides, config_.dilation_rate, config_.padding);
}

Conv2DTranspose::~Conv2DTranspose() = default;

void Conv2DTranspose::Build(int64_t in_channels, DType dtype) {
  if (built()) {
    throw FailedPreconditionError(StrCat("Conv2DTranspose '", name(),
                                         "': Build called on a layer already built with ",
                                         "in_channels ", kernel_->shape().dim(3)));
  }
  EAGER_CHECK(in_channels > 0, "Conv2DTranspose '", name(), "': in_channels must be positive, got ",
              in_channels);
  EAGER_CHECK(IsFloating(dtype), "Conv2DTranspose '", name(),
              "': variables must be float32 or float64, got ", dtype);
  NameScope scope(NameScope::Current() + name() + "/");
  const int64_t receptive = kernel_size_[0] * kernel_size_[1];
  const double limit =
      std::sqrt(6.0 / static_cast<double>(receptive * filters_ + receptive * in_channels));
  kernel_ = &AddVariable(
      "kernel", RandomUniform(Shape{kernel_size_[0], kernel_size_[1], filters_, in_channels}, seed_,
                              -limit, limit, dtype));
  if (config_.use_bias) bias_ = &AddVariable("bias", Tensor::Zeros(Shape{filters_}, dtype));
}

Tensor Conv2DTranspose::Call(const Tensor& x) {
  EAGER_CHECK(x.rank() == 4, "Conv2DTranspose '", name(),
              "': expected an input of rank 4 [batch, height, width, channels], got shape ",
              x.shape());
  EAGER_CHECK(IsFloating(x.dtype()), "Conv2DTranspose '", name(),
              "': expected a float32 or float64 input, got ", x.dtype(), " of shape ", x.shape());
  const Shape& s = x.shape();
  EAGER_CHECK(s.dim(1) >= 0 && s.dim(2) >= 0 && s.dim(3) > 0, "Conv2DTranspose '", name(),
              "': the input's height, width and channels must be known, got shape ", s);
  if (!built()) Build(s.dim(3), x.dtype());
  EAGER_CHECK(x.dtype() == kernel_->dtype() && s.dim(3) == kernel_->shape().dim(3),
              "Conv2DTranspose '", name(), "': built for ", kernel_->dtype(), " inputs with ",
              kernel_->shape().dim(3), " channels, got ", x.dtype(), " of shape ", s);
  std::optional<NameScope> scope;
  if (Graph::Current() != nullptr) scope.emplace(NameScope::Current() + name() + "/");
  // Keras's deconv_output_length without output_padding.
  int32_t out[2];
  for (int i = 0; i < 2; ++i) {
    const int64_t k = (kernel_size_[i] - 1) * config_.dilation_rate[i] + 1;
    const int64_t stride = config_.strides[i];
    const int64_t in = s.dim(i + 1);
    out[i] = static_cast<int32_t>(
        config_.padding == "same" ? in * stride : in * stride + std::max<int64_t>(k - stride, 0));
  }
  const Tensor spatial = Tensor::Vector<int32_t>({out[0], out[1], static_cast<int32_t>(filters_)});
  const Tensor sizes =
      s.dim(0) >= 0 ? Tensor::Vector<int32_t>({static_cast<int32_t>(s.dim(0)), out[0], out[1],
                                               static_cast<int32_t>(filters_)})
                    : Concat({Slice(ShapeOf(x), {0}, {1}), spatial}, 0);  // a graph's unknown batch
  const Conv2DOptions options{
      .strides = {1, config_.strides[0], config_.strides[1], 1},
      .padding = config_.padding == "same" ? "SAME" : "VALID",
      .dilations = {1, config_.dilation_rate[0], config_.dilation_rate[1], 1}};
  Tensor y;
  try {
    y = Conv2DBackpropInput(sizes, kernel_->value(), x, options);
  } catch (const InvalidArgumentError& e) {
    throw InvalidArgumentError(
        StrCat("Conv2DTranspose '", name(), "' on input of shape ", s, " (as NHWC): ", e.what()));
  }
  if (bias_ != nullptr) y = BiasAdd(y, bias_->value());
  return config_.activation ? config_.activation(y) : y;
}

Variable& Conv2DTranspose::kernel() const {
  RequireBuilt(built(), "Conv2DTranspose", "kernel");
  return *kernel_;
}

Variable* Conv2DTranspose::bias() const {
  RequireBuilt(built(), "Conv2DTranspose", "bias");
  return bias_;
}

}  // namespace eager::layers
