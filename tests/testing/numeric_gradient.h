#pragma once

// Finite-difference checks of an OpDef's gradient function, for tests.
//
// Header-only on purpose: tests/testing/*.cc is linked into every test binary,
// including runtime_tests, which does not link eager_ops.
//
// The check: with fixed random weights W shaped like the op's output, the
// loss L(inputs) = sum(op(inputs) * W) has dL/d(output) = W, so the op's
// gradient function called with grad = W must match central differences of
// L with respect to every element of every floating input.

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "ops/execute.h"
#include "ops/op_def.h"
#include "ops/random_generator.h"

namespace eager::testing {

// All elements of a float32/float64 tensor as doubles.
inline std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> out;
  VisitFloatDType(t.dtype(), "ToDoubles", [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (T v : t.data<T>()) out.push_back(static_cast<double>(v));
  });
  return out;
}

inline Tensor FromDoubles(const std::vector<double>& values, const Shape& shape, DType dtype) {
  return VisitFloatDType(dtype, "FromDoubles", [&](auto tag) {
    using T = typename decltype(tag)::type;
    return Tensor::FromVector<T>(std::vector<T>(values.begin(), values.end()), shape);
  });
}

struct GradientCheck {
  // Largest |analytic - numeric| / max(1, |numeric|) over checked elements.
  double max_error = 0;
  std::string worst;  // where max_error occurred, for failure messages
  // Inputs whose gradient function returned nullopt.
  std::vector<int> without_gradient;
};

inline GradientCheck CheckGradient(const OpDef& op, const std::vector<Tensor>& inputs,
                                   const Attrs& attrs, double eps = 1e-6, uint64_t seed = 7) {
  const std::span<const Tensor> in(inputs.data(), inputs.size());
  OpCall call;
  call.op = &op;
  call.inputs = inputs;
  call.attrs = attrs;
  call.output = Execute(op, in, attrs);
  const Tensor weights =
      RandomGenerator(seed).Normal(call.output.shape(), 0.0, 1.0, call.output.dtype());
  const std::vector<double> w = ToDoubles(weights);
  auto loss = [&](const std::vector<Tensor>& args) {
    std::vector<double> y =
        ToDoubles(Execute(op, std::span<const Tensor>(args.data(), args.size()), attrs));
    double sum = 0;
    for (size_t i = 0; i < y.size(); ++i) sum += y[i] * w[i];
    return sum;
  };

  std::vector<std::optional<Tensor>> grads = op.gradient(call, weights);
  GradientCheck result;
  if (grads.size() != inputs.size()) {
    result.max_error = INFINITY;
    result.worst = "gradient returned " + std::to_string(grads.size()) + " entries for " +
                   std::to_string(inputs.size()) + " inputs";
    return result;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!grads[i].has_value()) {
      result.without_gradient.push_back(static_cast<int>(i));
      continue;
    }
    if (!IsFloating(inputs[i].dtype())) continue;
    if (grads[i]->shape() != inputs[i].shape() || grads[i]->dtype() != inputs[i].dtype()) {
      result.max_error = INFINITY;
      result.worst = "gradient " + std::to_string(i) + " has shape " +
                     grads[i]->shape().ToString() + ", input has " + inputs[i].shape().ToString();
      return result;
    }
    const std::vector<double> analytic = ToDoubles(*grads[i]);
    std::vector<double> x = ToDoubles(inputs[i]);
    for (size_t k = 0; k < x.size(); ++k) {
      std::vector<Tensor> args = inputs;
      const double saved = x[k];
      x[k] = saved + eps;
      args[i] = FromDoubles(x, inputs[i].shape(), inputs[i].dtype());
      const double up = loss(args);
      x[k] = saved - eps;
      args[i] = FromDoubles(x, inputs[i].shape(), inputs[i].dtype());
      const double down = loss(args);
      x[k] = saved;
      const double numeric = (up - down) / (2 * eps);
      const double error = std::abs(analytic[k] - numeric) / std::max(1.0, std::abs(numeric));
      if (!(error <= result.max_error)) {  // also catches NaN
        result.max_error = std::isnan(error) ? INFINITY : error;
        result.worst = "input " + std::to_string(i) + " element " + std::to_string(k) +
                       ": analytic " + std::to_string(analytic[k]) + " vs numeric " +
                       std::to_string(numeric);
      }
    }
  }
  return result;
}

}  // namespace eager::testing
