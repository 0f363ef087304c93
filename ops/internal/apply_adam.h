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

// Writes the updated var, m and v to the *_out buffers, reading the *_in
// ones; all seven buffers distinct. The same arithmetic as ApplyAdamKernel,
// element for element: an update into new buffers (when the old ones are
// still held elsewhere, e.g. by an asynchronous save) without copying them
// first.
template <typename T>
void ApplyAdamKernelTo(size_t n, const T* __restrict grad, const T* __restrict var_in,
                       const T* __restrict m_in, const T* __restrict v_in, T* __restrict var_out,
                       T* __restrict m_out, T* __restrict v_out, T lr, T beta1, T beta2,
                       T beta1_power, T beta2_power, T epsilon) {
  const T alpha = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
  const T one_minus_beta1 = T(1) - beta1;
  const T one_minus_beta2 = T(1) - beta2;
  for (size_t i = 0; i < n; ++i) {
    const T g = grad[i];
    const T new_m = m_in[i] + (g - m_in[i]) * one_minus_beta1;
    const T new_v = v_in[i] + (g * g - v_in[i]) * one_minus_beta2;
    m_out[i] = new_m;
    v_out[i] = new_v;
    var_out[i] = var_in[i] - (new_m * alpha) / (std::sqrt(new_v) + epsilon);
  }
}

// In place: var, m and v are both read and written.
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
