#pragma once

// Dense: y = activation(x @ kernel + bias), tf.keras.layers.Dense.
//
//   eager::Dense hidden(256, eager::Relu);       // named "dense"
//   eager::Dense logits(10);                     // named "dense_1"
//   eager::Tensor y = logits(hidden(x));         // builds both on this call
//
// Lazy build: the kernel [input_dim, units] and the bias [units] are created
// on the first call (or Build()), when the input's last dimension and dtype
// are known; the variables take the input's dtype (float32 or float64).
// Initialisers as Keras's defaults: kernel glorot-uniform, i.e. uniform in
// [-limit, limit) with limit = sqrt(6 / (input_dim + units)); bias zeros.
// The kernel is drawn from a seeded generator: `seed` if given, else a seed
// derived from the layer's name, so that a program builds the same weights on
// every run.
//
// Names follow Keras: a Dense without an explicit name is "dense", the next
// "dense_1", ... (UniqueObjectName), and its variables are "<name>/kernel:0"
// and "<name>/bias:0" inside the name scope current at build time. Checkpoint
// edges are "kernel" and "bias".
//
// In eager mode a layer with a bias and no activation or eager::Relu runs as
// one FusedMatMul op (ops/fused_matmul.h: the same bits and gradients as
// MatMul, AddV2 and Relu, in fewer passes); in a graph it adds TF's MatMul,
// AddV2 and Relu nodes.
//
// Checkpoint edges by Keras layout (SetKerasLayout, runtime/trackable.h):
// "kernel" and "bias", or "_kernel" and "bias" in kKeras3 (Keras 3's Dense
// keeps its kernel as `_kernel`). The variable names do not change.
//
// A deferred restoration queued on the layer gives the variables their saved
// values at creation (restore-on-create, see runtime/trackable.h).

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "autodiff/layer.h"

namespace eager {

using Activation = std::function<Tensor(const Tensor&)>;

class Dense : public Layer {
 public:
  // REQUIRES: units > 0 (else InvalidArgumentError).
  explicit Dense(int64_t units, Activation activation = nullptr, bool use_bias = true,
                 std::optional<uint64_t> seed = std::nullopt, std::string_view name = "");
  ~Dense() override;

  // x: [batch, input_dim] float32/float64, or of a higher rank [..., input_dim]:
  // then, as Keras, over the last axis ([..., units]). Builds on the first
  // call. Throws InvalidArgumentError (naming the layer and shapes) for rank
  // < 2, a non-float dtype, or an input_dim/dtype differing from the built one.
  Tensor Call(const Tensor& x) override;
  // Keras's supports_masking: the input's mask passes on.
  KerasMaskRule KerasMasking() const override { return {.output = KerasMaskOutput::kInput}; }

  // Creates the variables now. Throws FailedPreconditionError when already
  // built, InvalidArgumentError for input_dim <= 0 or a non-float dtype.
  void Build(int64_t input_dim, DType dtype = DType::kFloat32);

  bool built() const { return kernel_ != nullptr; }
  int64_t units() const { return units_; }
  bool use_bias() const { return use_bias_; }
  uint64_t seed() const { return seed_; }
  const Activation& activation() const { return activation_; }
  // REQUIRES: built() (else FailedPreconditionError naming the layer).
  Variable& kernel() const;
  // nullptr when use_bias is false. REQUIRES: built().
  Variable* bias() const;

  // Trackable: the kernel's edge follows the layout.
  std::vector<Child> Children() override;
  void UseKerasLayout(KerasLayout layout) override { layout_ = layout; }

 private:
  // The layer on a [n, input_dim] input.
  Tensor Apply(const Tensor& x);

  int64_t units_;
  Activation activation_;
  bool use_bias_;
  bool relu_;  // activation is eager::Relu, which FusedMatMul applies itself
  uint64_t seed_;
  Variable* kernel_ = nullptr;  // owned by Module
  Variable* bias_ = nullptr;    // owned by Module
  KerasLayout layout_ = KerasLayout::kKeras2Legacy;
};

}  // namespace eager
