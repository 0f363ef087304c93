#pragma once

// Sequential: layers applied in order, tf.keras.Sequential.
//
//   eager::Sequential model;
//   model.Add(std::make_unique<eager::Dense>(256, eager::Relu));
//   model.Add(std::make_unique<eager::Dense>(10));
//   eager::Tensor logits = model(images);   // builds both Dense layers
//
// Checkpoint edges are Keras's (FORMAT.md 4.4): for layer i, first
// "layer_with_weights-<k>" if it has variables (k counts such layers), then
// "layer-<i>", both to the layer. They are computed when asked, so a layer
// gains its "layer_with_weights" edge once it is built.

#include <memory>
#include <string_view>
#include <vector>

#include "autodiff/layer.h"

namespace eager {

class Sequential : public Layer {
 public:
  // Unnamed: "sequential", "sequential_1", ... as Keras.
  explicit Sequential(std::string_view name = "");
  ~Sequential() override;

  // Appends a layer owned by this model. REQUIRES: layer is not null.
  void Add(std::unique_ptr<Layer> layer);
  // Appends a layer owned by the caller, which must outlive this model.
  void Add(Layer& layer);

  // Runs every layer in order, in inference mode (Call(x, false)). Throws
  // FailedPreconditionError when empty.
  Tensor Call(const Tensor& x) override;
  // Runs every layer in order, passing `training` to each.
  Tensor Call(const Tensor& x, bool training) override;

  const std::vector<Layer*>& layers() const { return layers_; }

  // Trackable: the Keras edges described above.
  std::vector<Child> Children() override;

 private:
  std::vector<Layer*> layers_;
  std::vector<std::unique_ptr<Layer>> owned_layers_;
};

}  // namespace eager
