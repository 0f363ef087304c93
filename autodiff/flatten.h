#pragma once

// Flatten: tf.keras.layers.Flatten, a weightless layer that keeps the batch
// dimension and flattens the rest: [batch, d1, ..., dn] -> [batch, d1*...*dn]
// ([batch] -> [batch, 1]), row-major as Keras's reshape. In a Sequential it
// takes its "layer-<i>" edge like any layer (a Keras checkpoint's layer-0
// for Sequential([Flatten(), Dense(...), ...])); it has nothing to save.

#include <string_view>

#include "autodiff/layer.h"

namespace eager {

class Flatten : public Layer {
 public:
  // Unnamed: "flatten", "flatten_1", ... as Keras.
  explicit Flatten(std::string_view name = "");
  ~Flatten() override;

  // Throws InvalidArgumentError (naming the layer) for a scalar input.
  Tensor Call(const Tensor& x) override;
};

}  // namespace eager
