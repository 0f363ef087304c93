#pragma once

// Pooling layers: keras.layers.MaxPooling2D, AveragePooling2D, their 1D
// forms, and the global poolings, channels_last. Weightless: nothing to
// build or save (in a Sequential they take their layer-<i> edge as Flatten).
//
//   eager::layers::MaxPooling2D pool;                 // 2x2 windows, stride 2, "valid"
//   eager::layers::AveragePooling2D avg({3, 3}, {.strides = {{1, 1}}, .padding = "same"});
//   eager::layers::GlobalAveragePooling2D gap;       // [b, h, w, c] -> [b, c]
//
// Windows, strides and padding as Keras's: strides default to the pool
// size; "valid" or "same" (any case) with TF's window rules (ops/conv_ops.h).
// Average pooling with "same" padding divides each window by the input
// pixels it covers (padding is not counted), as TF's AvgPool. The 1D layers
// take [batch, steps, channels] and pool as the 2D op on [batch, 1, steps,
// channels], as TF's max_pool1d / avg_pool1d do.
//
// Names as Keras's: "max_pooling2d", "average_pooling2d",
// "global_average_pooling2d", "global_max_pooling2d", "max_pooling1d", ...
// each made unique per class ("max_pooling2d_1").
//
// Errors: InvalidArgumentError naming the layer and the input's shape for
// another rank, a non-float dtype, or a "valid" window larger than the input;
// at construction for a pool size or stride < 1 or an unknown padding.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "autodiff/layer.h"

namespace eager::layers {

struct Pooling2DConfig {
  std::optional<std::array<int64_t, 2>> strides = std::nullopt;  // default: pool_size
  std::string padding = "valid";                                 // or "same"
  std::string name = "";
};

struct Pooling1DConfig {
  std::optional<int64_t> strides = std::nullopt;  // default: pool_size
  std::string padding = "valid";                  // or "same"
  std::string name = "";
};

// What the windowed pooling layers share; use the classes below.
class WindowPooling : public Layer {
 public:
  ~WindowPooling() override;
  Tensor Call(const Tensor& x) override;

  // [pool_h, pool_w] ([1, pool] for the 1D layers), likewise the strides.
  const std::array<int64_t, 2>& pool_size() const { return pool_; }
  const std::array<int64_t, 2>& strides() const { return strides_; }
  const std::string& padding() const { return padding_; }  // "valid" or "same"

 protected:
  WindowPooling(std::string_view class_name, std::string_view default_name, bool max, bool one_d,
                std::array<int64_t, 2> pool, std::optional<std::array<int64_t, 2>> strides,
                std::string_view padding, const std::string& name);

 private:
  std::string class_name_;
  bool max_;
  bool one_d_;
  std::array<int64_t, 2> pool_;
  std::array<int64_t, 2> strides_;
  std::string padding_;
};

class MaxPooling2D : public WindowPooling {
 public:
  explicit MaxPooling2D(std::array<int64_t, 2> pool_size = {2, 2},
                        const Pooling2DConfig& config = {});
};

class AveragePooling2D : public WindowPooling {
 public:
  explicit AveragePooling2D(std::array<int64_t, 2> pool_size = {2, 2},
                            const Pooling2DConfig& config = {});
};

class MaxPooling1D : public WindowPooling {
 public:
  explicit MaxPooling1D(int64_t pool_size = 2, const Pooling1DConfig& config = {});
};

class AveragePooling1D : public WindowPooling {
 public:
  explicit AveragePooling1D(int64_t pool_size = 2, const Pooling1DConfig& config = {});
};

// The global poolings: the mean or maximum over every spatial position,
// [batch, h, w, c] -> [batch, c] (1D: [batch, steps, c] -> [batch, c]);
// keepdims keeps the pooled axes as size 1, as Keras's keepdims.
class GlobalPooling : public Layer {
 public:
  ~GlobalPooling() override;
  Tensor Call(const Tensor& x) override;
  bool keepdims() const { return keepdims_; }

 protected:
  GlobalPooling(std::string_view class_name, std::string_view default_name, bool max, bool one_d,
                bool keepdims, std::string_view name);

 private:
  std::string class_name_;
  bool max_;
  bool one_d_;
  bool keepdims_;
};

class GlobalAveragePooling2D : public GlobalPooling {
 public:
  explicit GlobalAveragePooling2D(bool keepdims = false, std::string_view name = "");
};

class GlobalMaxPooling2D : public GlobalPooling {
 public:
  explicit GlobalMaxPooling2D(bool keepdims = false, std::string_view name = "");
};

// With a Keras mask ([batch, steps], from an Embedding(mask_zero) or
// Masking before it), the mean over the valid steps only, as Keras 3's
// (a row with no valid step divides 0 by 0: NaN, as Keras's); the output
// has no mask.
class GlobalAveragePooling1D : public GlobalPooling {
 public:
  explicit GlobalAveragePooling1D(bool keepdims = false, std::string_view name = "");
  Tensor CallMasked(const Tensor& x, const std::optional<Tensor>& mask, bool training) override;
  KerasMaskRule KerasMasking() const override { return {.call_takes_mask = true}; }
};

class GlobalMaxPooling1D : public GlobalPooling {
 public:
  explicit GlobalMaxPooling1D(bool keepdims = false, std::string_view name = "");
};

}  // namespace eager::layers
