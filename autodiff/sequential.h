#pragma once

// Sequential: layers applied in order, tf.keras.Sequential.
//
//   eager::Sequential model;
//   model.Add(std::make_unique<eager::Dense>(256, eager::Relu));
//   model.Add(std::make_unique<eager::Dense>(10));
//   eager::Tensor logits = model(images);   // builds both Dense layers
//
// Checkpoint edges are those of the Keras line set with SetKerasLayout
// (runtime/trackable.h), as TF 2.21 writes them:
//   tf_keras (kKeras2Legacy, kKeras2; FORMAT.md 4.4): for layer i, first
//     "layer_with_weights-<k>" if it has variables (k counts such layers),
//     then "layer-<i>", both to the layer. Computed when asked, so a layer
//     gains its "layer_with_weights" edge once it is built.
//   Keras 3 (kKeras3): one edge "_functional" (the functional model Keras 3
//     builds inside a Sequential) to an object with one edge "_operations",
//     a list whose "0" is an InputLayer and "<i>" the i-th other layer. When
//     the first layer added is an InputLayer it is that "0"; otherwise an
//     empty object stands for the InputLayer Keras 3 adds. The mask ops
//     Keras 3 records (an Embedding(mask_zero=True)'s NotEqual before the
//     recurrent layer that takes its mask, a Masking's NotEqual and Any)
//     take indices of their own that Keras 3 saves nothing under
//     (autodiff/internal/keras_operations.h).
// A restore recognizes the other line's structure: restoring a Keras 3
// Sequential's checkpoint ("_functional") into a Sequential not in kKeras3,
// or a tf_keras one ("layer-<i>") into one in kKeras3, or a Keras 3
// functional model's ("_operations" directly) into either, throws
// InvalidArgumentError naming the edge found and the layout to set.

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
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
  // As a layer of another model: as Model::CallWithMasks (one input).
  MaskedOutputs CallWithMasks(const std::vector<Tensor>& inputs,
                              const std::vector<std::optional<Tensor>>& masks,
                              bool training) override;
  KerasMaskRule KerasMasking() const override { return {.call_takes_mask = true}; }

  const std::vector<Layer*>& layers() const { return layers_; }
  // Keras 3's model._functional.operations: the InputLayer (layer nullptr
  // and no mask_op when Keras adds it), the layers, and the mask operations
  // Keras 3 records between them (autodiff/internal/keras_operations.h).
  std::vector<KerasOperation> keras3_operations() const;

  // Trackable: the edges described above.
  std::vector<Child> Children() override;
  void UseKerasLayout(KerasLayout layout) override { layout_ = layout; }
  std::string SavedStructureMismatch(const std::vector<std::string_view>& saved_edges) override;

 private:
  class KerasNode;
  // The Keras 3 "_operations" list's edges.
  std::vector<Child> Operations();
  // Whether layer 0 is an InputLayer (then it is "_operations/0").
  bool StartsWithInput() const;

  std::vector<Layer*> layers_;
  std::vector<std::unique_ptr<Layer>> owned_layers_;
  KerasLayout layout_ = KerasLayout::kKeras2Legacy;
  std::unique_ptr<KerasNode> functional_;  // "_functional"
  std::unique_ptr<KerasNode> operations_;  // "_functional/_operations"
  std::unique_ptr<KerasNode> input_;       // "_operations/0" unless layer 0 is an InputLayer
  // The "_operations" edges told to deferred restorations so far.
  std::set<std::pair<std::string, Trackable*>> announced_;
};

}  // namespace eager
