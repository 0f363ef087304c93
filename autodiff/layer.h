#pragma once

// Layer: a Module that maps one tensor to another (a Keras layer's call()).
//
// Layers may create their variables lazily on the first call, when the input
// size is known (Dense does). Sequential chains Layers.
//
// Training vs inference, as Keras's `training` argument: layer(x) is the
// inference call (Keras's training=None outside fit(): BatchNormalization
// uses its moving statistics, Dropout is the identity), layer(x, true) the
// training call. A layer whose behaviour differs overrides
// Call(x, training); every other layer overrides only Call(x), which the
// default Call(x, training) forwards to. A layer overriding Call(x, training)
// also overrides Call(x) as Call(x, false). Containers (Sequential) pass
// `training` to every layer they call.
//
// Functional API (autodiff/functional.h): calling a layer on KerasTensors
// (eager::Input's symbolic tensors) records the call in a graph instead of
// computing; CallMany is the entry point that graph runs, for layers of any
// number of inputs and outputs (merge layers, functional models).
//
// Masks, as Keras's: a layer may make a mask for its output (Embedding with
// mask_zero: ids != 0, a bool [batch, time]) and a layer may use the mask of
// its input (SimpleRNN, LSTM and GRU skip the masked steps). Sequential
// carries the mask from layer to layer: each layer runs as CallMasked(x,
// mask, training) and hands on ComputeMask(x, mask). The defaults are
// Keras 3's Layer: CallMasked ignores the mask, ComputeMask passes the
// input's mask on unchanged.

#include <optional>
#include <string_view>
#include <vector>

#include "autodiff/module.h"
#include "runtime/tensor.h"

namespace eager {

class KerasTensor;

class Layer : public Module {
 public:
  explicit Layer(std::string_view name = "") : Module(name) {}

  // Runs the layer in inference mode; the first call may build it. Errors
  // are those of Call().
  Tensor operator()(const Tensor& x) { return Call(x); }
  // Runs the layer in training (true) or inference (false) mode.
  Tensor operator()(const Tensor& x, bool training) { return Call(x, training); }

  virtual Tensor Call(const Tensor& x) = 0;
  // The default ignores `training`: the layer behaves the same in both modes.
  virtual Tensor Call(const Tensor& x, bool training) {
    (void)training;
    return Call(x);
  }

  // The call with the input's Keras mask (nullopt: none); the default is
  // Call(x, training), the mask unused.
  virtual Tensor CallMasked(const Tensor& x, const std::optional<Tensor>& mask, bool training) {
    (void)mask;
    return Call(x, training);
  }
  // The mask of the output for input x with mask `mask`; the default passes
  // `mask` on.
  virtual std::optional<Tensor> ComputeMask(const Tensor& x, const std::optional<Tensor>& mask) {
    (void)x;
    return mask;
  }

  // How many untracked operations Keras 3 records in a model right after
  // this layer's call: Embedding(mask_zero=True) computes its mask as a
  // NotEqual op, which takes the next index in Keras 3's
  // model/_functional/_operations (and leaves no node in a checkpoint).
  virtual int KerasMaskOperations() const { return 0; }

  // Every input in, every output out; what a functional Model calls. The
  // default takes exactly one input and returns {Call(x, training)}; it
  // throws InvalidArgumentError naming the layer for another count.
  virtual std::vector<Tensor> CallMany(const std::vector<Tensor>& inputs, bool training);

  // Symbolic calls (autodiff/keras_tensor.h): record this layer's call on
  // KerasTensors and return its symbolic output(s). The single-output forms
  // throw InvalidArgumentError naming the layer when it has several outputs.
  KerasTensor operator()(const KerasTensor& x);
  KerasTensor operator()(const std::vector<KerasTensor>& inputs);
  std::vector<KerasTensor> CallSymbolic(const std::vector<KerasTensor>& inputs);

 protected:
  // A layer's variable accessors before the layer exists: throws
  // FailedPreconditionError "<kind> '<name>': <what> does not exist before
  // the layer is built (...)" unless `built`.
  void RequireBuilt(bool built, std::string_view kind, std::string_view what) const;
};

}  // namespace eager
