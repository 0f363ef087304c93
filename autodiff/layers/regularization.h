#pragma once

// Dropout: keras.layers.Dropout (Keras 3 and tf_keras), a weightless layer.
//
//   eager::Dropout dropout(0.5);              // named "dropout"
//   eager::Tensor y = dropout(x, /*training=*/true);
//   eager::Tensor z = dropout(x);             // inference: x itself
//
// In training each element is kept with probability 1 - rate and scaled by
// 1 / (1 - rate), else zeroed, as tf.nn.dropout computes it:
//   where(u >= rate, x * (1 / (1 - rate)), 0), u uniform in [0, 1),
// so the mean is kept and the gradient flows to the kept elements only
// (SelectV2's and Mul's). rate 0 returns x, rate 1 zeros. In inference
// (layer(x), layer(x, false)) the layer is the identity.
//
// The noise is counter-based (Philox, ops/random_ops.h's
// StatelessRandomUniform): training call number n (0, 1, 2, ...) draws
// tf.random.stateless_uniform(x.shape, seed=[s, n]) with s = seed mod
// (2^31 - 2), so the mask is a pure function of (seed, n, shape): a program
// draws the same masks on every run, each training call a new one, and with
// an explicit seed the masks are, bit for bit, those of Keras 3's
// Dropout(rate, seed=seed) on TF (its SeedGenerator hands out [seed, n] and
// its TF backend calls tf.nn.experimental.stateless_dropout;
// tests/tf_keras/keras_masks_test.py compares them). The default seed is
// derived from the layer's name. step() / set_step() read and move n, e.g.
// to resume a training run where it stopped. noise_shape is not offered:
// every element draws its own keep.
//
// In a graph (Graph::AsDefault) a training call adds TF1's tf.nn.dropout
// nodes: a stateful RandomUniform on Shape(x) with seeds (87654321, s), as
// TF seeds an op seed without a graph seed, then GreaterEqual and SelectV2.
// Each Session run draws a new mask, and TF running the graph draws the same
// ones; the counter step() is eager's only and does not move. Inference
// traces as the identity.
//
// Dropout has no variables and nothing to save: in a Sequential it takes its
// "layer-<i>" edge like Flatten.

#include <cstdint>
#include <optional>
#include <string_view>

#include "autodiff/layer.h"

namespace eager::layers {

class Dropout : public Layer {
 public:
  // Unnamed: "dropout", "dropout_1", ... as Keras.
  // REQUIRES: 0 <= rate <= 1 (else InvalidArgumentError naming the layer).
  explicit Dropout(double rate, std::optional<uint64_t> seed = std::nullopt,
                   std::string_view name = "");
  ~Dropout() override;

  // Inference: x unchanged.
  Tensor Call(const Tensor& x) override;
  // Training: the mask above, on a float32 or float64 x of any shape (else
  // InvalidArgumentError naming the layer).
  Tensor Call(const Tensor& x, bool training) override;
  // Keras's supports_masking: the input's mask passes on.
  KerasMaskRule KerasMasking() const override { return {.output = KerasMaskOutput::kInput}; }

  double rate() const { return rate_; }
  uint64_t seed() const { return seed_; }
  // The number of the next training call's mask (training calls with a rate
  // strictly between 0 and 1 count).
  int64_t step() const { return step_; }
  // REQUIRES: step >= 0 (else InvalidArgumentError naming the layer).
  void set_step(int64_t step);

 private:
  double rate_;
  uint64_t seed_;
  int64_t step_ = 0;
};

}  // namespace eager::layers
