#pragma once

// Keras's weightless shape layers (keras.layers, Keras 3 and tf_keras), over
// a leading batch axis, channels_last:
//
//   Activation       keras.layers.Activation: an activation by Keras's name
//                    (autodiff/activations.h lists them) or a function.
//                    (eager::layers::Activation, the layer; eager::Activation
//                    is Dense's function type, eager::Reshape the op.)
//   Reshape          keras.layers.Reshape: target_shape without the batch
//                    axis; one entry may be -1.
//   Permute          dims: a permutation of 1..rank-1 (the batch axis stays).
//   RepeatVector     [batch, n] -> [batch, times, n].
//   ZeroPadding2D    [batch, h, w, c] -> [batch, top + h + bottom,
//                    left + w + right, c], zeros around.
//   Cropping2D       [batch, h, w, c] -> [batch, h - top - bottom,
//                    w - left - right, c].
//
// Each is the same in training and inference, has no variables and nothing
// to save (in a Sequential it takes its "layer-<i>" edge), and is built from
// ops that have gradients (Reshape, Transpose, BroadcastTo, Concat, Slice and
// the activations'), so the tape differentiates it. Unnamed layers take
// Keras's unique names ("reshape", "permute", "repeat_vector",
// "zero_padding2d", "cropping2d", with _1, _2, ...). Bad arguments and inputs
// throw InvalidArgumentError naming the layer, the argument and the shape.
// ZeroPadding2D and RepeatVector need the input's static shape (a graph
// placeholder's unknown batch is refused, naming it).

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "autodiff/layer.h"

namespace eager::layers {

class Activation : public Layer {
 public:
  // By Keras's name; InvalidArgumentError for another name.
  explicit Activation(std::string_view activation, std::string_view name = "");
  // Any function of one tensor; `activation_name` is only reported.
  Activation(std::function<Tensor(const Tensor&)> activation, std::string_view activation_name,
             std::string_view name = "");
  ~Activation() override;

  Tensor Call(const Tensor& x) override;
  // Keras's supports_masking: the input's mask passes on.
  KerasMaskRule KerasMasking() const override { return {.output = KerasMaskOutput::kInput}; }
  const std::string& activation_name() const { return activation_name_; }

 private:
  std::function<Tensor(const Tensor&)> fn_;
  std::string activation_name_;
};

class Reshape : public Layer {
 public:
  // REQUIRES: every entry > 0 but at most one -1.
  explicit Reshape(std::vector<int64_t> target_shape, std::string_view name = "");
  ~Reshape() override;
  Tensor Call(const Tensor& x) override;
  const std::vector<int64_t>& target_shape() const { return target_shape_; }

 private:
  std::vector<int64_t> target_shape_;
};

class Permute : public Layer {
 public:
  // REQUIRES: dims a permutation of 1..dims.size() (Keras's 1-based dims).
  explicit Permute(std::vector<int64_t> dims, std::string_view name = "");
  ~Permute() override;
  // REQUIRES: x.rank() == dims.size() + 1.
  Tensor Call(const Tensor& x) override;
  const std::vector<int64_t>& dims() const { return dims_; }

 private:
  std::vector<int64_t> dims_;
};

class RepeatVector : public Layer {
 public:
  // REQUIRES: times > 0.
  explicit RepeatVector(int64_t times, std::string_view name = "");
  ~RepeatVector() override;
  // REQUIRES: x of rank 2.
  Tensor Call(const Tensor& x) override;
  int64_t times() const { return times_; }

 private:
  int64_t times_;
};

class ZeroPadding2D : public Layer {
 public:
  // ((top, bottom), (left, right)), each >= 0; ZeroPadding2D(p) pads p on all
  // four sides (Keras's default p = 1).
  ZeroPadding2D(int64_t top, int64_t bottom, int64_t left, int64_t right,
                std::string_view name = "");
  explicit ZeroPadding2D(int64_t padding = 1, std::string_view name = "");
  ~ZeroPadding2D() override;
  // REQUIRES: x of rank 4 with a known shape.
  Tensor Call(const Tensor& x) override;
  // {top, bottom, left, right}.
  std::array<int64_t, 4> padding() const { return {top_, bottom_, left_, right_}; }

 private:
  int64_t top_, bottom_, left_, right_;
};

class Cropping2D : public Layer {
 public:
  // ((top, bottom), (left, right)), each >= 0; Cropping2D(c) crops c on all
  // four sides (Keras's default 0).
  Cropping2D(int64_t top, int64_t bottom, int64_t left, int64_t right, std::string_view name = "");
  explicit Cropping2D(int64_t cropping = 0, std::string_view name = "");
  ~Cropping2D() override;
  // REQUIRES: x of rank 4 whose height and width exceed the crop.
  Tensor Call(const Tensor& x) override;
  // {top, bottom, left, right}.
  std::array<int64_t, 4> cropping() const { return {top_, bottom_, left_, right_}; }

 private:
  int64_t top_, bottom_, left_, right_;
};

}  // namespace eager::layers
