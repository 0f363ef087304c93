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
// Masks, as Keras 3's: a layer may make a mask for its output (Embedding with
// mask_zero: ids != 0, a bool [batch, time]; Masking) and a layer may use
// the mask of its input (SimpleRNN, LSTM and GRU skip the masked steps,
// GlobalAveragePooling1D averages the valid steps, MultiHeadAttention masks
// queries and keys). Sequential and Model carry the mask from layer to
// layer: each layer runs as CallWithMasks(inputs, masks, training), by
// default CallMasked(x, mask, training) (CallManyMasked for several inputs)
// handing on ComputeMask(x, mask) (ComputeMaskMany). A Model or Sequential
// used as a layer takes its inputs' masks into its own layers and its
// outputs keep the masks those layers made, as Keras 3 runs nested models.
// As Keras 3, a layer passes its input's mask on only when it supports
// masking (Dense, Dropout, Activation, the normalizations, attention, the
// merges, a recurrent layer with return_sequences); any other layer
// (convolutions, pooling, Flatten, Reshape, ...) drops it. KerasMasking()
// says which, and what Keras 3 records for it (see there).

#include <optional>
#include <string_view>
#include <vector>

#include "autodiff/module.h"
#include "runtime/tensor.h"

namespace eager {

class KerasTensor;
class Layer;

// An entry of Keras 3's model.operations (Model::keras3_operations()): a
// layer, or a mask op Keras 3 records (layer nullptr, mask_op its Keras
// class: "NotEqual", "Any", "LogicalOr", ...; see Layer::KerasMasking). A
// Sequential's list starts with an entry of neither for the InputLayer
// Keras adds when its first layer is not one.
struct KerasOperation {
  Layer* layer = nullptr;
  std::string_view mask_op;
};

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

  // How Keras 3 masks around this layer: what its output's mask is, and
  // whether its call() takes the input's mask as an argument. A functional
  // model runs by it (ComputeMask's default follows `output`), and it
  // decides the mask operations Keras 3 records among a model's operations
  // (the ops its symbolic compute_mask runs, and the mask argument that
  // makes them a parent of this call): Model::operations() numbers them as
  // Keras 3 does, which the checkpoint's "_operations/<i>" indices follow.
  enum class KerasMaskOutput {
    kNone,         // no mask (Keras's supports_masking false, or compute_mask -> None)
    kInput,        // the first input's mask, passed on
    kNotEqual,     // a new mask NotEqual(input, 0) (Embedding(mask_zero=True))
    kNotEqualAny,  // Any(NotEqual(input, value), axis=-1) (Masking)
    kLogicalOr,    // the inputs' masks ORed; none when one is missing (Add, Multiply, ...)
    kConcatenate,  // Concatenate's: each input's mask broadcast (all true when
                   // missing), concatenated, Any over the last axis
  };
  struct KerasMaskRule {
    KerasMaskOutput output = KerasMaskOutput::kNone;
    bool call_takes_mask = false;
  };
  virtual KerasMaskRule KerasMasking() const { return {}; }

  // The call with the input's Keras mask (nullopt: none); the default is
  // Call(x, training), the mask unused.
  virtual Tensor CallMasked(const Tensor& x, const std::optional<Tensor>& mask, bool training) {
    (void)mask;
    return Call(x, training);
  }
  // The mask of the output for input x with mask `mask`: by default the
  // input's when KerasMasking().output is kInput, else none.
  virtual std::optional<Tensor> ComputeMask(const Tensor& x, const std::optional<Tensor>& mask) {
    (void)x;
    return KerasMasking().output == KerasMaskOutput::kInput ? mask : std::nullopt;
  }
  // Several inputs, each with its mask (what a functional model calls). The
  // defaults: one input goes to CallMasked/ComputeMask; several call
  // CallMany with the masks unused, and pass the first input's mask on when
  // KerasMasking().output is kInput.
  virtual std::vector<Tensor> CallManyMasked(const std::vector<Tensor>& inputs,
                                             const std::vector<std::optional<Tensor>>& masks,
                                             bool training);
  virtual std::optional<Tensor> ComputeMaskMany(const std::vector<Tensor>& inputs,
                                                const std::vector<std::optional<Tensor>>& masks);

  // The call and its outputs' masks in one, what Model and Sequential run
  // each layer by: `masks` one per input (or empty: none), the result one
  // mask per output. The default runs CallManyMasked (CallMany when no input
  // has a mask) and gives the first output ComputeMaskMany's mask; a nested
  // Model or Sequential overrides it to run its graph once with the masks.
  struct MaskedOutputs {
    std::vector<Tensor> outputs;
    std::vector<std::optional<Tensor>> masks;
  };
  virtual MaskedOutputs CallWithMasks(const std::vector<Tensor>& inputs,
                                      const std::vector<std::optional<Tensor>>& masks,
                                      bool training);

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
