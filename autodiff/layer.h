#pragma once

// Layer: a Module that maps one tensor to another (a Keras layer's call()).
//
// Layers may create their variables lazily on the first call, when the input
// size is known (Dense does). Sequential chains Layers.

#include <string_view>

#include "autodiff/module.h"
#include "runtime/tensor.h"

namespace eager {

class Layer : public Module {
 public:
  explicit Layer(std::string_view name = "") : Module(name) {}

  // Runs the layer; the first call may build it. Errors are those of Call().
  Tensor operator()(const Tensor& x) { return Call(x); }
  virtual Tensor Call(const Tensor& x) = 0;
};

}  // namespace eager
