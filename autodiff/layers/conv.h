#pragma once

// Convolution layers: keras.layers.Conv2D, Conv1D, DepthwiseConv2D,
// SeparableConv2D and Conv2DTranspose, channels_last.
//
//   eager::layers::Conv2D conv(32, {3, 3}, {.padding = "same", .activation = eager::Relu});
//   eager::Tensor y = conv(images);   // [batch, h, w, c] -> [batch, h, w, 32]; builds on this call
//
// The layers live in eager::layers (as keras.layers), since eager::Conv2D is
// the op (ops/conv_ops.h) they run on.
//
// Lazy build: on the first call (or Build()) the layer creates its kernel
// [kernel_h, kernel_w, in_channels, filters] (Conv1D: [kernel_size,
// in_channels, filters]) and its bias [filters], in the input's dtype
// (float32 or float64). Initialisers as Keras's defaults: kernel
// glorot-uniform, uniform in [-limit, limit) with limit = sqrt(6 / (fan_in +
// fan_out)), fan_in = receptive field * in_channels, fan_out = receptive
// field * filters; bias zeros. The kernel is drawn from a seeded generator:
// `seed` if given, else one derived from the layer's name (as Dense), so a
// program builds the same weights on every run.
//
// Names follow Keras: an unnamed Conv2D is "conv2d", the next "conv2d_1",
// ... (Conv1D: "conv1d"); variables are "<name>/kernel:0" and
// "<name>/bias:0". Checkpoint edges by Keras layout (SetKerasLayout,
// runtime/trackable.h): "kernel" and "bias", or "_kernel" and "bias" in
// kKeras3 (Keras 3's BaseConv keeps its kernel as `_kernel`, as TF 2.21's
// tf.train.Checkpoint(layer=keras.layers.Conv2D(...)) shows).
//
// Padding "valid" or "same" (any case), with TF's window rules
// (ops/conv_ops.h); Conv1D also takes "causal" (left-padded by
// dilation * (kernel_size - 1), so output t sees inputs <= t). Strides and
// dilation rates are >= 1 and, as Keras requires, not both > 1 on one layer.
//
// In eager mode a layer with a bias and no activation or eager::Relu runs as
// one FusedConv2D op (ops/fused_conv.h); in a graph it adds TF's Conv2D,
// BiasAdd and Relu nodes under the layer's name scope.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autodiff/dense.h"  // Activation
#include "autodiff/layer.h"

namespace eager::layers {

// Everything of Keras's Conv2D arguments but filters and kernel_size.
struct Conv2DConfig {
  std::array<int64_t, 2> strides = {1, 1};
  std::string padding = "valid";  // or "same"
  std::array<int64_t, 2> dilation_rate = {1, 1};
  eager::Activation activation = nullptr;
  bool use_bias = true;
  std::optional<uint64_t> seed = std::nullopt;  // default: derived from the name
  std::string name = "";                        // default: "conv2d", "conv2d_1", ...
};

class Conv2D : public Layer {
 public:
  // Throws InvalidArgumentError (naming the layer) for filters <= 0, a
  // kernel size, stride or dilation < 1, strides and dilation both > 1, or a
  // padding other than valid/same.
  Conv2D(int64_t filters, std::array<int64_t, 2> kernel_size, Conv2DConfig config = {});
  ~Conv2D() override;

  // x: [batch, height, width, channels] float32/float64. Builds on the first
  // call. Throws InvalidArgumentError naming the layer and the shape for
  // another rank, a non-float dtype, channels or dtype differing from the
  // built ones, or an image smaller than a "valid" window.
  Tensor Call(const Tensor& x) override;

  // Creates the variables now. Throws FailedPreconditionError when already
  // built, InvalidArgumentError for in_channels <= 0 or a non-float dtype.
  void Build(int64_t in_channels, DType dtype = DType::kFloat32);

  bool built() const { return kernel_ != nullptr; }
  int64_t filters() const { return filters_; }
  const std::array<int64_t, 2>& kernel_size() const { return kernel_size_; }
  const Conv2DConfig& config() const { return config_; }
  uint64_t seed() const { return seed_; }
  // REQUIRES: built() (else FailedPreconditionError naming the layer).
  Variable& kernel() const;
  // nullptr when use_bias is false. REQUIRES: built().
  Variable* bias() const;

  // Trackable: the kernel's edge follows the layout.
  std::vector<Child> Children() override;
  void UseKerasLayout(KerasLayout layout) override { layout_ = layout; }

