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

// Plain function pointers, so that KerasActivationName can recognize them
// inside a std::function (capture-free lambdas convert to them).
using Fn = Tensor (*)(const Tensor&);
using Entry = std::pair<std::string_view, Fn>;

Tensor Linear(const Tensor& x) { return x; }
Tensor LeakyRelu02(const Tensor& x) { return LeakyRelu(x, 0.2); }
Tensor EluDefault(const Tensor& x) { return Elu(x); }
Tensor Silu(const Tensor& x) { return Mul(x, Sigmoid(x)); }
Tensor HardSilu(const Tensor& x) { return Mul(x, HardSigmoid(x)); }
Tensor Mish(const Tensor& x) { return Mul(x, Tanh(Softplus(x))); }

const std::vector<Entry>& Registry() {
  static const std::vector<Entry> registry = {
      {"linear", Linear},
      {"relu", Relu},
      {"relu6", Relu6},
      {"leaky_relu", LeakyRelu02},
      {"elu", EluDefault},
      {"selu", Selu},
      {"gelu", Gelu},
      {"gelu_approximate", GeluApproximate},
      {"silu", Silu},
      {"swish", Silu},
      {"softplus", Softplus},
      {"softsign", Softsign},
      {"sigmoid", Sigmoid},
      {"tanh", Tanh},
      {"exponential", Exp},
      {"softmax", Softmax},
      {"log_softmax", LogSoftmax},
      {"hard_sigmoid", HardSigmoid},
      {"hard_silu", HardSilu},
      {"hard_swish", HardSilu},
      {"mish", Mish},
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

std::optional<std::string_view> KerasActivationName(const Activation& activation) {
  if (!activation) return "linear";
  const Fn* fn = activation.target<Fn>();
  if (fn == nullptr) return std::nullopt;
  for (const auto& [name, known] : Registry()) {
    if (known == *fn) return name;
  }
  return std::nullopt;
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
