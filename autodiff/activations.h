#pragma once

// Keras's activations by name (keras.activations.get, Keras 3), as functions
// of one tensor built from eager's ops, so the GradientTape differentiates
// them and graph mode traces them to TF's op types:
//
//   eager::Dense dense(64, eager::ActivationByName("gelu"));
//   eager::layers::Activation act("swish");
//
// Names and formulas (x float32 or float64; Keras 3's defaults):
//   linear       x
//   relu         max(x, 0)                         (Relu)
//   relu6        min(max(x, 0), 6)                 (Relu6)
//   leaky_relu   x > 0 ? x : 0.2 x                 (LeakyRelu, negative_slope 0.2)
//   elu          x > 0 ? x : exp(x) - 1            (Elu)
//   selu         scale * elu(x, alpha), TF's constants (Selu)
//   gelu         x / 2 * (1 + erf(x / sqrt(2)))    (approximate=False, Keras's default)
//   gelu_approximate  x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))
//   silu, swish  x * sigmoid(x)
//   softplus     log(1 + exp(x))                   (Softplus)
//   softsign     x / (1 + |x|)                     (Softsign)
//   sigmoid, tanh, exponential (exp), softmax and log_softmax (last axis)
//   hard_sigmoid relu6(x + 3) / 6                  (Keras 3; tf_keras computed
//                                                   clip(0.2 x + 0.5, 0, 1))
//   hard_silu, hard_swish  x * hard_sigmoid(x)
//   mish         x * tanh(softplus(x))
// An unknown name throws InvalidArgumentError listing the known ones.
//
// KerasActivationName maps back: the name of a function ActivationByName
// returned, or of an op function passed directly (&Relu, &Sigmoid, &Tanh,
// &Softmax, &Selu, ...), so that a layer's config can name its activation.

#include <optional>
#include <string_view>
#include <vector>

#include "autodiff/dense.h"  // Activation

namespace eager {

Activation ActivationByName(std::string_view name);

// The names ActivationByName knows, in the order above.
const std::vector<std::string_view>& KerasActivationNames();

// "linear" for an empty function; the Keras name of a known function (the
// first of two aliases: "silu", "hard_silu"); nullopt for any other function.
std::optional<std::string_view> KerasActivationName(const Activation& activation);

}  // namespace eager
