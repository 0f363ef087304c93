#pragma once

// Model: a functional model, keras.Model(inputs, outputs): the graph of
// layer calls recorded from Input()s to `outputs` (autodiff/keras_tensor.h),
// run as a Layer.
//
//   eager::KerasTensor a = eager::Input({3}, eager::DType::kFloat32, "a");
//   eager::KerasTensor b = eager::Input({2}, eager::DType::kFloat32, "b");
//   eager::Dense shared(4, nullptr, true, std::nullopt, "shared");
//   eager::layers::Concatenate concat;
//   eager::KerasTensor c = concat({shared(a_proj(a)), shared(b_proj(b))});
//   eager::Model model({a, b}, {out1(c), out2(c)});
//   std::vector<eager::Tensor> ys = model({xa, xb}, /*training=*/true);
//
// Multi-input, multi-output; a layer called twice (shared) is one layer with
// one set of variables; a Model or Sequential is a layer like any other
// (nested models). The layers are not owned and must outlive the model.
//
// Order: operations() is Keras's model.operations (Keras 3) / model.layers
// (tf_keras), InputLayers included: layers by decreasing depth from the
// outputs, ties in the order a depth-first walk from the outputs first meets
// them (keras/src/ops/function.py map_graph; tf_keras's
// _map_graph_network is the same). Layers run in a topological order of
// their calls, `training` passed to each.
//
// Checkpoint edges by Keras layout (SetKerasLayout, runtime/trackable.h), as
// TF 2.21 writes a functional model:
//   Keras 3 (kKeras3): "_operations", a list whose "<i>" is operations()[i].
//   tf_keras (kKeras2Legacy, kKeras2): for operation i, first
//     "layer_with_weights-<k>" if it has variables (k counts such layers),
//     then "layer-<i>", as Sequential.
// An input may be an inner tensor (Model({h}, {d(h)}) with h = dense(a)):
// as both Keras lines, the model then starts from a new InputLayer of h's
// shape (an operation like an Input's), and h's producers are not part of
// the model.
//
// A restore of the other line's structure, or of a Sequential's Keras 3
// structure ("_functional"), throws InvalidArgumentError naming the edge
// found and the layout to set.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "autodiff/keras_tensor.h"
#include "autodiff/layer.h"

namespace eager {

class Model : public Layer {
 public:
  // Throws InvalidArgumentError (naming the tensor) when `inputs` or
  // `outputs` is empty, an input is listed twice, or an output depends on
  // an Input that is not among `inputs`. Unnamed: "functional",
  // "functional_1", ... as Keras 3.
  Model(std::vector<KerasTensor> inputs, std::vector<KerasTensor> outputs,
        std::string_view name = "");
  ~Model() override;

  // Runs the graph on one tensor per input, returning one per output.
  // Throws InvalidArgumentError naming the model and input for a wrong
  // count, dtype or shape (the InputLayer checks the shape).
  std::vector<Tensor> CallMany(const std::vector<Tensor>& inputs, bool training) override;
  // As a layer of another model: the inputs' masks go into this model's
  // layers, and each output has the mask its layer made (Keras 3 runs a
  // nested Functional so). Its call takes masks, and Keras 3 records no
  // mask op after it (its symbolic output has none).
  MaskedOutputs CallWithMasks(const std::vector<Tensor>& inputs,
                              const std::vector<std::optional<Tensor>>& masks,
                              bool training) override;
  KerasMaskRule KerasMasking() const override { return {.call_takes_mask = true}; }
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs, bool training = false) {
    return CallMany(inputs, training);
  }
  using Layer::operator();

  // One-in-one-out models as a plain Layer; InvalidArgumentError otherwise.
  Tensor Call(const Tensor& x) override { return Call(x, /*training=*/false); }
  Tensor Call(const Tensor& x, bool training) override;

  const std::vector<KerasTensor>& inputs() const { return inputs_; }
  const std::vector<KerasTensor>& outputs() const { return outputs_; }
  // Every layer in Keras 3's order (above), InputLayers included: Keras 3's
  // model.layers (config.json's and .weights.h5's order).
  const std::vector<Layer*>& operations() const { return operations_; }
  // Keras 3's model.operations: the layers above and, between them, the
  // mask operations Keras 3 records (layer nullptr; "NotEqual" for an
  // Embedding(mask_zero=True) whose mask a recurrent layer takes, ...:
  // autodiff/internal/keras_operations.h). The checkpoint's
  // "_operations/<i>" numbers these.
  const std::vector<KerasOperation>& keras3_operations() const { return keras3_operations_; }
  // tf_keras's model.layers: the layers in its order (no mask operations).
  const std::vector<Layer*>& tf_keras_layers() const { return tf_keras_layers_; }

  // Trackable: the edges described above.
  std::vector<Child> Children() override;
  void UseKerasLayout(KerasLayout layout) override { layout_ = layout; }
  std::string SavedStructureMismatch(const std::vector<std::string_view>& saved_edges) override;

 private:
  class OperationList;

  std::vector<KerasTensor> inputs_;
  std::vector<KerasTensor> outputs_;
  // Per input, its Input's node, or for an inner tensor the node of a new
  // InputLayer standing for it (Keras clones such inputs into InputLayers).
  std::vector<const internal::FunctionalNode*> input_nodes_;
  std::vector<std::shared_ptr<internal::FunctionalNode>> stand_ins_;
  // The calls to make, inputs before their consumers (Input nodes skipped).
  std::vector<const internal::FunctionalNode*> schedule_;
  std::vector<Layer*> operations_;
  std::vector<KerasOperation> keras3_operations_;
  std::vector<Layer*> tf_keras_layers_;
  KerasLayout layout_ = KerasLayout::kKeras2Legacy;
  std::unique_ptr<OperationList> operation_list_;  // "_operations"
};

}  // namespace eager