 protected:
  // For Conv1D: its own class name in messages and default names, and its
  // kernel's shape (the 2-D kernel's [1, k] dropped to [k]).
  Conv2D(std::string_view class_name, std::string_view default_name, int64_t filters,
         std::array<int64_t, 2> kernel_size, Conv2DConfig config, bool one_d);
  // The convolution of an NHWC input with the 4-D kernel `filter`.
  Tensor Apply(const Tensor& x, const Tensor& filter);
  void CheckInput(const Tensor& x, int rank, std::string_view layout) const;
  const std::string& class_name() const { return class_name_; }

 private:
  std::string class_name_;
  int64_t filters_;
  std::array<int64_t, 2> kernel_size_;
  Conv2DConfig config_;
  bool one_d_;
  bool relu_;  // activation is eager::Relu, which FusedConv2D applies itself
  uint64_t seed_;
  Variable* kernel_ = nullptr;  // owned by Module
  Variable* bias_ = nullptr;    // owned by Module
  KerasLayout layout_ = KerasLayout::kKeras2Legacy;
};

// Everything of Keras's Conv1D arguments but filters and kernel_size.
struct Conv1DConfig {
  int64_t strides = 1;
  std::string padding = "valid";  // "same" or "causal"
  int64_t dilation_rate = 1;
  eager::Activation activation = nullptr;
  bool use_bias = true;
  std::optional<uint64_t> seed = std::nullopt;
  std::string name = "";  // default: "conv1d", "conv1d_1", ...
};

// keras.layers.Conv1D: x [batch, steps, channels] -> [batch, out_steps,
// filters], kernel [kernel_size, in_channels, filters]. Runs as Conv2D on
// [batch, 1, steps, channels] with the kernel seen as [1, kernel_size, ...],
// as TF's conv1d does (one of batch and steps may be unknown in a graph).
// Errors as Conv2D's, for rank-3 inputs.
class Conv1D : public Conv2D {
 public:
  Conv1D(int64_t filters, int64_t kernel_size, const Conv1DConfig& config = {});
  ~Conv1D() override;

  Tensor Call(const Tensor& x) override;
  // The padding was "causal" (config().padding then reads "valid").
  bool causal() const { return causal_; }

 private:
  bool causal_;
};

// Everything of Keras's DepthwiseConv2D arguments but kernel_size.
struct DepthwiseConv2DConfig {
  std::array<int64_t, 2> strides = {1, 1};
  std::string padding = "valid";  // or "same"
  int64_t depth_multiplier = 1;
  std::array<int64_t, 2> dilation_rate = {1, 1};
  eager::Activation activation = nullptr;
  bool use_bias = true;
  std::optional<uint64_t> seed = std::nullopt;
  std::string name = "";  // default: "depthwise_conv2d", "depthwise_conv2d_1", ...
};

// keras.layers.DepthwiseConv2D: each input channel convolved with its own
// depth_multiplier filters (the DepthwiseConv2dNative op,
// ops/depthwise_conv.h): x [batch, h, w, c] -> [batch, oh, ow, c *
// depth_multiplier], output channel c * depth_multiplier + j from filter
// [:, :, c, j]. Kernel [kh, kw, in_channels, depth_multiplier] (glorot
// uniform with Keras's fans: receptive field * in_channels and receptive
// field * depth_multiplier), bias [in_channels * depth_multiplier]. The
// variable is "<name>/depthwise_kernel:0"; its checkpoint edge is
// "depthwise_kernel" (tf_keras), or "kernel" in kKeras3 (Keras 3 keeps it as
// `kernel`, as TF 2.21 writes). Errors as Conv2D's.
class DepthwiseConv2D : public Layer {
 public:
  DepthwiseConv2D(std::array<int64_t, 2> kernel_size, DepthwiseConv2DConfig config = {});
  ~DepthwiseConv2D() override;

  Tensor Call(const Tensor& x) override;
  void Build(int64_t in_channels, DType dtype = DType::kFloat32);

  bool built() const { return kernel_ != nullptr; }
  const std::array<int64_t, 2>& kernel_size() const { return kernel_size_; }
  const DepthwiseConv2DConfig& config() const { return config_; }
  // REQUIRES: built() (else FailedPreconditionError naming the layer).
  Variable& depthwise_kernel() const;
  Variable* bias() const;

  std::vector<Child> Children() override;
  void UseKerasLayout(KerasLayout layout) override { layout_ = layout; }

