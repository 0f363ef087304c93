#pragma once

// InputLayer: the weightless first layer of a Keras functional model
// (tf.keras.Input / tf.keras.layers.InputLayer).
//
// A Keras functional model's checkpoint lists its InputLayer as "layer-0",
// an object with no values, and its weighted layers from "layer-1" on. A
// Sequential whose first layer is an InputLayer has exactly those edges, so
//
//   eager::Sequential model;
//   model.Add(std::make_unique<eager::InputLayer>(eager::Shape{4}));
//   model.Add(std::make_unique<eager::Dense>(8, eager::Relu));
//   model.Add(std::make_unique<eager::Dense>(3));
//   eager::Checkpoint(model).Restore(keras_functional_weights);
//
// restores what Keras's model.save_weights wrote for
// keras.Model(inputs, Dense(3)(Dense(8, relu)(inputs))).

#include <optional>
#include <string_view>

#include "autodiff/layer.h"
#include "runtime/shape.h"

namespace eager {

class InputLayer : public Layer {
 public:
  // `shape`: each example's shape (the batch dimension excluded), checked on
  // every call when given. Unnamed: "input_1", "input_2", ... as Keras.
  explicit InputLayer(std::optional<Shape> shape = std::nullopt, std::string_view name = "");
  ~InputLayer() override;

  // Returns x. Throws InvalidArgumentError (naming the layer and both
  // shapes) when a shape was given and x is not [batch, shape...].
  Tensor Call(const Tensor& x) override;
  // A mask passes through: in a nested Sequential the InputLayer is the
  // first layer called, and Keras's inputs keep the masks they are given.
  KerasMaskRule KerasMasking() const override { return {.output = KerasMaskOutput::kInput}; }

  const std::optional<Shape>& shape() const { return shape_; }

 private:
  std::optional<Shape> shape_;
};

}  // namespace eager
