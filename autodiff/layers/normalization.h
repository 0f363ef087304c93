#pragma once

// BatchNormalization and LayerNormalization, as keras.layers (Keras 3 and
// tf_keras), over the last axis (Keras's default axis=-1; other axes are not
// offered).
//
//   eager::BatchNormalization bn;          // named "batch_normalization"
//   eager::Tensor y = bn(x, /*training=*/true);  // batch statistics; updates
//                                               // the moving ones
//   eager::Tensor z = bn(x);                    // inference: moving statistics
//
// Both build lazily on the first call (or Build()), when the input's last
// dimension C and dtype are known; the variables take the input's dtype:
// gamma ones [C] (when scale), beta zeros [C] (when center), and for
// BatchNormalization the non-trainable moving_mean zeros [C] and
// moving_variance ones [C]. Variable names "<layer>/gamma:0", ...; the
// checkpoint edges are "gamma", "beta", "moving_mean", "moving_variance" in
// every Keras layout (Keras 3 and tf_keras write the same).
//
// The output is TF's tf.nn.batch_normalization, from existing ops so the tape
// and graph gradients differentiate it:
//   inv = rsqrt(variance + epsilon) * gamma;  y = x * inv + (beta - mean * inv)
//
// BatchNormalization in training: mean and variance of the batch over every
// axis but the last (tf.nn.moments: the biased variance, mean((x - mean)^2)),
// and, as Keras 3 does, moving = moving * momentum + batch * (1 - momentum),
// with momentum and (1 - momentum) computed in double and rounded to the
// variables' dtype. (tf_keras's fused kernel, taken for rank-4 inputs, updates
// the moving variance with the unbiased variance instead; for rank-2 and -3
// inputs tf_keras is as Keras 3.) In inference (layer(x), layer(x, false))
// the moving statistics normalize and nothing is updated. In a graph
// (Graph::AsDefault) a training call normalizes by the batch's moments and
// adds the two Assigns of the moving statistics to the graph's UPDATE_OPS
// collection (Graph::kUpdateOps), as TF1's batch normalization does: run
// them with the training step (Group them with the train op).
//
// LayerNormalization normalizes each position over its last axis with that
// axis's own mean and (biased) variance; it behaves the same in both modes.

#include <cstdint>
#include <string_view>
#include <vector>

#include "autodiff/layer.h"

namespace eager::layers {

class BatchNormalization : public Layer {
 public:
  // Unnamed: "batch_normalization", "batch_normalization_1", ... as Keras.
  // REQUIRES: 0 <= momentum <= 1, epsilon > 0 (else InvalidArgumentError).
  explicit BatchNormalization(double momentum = 0.99, double epsilon = 1e-3, bool center = true,
                              bool scale = true, std::string_view name = "");
  ~BatchNormalization() override;

  // Inference: Call(x, false).
  Tensor Call(const Tensor& x) override;
  // x: [..., C] of rank >= 2, float32 or float64; builds on the first call.
  // Throws InvalidArgumentError (naming the layer and shapes) for a lower
  // rank, a non-float dtype, or a C or dtype differing from the built one.
  Tensor Call(const Tensor& x, bool training) override;
  // With a Keras mask (x's shape without the channels; from an
  // Embedding(mask_zero) or Masking before it), a training call's moments
  // are Keras 3's over the valid positions only: sum(x where valid) /
  // (count + 1e-7), the variance likewise about that mean (the gradient
  // through the mean included, as Keras's). Inference ignores the mask.
  // The mask passes on (Keras's supports_masking, and its call takes it).
  Tensor CallMasked(const Tensor& x, const std::optional<Tensor>& mask, bool training) override;
  KerasMaskRule KerasMasking() const override {
    return {.output = KerasMaskOutput::kInput, .call_takes_mask = true};
  }

  // Creates the variables now. Throws FailedPreconditionError when already
  // built, InvalidArgumentError for channels <= 0 or a non-float dtype.
  void Build(int64_t channels, DType dtype = DType::kFloat32);

  bool built() const { return moving_mean_ != nullptr; }
  double momentum() const { return momentum_; }
  double epsilon() const { return epsilon_; }
  bool center() const { return center_; }
  bool scale() const { return scale_; }
  // nullptr when scale (gamma) or center (beta) is off. REQUIRES: built()
  // (else FailedPreconditionError naming the layer), as for the others.
  Variable* gamma() const;
  Variable* beta() const;
  Variable& moving_mean() const;
  Variable& moving_variance() const;

 private:
  // The training call's batch statistics (mask as CallMasked's), the moving
  // ones updated.
  Tensor TrainingCall(const Tensor& x, const std::optional<Tensor>& mask);

  double momentum_;
  double epsilon_;
  bool center_;
  bool scale_;
  Variable* gamma_ = nullptr;  // owned by Module
  Variable* beta_ = nullptr;
  Variable* moving_mean_ = nullptr;
  Variable* moving_variance_ = nullptr;
};

class LayerNormalization : public Layer {
 public:
  // Unnamed: "layer_normalization", "layer_normalization_1", ...
  // REQUIRES: epsilon > 0 (else InvalidArgumentError).
  explicit LayerNormalization(double epsilon = 1e-3, bool center = true, bool scale = true,
                              std::string_view name = "");
  ~LayerNormalization() override;

  // x: [..., C] of rank >= 1, float32 or float64; builds on the first call.
  // Errors as BatchNormalization's.
  Tensor Call(const Tensor& x) override;
  // Keras's supports_masking: the input's mask passes on.
  KerasMaskRule KerasMasking() const override { return {.output = KerasMaskOutput::kInput}; }

  // As BatchNormalization::Build.
  void Build(int64_t channels, DType dtype = DType::kFloat32);

  bool built() const { return built_; }
  double epsilon() const { return epsilon_; }
  bool center() const { return center_; }
  bool scale() const { return scale_; }
  // nullptr when off. REQUIRES: built() (else FailedPreconditionError).
  Variable* gamma() const;
  Variable* beta() const;

 private:
  double epsilon_;
  bool center_;
  bool scale_;
  bool built_ = false;
  int64_t channels_ = 0;
  DType dtype_ = DType::kFloat32;
  Variable* gamma_ = nullptr;  // owned by Module
  Variable* beta_ = nullptr;
};

}  // namespace eager::layers
