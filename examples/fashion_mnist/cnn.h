#pragma once

// The main job's convolutional model (`fashion_mnist --model cnn`), the
// LeNet-style network of TensorFlow's "Deep MNIST" tutorial:
//
//   [batch, 784] -> [batch, 28, 28, 1] -> conv 5x5x32 SAME + bias, ReLU
//   -> max pool 2x2 -> conv 5x5x64 SAME + bias, ReLU -> max pool 2x2
//   -> [batch, 3136] -> dense 1024, ReLU -> dense 10 (logits)
//
// Header-only, as mlp.h, so that benchmarks run exactly this code. The
// convolutions are TF's ops (Conv2D, BiasAdd, Relu, MaxPool in NHWC; in eager
// mode Conv2D + BiasAdd + Relu run as one _FusedConv2D, ops/fused_conv.h), so a
// checkpoint holds what tf.keras.layers.Conv2D would: "conv2d/kernel"
// [5, 5, in, out] and "conv2d/bias" [out].

#include <cmath>
#include <cstdint>
#include <string_view>

#include "autodiff/dense.h"
#include "autodiff/layer.h"
#include "examples/fashion_mnist/classifier.h"
#include "ops/array_ops.h"
#include "ops/conv_ops.h"
#include "ops/fused_conv.h"
#include "ops/pooling_ops.h"
#include "ops/random_generator.h"
#include "ops/unary_ops.h"
#include "runtime/names.h"

namespace fashion_mnist {

// A 'SAME', stride-1 convolution with a bias and ReLU
// (tf.keras.layers.Conv2D(filters, kernel, padding="same", activation="relu")),
// built on the first call from the input's channel count. Keras's initialisers:
// kernel glorot-uniform (fan_in = k*k*in, fan_out = k*k*filters), bias zeros.
class ConvRelu : public eager::Layer {
 public:
  ConvRelu(int64_t filters, int64_t kernel_size, uint64_t seed)
      : eager::Layer(eager::UniqueObjectName("conv2d")),
        filters_(filters),
        kernel_size_(kernel_size),
        seed_(seed) {}

  // x: [batch, height, width, channels] float32.
  eager::Tensor Call(const eager::Tensor& x) override {
    if (kernel_ == nullptr) Build(x.shape().dim(3));
    const eager::Conv2DOptions same{.padding = "SAME"};
    return eager::FusedConv2D(x, kernel_->value(), bias_->value(), /*relu=*/true, same);
  }
  bool built() const { return kernel_ != nullptr; }
  int64_t filters() const { return filters_; }
  int64_t kernel_size() const { return kernel_size_; }
  // REQUIRES: built().
  eager::Variable& kernel() const { return *kernel_; }
  eager::Variable& bias() const { return *bias_; }

 private:
  void Build(int64_t channels) {
    eager::NameScope scope(eager::NameScope::Current() + name() + "/");
    const int64_t area = kernel_size_ * kernel_size_;
    const double limit = std::sqrt(6.0 / static_cast<double>(area * (channels + filters_)));
    kernel_ = &AddVariable(
        "kernel", eager::RandomUniform(eager::Shape{kernel_size_, kernel_size_, channels, filters_},
                                       seed_, -limit, limit));
    bias_ =
        &AddVariable("bias", eager::Tensor::Zeros(eager::Shape{filters_}, eager::DType::kFloat32));
  }

  int64_t filters_;
  int64_t kernel_size_;
  uint64_t seed_;
  eager::Variable* kernel_ = nullptr;  // owned by Module
  eager::Variable* bias_ = nullptr;    // owned by Module
};

struct Cnn : Classifier {
  explicit Cnn(uint64_t seed = 0)
      : conv1(32, 5, seed),
        conv2(64, 5, seed + 1),
        hidden(1024, eager::Relu, /*use_bias=*/true, seed + 2),
        logits(10, nullptr, true, seed + 3) {
    Track("conv1", conv1);
    Track("conv2", conv2);
    Track("hidden", hidden);
    Track("logits", logits);
  }
  // images [batch, 784] -> logits [batch, 10].
  eager::Tensor operator()(const eager::Tensor& images) override {
    const int64_t batch = images.shape().dim(0);
    eager::Tensor x = eager::Reshape(images, {batch, 28, 28, 1});
    x = eager::MaxPool(conv1(x));  // [batch, 14, 14, 32]
    x = eager::MaxPool(conv2(x));  // [batch, 7, 7, 64]
    return logits(hidden(eager::Reshape(x, {batch, 7 * 7 * 64})));
  }
  bool built() const override { return conv1.built(); }

  ConvRelu conv1;
  ConvRelu conv2;
  eager::Dense hidden;
  eager::Dense logits;
};

}  // namespace fashion_mnist