 private:
  std::array<int64_t, 2> kernel_size_;
  DepthwiseConv2DConfig config_;
  uint64_t seed_;
  Variable* kernel_ = nullptr;  // owned by Module
  Variable* bias_ = nullptr;    // owned by Module
  KerasLayout layout_ = KerasLayout::kKeras2Legacy;
};

// Everything of Keras's SeparableConv2D arguments but filters and kernel_size.
struct SeparableConv2DConfig {
  std::array<int64_t, 2> strides = {1, 1};
  std::string padding = "valid";  // or "same"
  int64_t depth_multiplier = 1;
  std::array<int64_t, 2> dilation_rate = {1, 1};
  eager::Activation activation = nullptr;
  bool use_bias = true;
  std::optional<uint64_t> seed = std::nullopt;
  std::string name = "";  // default: "separable_conv2d", "separable_conv2d_1", ...
};

// keras.layers.SeparableConv2D, as tf.nn.separable_conv2d: a depthwise
// convolution (strides, padding, dilation; kernel [kh, kw, in_channels,
// depth_multiplier]) then a pointwise 1x1 "valid" convolution (kernel [1, 1,
// in_channels * depth_multiplier, filters]), then bias [filters] and the
// activation. Both kernels glorot-uniform with Keras's fans (the depthwise
// one drawn with `seed`, the pointwise one with seed + 1); variables
// "<name>/depthwise_kernel:0", "<name>/pointwise_kernel:0", "<name>/bias:0",
// with those edges in every layout (Keras 3 and tf_keras alike, as TF 2.21
// writes them). Errors as Conv2D's.
class SeparableConv2D : public Layer {
 public:
  SeparableConv2D(int64_t filters, std::array<int64_t, 2> kernel_size,
                  SeparableConv2DConfig config = {});
  ~SeparableConv2D() override;

  Tensor Call(const Tensor& x) override;
  void Build(int64_t in_channels, DType dtype = DType::kFloat32);

  bool built() const { return depthwise_ != nullptr; }
  int64_t filters() const { return filters_; }
  const std::array<int64_t, 2>& kernel_size() const { return kernel_size_; }
  const SeparableConv2DConfig& config() const { return config_; }
  // REQUIRES: built() (else FailedPreconditionError naming the layer).
  Variable& depthwise_kernel() const;
  Variable& pointwise_kernel() const;
  Variable* bias() const;

 private:
  int64_t filters_;
  std::array<int64_t, 2> kernel_size_;
  SeparableConv2DConfig config_;
  bool relu_;
  uint64_t seed_;
  Variable* depthwise_ = nullptr;  // owned by Module
  Variable* pointwise_ = nullptr;  // owned by Module
  Variable* bias_ = nullptr;       // owned by Module
};

// keras.layers.Conv2DTranspose (output_padding None): the adjoint of a
// Conv2D with the same kernel, strides and padding, as TF runs it
// (Conv2DBackpropInput, whose gradient is Conv2D's and
// Conv2DBackpropFilter's). x [batch, h, w, c] -> [batch, oh, ow, filters]
// with, per spatial dimension, oh = h * stride for "same" and h * stride +
// max(k_eff - stride, 0) for "valid" (k_eff = (k - 1) * dilation + 1),
// Keras's deconv_output_length. Kernel [kh, kw, filters, in_channels] (note
// the order, as Keras), glorot-uniform; bias [filters]. Edges "kernel" and
// "bias" in every layout (Keras 3 and tf_keras alike). Config and errors as
// Conv2D's; the name defaults to "conv2d_transpose", ...
class Conv2DTranspose : public Layer {
 public:
  Conv2DTranspose(int64_t filters, std::array<int64_t, 2> kernel_size, Conv2DConfig config = {});
  ~Conv2DTranspose() override;

  Tensor Call(const Tensor& x) override;
  void Build(int64_t in_channels, DType dtype = DType::kFloat32);

  bool built() const { return kernel_ != nullptr; }
  int64_t filters() const { return filters_; }
  const std::array<int64_t, 2>& kernel_size() const { return kernel_size_; }
  const Conv2DConfig& config() const { return config_; }
  // REQUIRES: built() (else FailedPreconditionError naming the layer).
  Variable& kernel() const;
  Variable* bias() const;

 private:
  int64_t filters_;
  std::array<int64_t, 2> kernel_size_;
  Conv2DConfig config_;
  uint64_t seed_;
  Variable* kernel_ = nullptr;  // owned by Module
  Variable* bias_ = nullptr;    // owned by Module
};

}  // namespace eager::layers
