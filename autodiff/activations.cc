#include "autodiff/activations.h"

#include <string>
#include <utility>

#include "ops/activation_ops.h"
#include "ops/binary_ops.h"
#include "ops/nn_ops.h"
#include "ops/operators.h"
#include "ops/unary_ops.h"
#include "runtime/errors.h"

namespace eager {
namespace {

// Scalars in x's dtype through ops/operators.h (x * 0.5 etc.), in the order
// of operations of tf.nn.gelu, which Keras 3's TensorFlow backend calls.
Tensor Gelu(const Tensor& x) { return 0.5 * x * (1.0 + Erf(x / 1.4142135623730951)); }
Tensor GeluApproximate(const Tensor& x) {
  return 0.5 * x * (1.0 + Tanh(0.7978845608028654 * (x + 0.044715 * (x * x * x))));
}
Tensor HardSigmoid(const Tensor& x) { return Relu6(x + 3.0) / 6.0; }

using Entry = std::pair<std::string_view, Activation>;

const std::vector<Entry>& Registry() {
  static const std::vector<Entry> registry = {
      {"linear", [](const Tensor& x) { return x; }},
      {"relu", [](const Tensor& x) { return Relu(x); }},
      {"relu6", [](const Tensor& x) { return Relu6(x); }},
      {"leaky_relu", [](const Tensor& x) { return LeakyRelu(x, 0.2); }},
      {"elu", [](const Tensor& x) { return Elu(x); }},
      {"selu", [](const Tensor& x) { return Selu(x); }},
      {"gelu", Gelu},
      {"gelu_approximate", GeluApproximate},
      {"silu", [](const Tensor& x) { return Mul(x, Sigmoid(x)); }},
      {"swish", [](const Tensor& x) { return Mul(x, Sigmoid(x)); }},
      {"softplus", [](const Tensor& x) { return Softplus(x); }},
      {"softsign", [](const Tensor& x) { return Softsign(x); }},
      {"sigmoid", [](const Tensor& x) { return Sigmoid(x); }},
      {"tanh", [](const Tensor& x) { return Tanh(x); }},
      {"exponential", [](const Tensor& x) { return Exp(x); }},
      {"softmax", [](const Tensor& x) { return Softmax(x); }},
      {"log_softmax", [](const Tensor& x) { return LogSoftmax(x); }},
      {"hard_sigmoid", HardSigmoid},
      {"hard_silu", [](const Tensor& x) { return Mul(x, HardSigmoid(x)); }},
      {"hard_swish", [](const Tensor& x) { return Mul(x, HardSigmoid(x)); }},
      {"mish", [](const Tensor& x) { return Mul(x, Tanh(Softplus(x))); }},
  };
  return registry;
}

}  // namespace

Activation ActivationByName(std::string_view name) {
  for (const auto& [known, fn] : Registry()) {
    if (known == name) return fn;
  }
  std::string names;
  for (std::string_view known : KerasActivationNames()) {
    names += StrCat(names.empty() ? "" : ", ", known);
  }
  throw InvalidArgumentError(
      StrCat("unknown activation '", name, "'; Keras's activations eager has: ", names));
}

const std::vector<std::string_view>& KerasActivationNames() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const auto& entry : Registry()) out.push_back(entry.first);
    return out;
  }();
  return names;
}

}  // namespace eager
