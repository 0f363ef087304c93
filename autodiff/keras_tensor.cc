#include "autodiff/keras_tensor.h"

#include <string>
#include <utility>

#include "autodiff/input_layer.h"
#include "autodiff/layer.h"
#include "runtime/errors.h"
#include "runtime/graph.h"

namespace eager {
namespace {

// Zeros of each input's shape, its unknown dimensions set to `unknown`.
std::vector<Tensor> ProbeInputs(const std::vector<KerasTensor>& inputs, int64_t unknown) {
  std::vector<Tensor> probes;
  for (const KerasTensor& input : inputs) {
    std::vector<int64_t> dims = input.shape().ToVector();
    for (int64_t& d : dims) d = d < 0 ? unknown : d;
    probes.push_back(Tensor::Zeros(Shape(dims), input.dtype()));
  }
  return probes;
}

}  // namespace

const Shape& KerasTensor::shape() const { return node_->shapes[index_]; }
DType KerasTensor::dtype() const { return node_->dtypes[index_]; }
Layer& KerasTensor::layer() const { return *node_->layer; }

KerasTensor Input(const std::vector<int64_t>& shape, DType dtype, std::string_view name) {
  for (const int64_t d : shape) {
    EAGER_CHECK(d >= -1, "Input", name.empty() ? "" : StrCat(" '", name, "'"),
                ": dimensions must be >= 0 or -1 (unknown), got ", d, " in the shape");
  }
  auto node = std::make_shared<internal::FunctionalNode>();
  node->owned_layer = std::make_shared<InputLayer>(Shape::Partial(shape), name);
  node->layer = node->owned_layer.get();
  std::vector<int64_t> full{-1};
  full.insert(full.end(), shape.begin(), shape.end());
  node->shapes.push_back(Shape::Partial(full));
  node->dtypes.push_back(dtype);
  return KerasTensor(std::move(node), 0);
}

std::vector<Tensor> Layer::CallMany(const std::vector<Tensor>& inputs, bool training) {
  EAGER_CHECK(inputs.size() == 1, "layer '", name(), "' takes one input, got ", inputs.size());
  return {Call(inputs[0], training)};
}

std::vector<KerasTensor> Layer::CallSymbolic(const std::vector<KerasTensor>& inputs) {
  EAGER_CHECK(!inputs.empty(), "layer '", name(), "': a symbolic call needs at least one input");
  if (Graph::Current() != nullptr) {
    // The shape runs below would add nodes to the graph.
    throw FailedPreconditionError(StrCat("layer '", name(), "': called on KerasTensors while a ",
                                         "Graph is the default; build functional models eagerly"));
  }
  // Two runs, unknown dimensions 1 then 2 (see keras_tensor.h).
  const std::vector<Tensor> small = CallMany(ProbeInputs(inputs, 1), /*training=*/false);
  const std::vector<Tensor> large = CallMany(ProbeInputs(inputs, 2), /*training=*/false);
  auto node = std::make_shared<internal::FunctionalNode>();
  node->layer = this;
  node->inputs = inputs;
  for (size_t i = 0; i < small.size(); ++i) {
    std::vector<int64_t> dims = small[i].shape().ToVector();
    const std::vector<int64_t> other = large[i].shape().ToVector();
    for (size_t d = 0; d < dims.size(); ++d) {
      if (d == 0 || d >= other.size() || other[d] != dims[d]) dims[d] = -1;
    }
    node->shapes.push_back(Shape::Partial(dims));
    node->dtypes.push_back(small[i].dtype());
  }
  std::vector<KerasTensor> outputs;
  for (size_t i = 0; i < small.size(); ++i)
    outputs.push_back(KerasTensor(node, static_cast<int>(i)));
  return outputs;
}

KerasTensor Layer::operator()(const std::vector<KerasTensor>& inputs) {
  std::vector<KerasTensor> outputs = CallSymbolic(inputs);
  EAGER_CHECK(outputs.size() == 1, "layer '", name(), "' has ", outputs.size(),
              " outputs; call CallSymbolic to get them all");
  return outputs[0];
}

KerasTensor Layer::operator()(const KerasTensor& x) { return (*this)(std::vector<KerasTensor>{x}); }

}  // namespace eager
