#pragma once

// KerasTensor: a symbolic tensor of the functional API (Keras's
// KerasTensor): a shape whose batch axis is unknown (-1), a dtype, and the
// layer call that produced it. No values.
//
//   eager::KerasTensor a = eager::Input({3}, eager::DType::kFloat32, "a");
//   eager::Dense dense(4);
//   eager::KerasTensor h = dense(a);      // records dense's call; h is [-1, 4]
//   eager::Model model({a}, {h});         // autodiff/functional.h
//
// Calling a Layer on KerasTensors (Layer::operator(), Layer::CallSymbolic)
// records a node (Keras's Node: the layer, its input tensors) and returns
// its outputs. Their shapes are found by running the layer: once on zeros
// with every unknown dimension 1, once with 2; a dimension that differs
// between the two runs, and the batch axis always, is reported -1. Running
// the real layer (as Keras 3's compute_output_spec runs the layer on
// symbolic backend tensors) builds it, as Keras builds layers when called
// on symbolic inputs, and needs no shape function per layer that could
// disagree with what the layer computes. It is done in inference mode
// (training=false), so BatchNormalization's moving statistics and Dropout's
// generator are untouched. A symbolic call while a Graph is the default
// throws FailedPreconditionError (the runs would add nodes to it); under a
// recording GradientTape the runs are recorded like any other ops.
//
// Lifetime: a KerasTensor keeps its history alive (the nodes and Input's
// InputLayer), not the layers called: those must outlive every KerasTensor
// and Model that uses them.

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "runtime/shape.h"
#include "runtime/tensor.h"

namespace eager {

class Layer;
namespace internal {
struct FunctionalNode;
}  // namespace internal

class KerasTensor {
 public:
  // The shape including the batch axis (dim 0, -1); -1 marks unknown dims.
  const Shape& shape() const;
  DType dtype() const;
  // The layer whose call produced this tensor (an InputLayer for Input()).
  Layer& layer() const;
  // Which of that call's outputs this is.
  int index() const { return index_; }
  const std::shared_ptr<const internal::FunctionalNode>& node() const { return node_; }

  // The same node and output.
  bool operator==(const KerasTensor& other) const {
    return node_ == other.node_ && index_ == other.index_;
  }

 private:
  friend class Layer;
  friend KerasTensor Input(const std::vector<int64_t>& shape, DType dtype, std::string_view name);
  KerasTensor(std::shared_ptr<const internal::FunctionalNode> node, int index)
      : node_(std::move(node)), index_(index) {}

  std::shared_ptr<const internal::FunctionalNode> node_;
  int index_ = 0;
};

// keras.Input: a symbolic batch of examples of `shape` (the batch axis
// excluded; -1 for an unknown dimension, Keras's None), produced by a new
// InputLayer named `name` (unnamed: "input_1", "input_2", ...). Throws
// InvalidArgumentError for a dimension below -1.
KerasTensor Input(const std::vector<int64_t>& shape, DType dtype = DType::kFloat32,
                  std::string_view name = "");

namespace internal {

// One call of a layer on KerasTensors (Keras's Node). An Input's node has
// no inputs and owns its InputLayer.
struct FunctionalNode {
  Layer* layer = nullptr;
  std::shared_ptr<Layer> owned_layer;
  std::vector<KerasTensor> inputs;
  std::vector<Shape> shapes;  // per output
  std::vector<DType> dtypes;  // per output
  bool is_input() const { return inputs.empty(); }
};

}  // namespace internal
}  // namespace eager
