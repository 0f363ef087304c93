#pragma once

// Masking: keras.layers.Masking(mask_value). A time step whose features all
// equal `mask_value` is masked: its features become 0 and the output's Keras
// mask (autodiff/layer.h) is false there, so a recurrent layer after it skips
// the step and a GlobalAveragePooling1D leaves it out of the mean.
//
//   eager::layers::Masking masking(0.0);
//   eager::layers::LSTM lstm(32);
//   eager::Tensor h = lstm.CallMasked(masking(x), masking.ComputeMask(x, std::nullopt), false);
//
// In a Sequential or a functional Model the mask travels by itself. As
// Keras's: output = x * any(x != mask_value, axis=-1, keepdims=True), the
// mask any(x != mask_value, axis=-1) (a bool [batch, time] for x [batch,
// time, features]); the input's own mask is replaced. No variables; the
// same in training and inference; the gradient through the tape (a masked
// step's features get none).

#include <optional>
#include <string_view>

#include "autodiff/layer.h"

namespace eager::layers {

class Masking : public Layer {
 public:
  // Unnamed: "masking", "masking_1", ... as Keras.
  explicit Masking(double mask_value = 0.0, std::string_view name = "");
  ~Masking() override;

  // x of rank >= 2, float32 or float64 (else InvalidArgumentError naming the
  // layer).
  Tensor Call(const Tensor& x) override;
  std::optional<Tensor> ComputeMask(const Tensor& x, const std::optional<Tensor>& mask) override;
  KerasMaskRule KerasMasking() const override { return {.output = KerasMaskOutput::kNotEqualAny}; }

  double mask_value() const { return mask_value_; }

 private:
  // any(x != mask_value, axis=-1, keepdims) as bool.
  Tensor Valid(const Tensor& x, bool keepdims) const;

  double mask_value_;
};

}  // namespace eager::layers
