#pragma once

// TensorFlow's ApplyAdam kernel (FORMAT.md 7.1), one fused in-place pass,
// shared by the eager Adam (autodiff/adam.cc) and the graph's ApplyAdam node
// (ops/training_ops.cc) so both round alike. Operation order and association
// are TensorFlow's; every file that includes this must be compiled with
// -ffp-contract=off (no fused multiply-add, which would change the rounding).
// The four buffers are distinct, which __restrict tells the vectorizer.

#include <cmath>
#include <cstddef>

namespace eager::internal {

template <typename T>
void ApplyAdamKernel(size_t n, const T* __restrict grad, T* __restrict var, T* __restrict m,
                     T* __restrict v, T lr, T beta1, T beta2, T beta1_power, T beta2_power,
                     T epsilon) {
  const T alpha = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
  const T one_minus_beta1 = T(1) - beta1;
  const T one_minus_beta2 = T(1) - beta2;
  for (size_t i = 0; i < n; ++i) {
    const T g = grad[i];
    const T new_m = m[i] + (g - m[i]) * one_minus_beta1;
    const T new_v = v[i] + (g * g - v[i]) * one_minus_beta2;
    m[i] = new_m;
    v[i] = new_v;
    var[i] = var[i] - (new_m * alpha) / (std::sqrt(new_v) + epsilon);
  }
}

}  // namespace eager::internal
