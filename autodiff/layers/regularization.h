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
// The noise comes from the layer's own generator (mt19937_64, see
// ops/random_generator.h), seeded with `seed` if given, else from the layer's
// name, so a program draws the same masks on every run; each training call
// draws new ones (Keras 3's SeedGenerator advances the same way). The masks
// are not TF's: TF's stateless_dropout uses Philox keyed from Keras's seed
// state; tests compare with TF through the mask's statistics and the kept
// values. Training calls draw eagerly only: in a graph they throw
// UnimplementedError (inference traces as the identity). noise_shape is not
// offered: every element draws its own keep.
//
// Dropout has no variables and nothing to save: in a Sequential it takes its
// "layer-<i>" edge like Flatten.

#include <cstdint>
#include <optional>
#include <string_view>

#include "autodiff/layer.h"
#include "ops/random_generator.h"

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

  double rate() const { return rate_; }
  uint64_t seed() const { return seed_; }

 private:
  double rate_;
  uint64_t seed_;
  RandomGenerator generator_;
};

}  // namespace eager::layers
