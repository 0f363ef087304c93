#pragma once

// TensorFlow's ApplyAdam kernel (FORMAT.md 7.1), one fused pass, shared by
// the eager Adam (autodiff/adam.cc) and the graph's ApplyAdam node
// (ops/training_ops.cc) so both round alike. Operation order and association
// are TensorFlow's. For those two only; not installed (cmake/package.cmake):
// not user API. Every file that includes this must be compiled with
// -ffp-contract=off (no fused multiply-add, which would change the rounding):
// ops/fp_contract_off.h refuses to compile it otherwise.
//
// Two forms, one loop (AdamLoop): in place (ApplyAdamKernel), and into new
// buffers (ApplyAdamKernelTo: when the old ones are still held elsewhere,
// e.g. by an asynchronous save, without copying them first). Both give the
// same bits element for element.
//
// Both run over the intra-op pool (ops/parallel.h) once a variable
// has kAdamParallelMin elements, in blocks of kAdamGrain. Each element's
// update reads and writes that element alone, so the cut changes no bit and
// every thread count gives the same result; the pool's workers run in kernel
// mode as the caller does (denormals flushed, rounding to nearest).

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "ops/fp_contract_off.h"
#include "ops/parallel.h"

namespace eager::internal {

// Where AdamLoop reads the old var, m and v from.
enum class AdamBuffers {
  kInPlace,   // from the output buffers themselves (the *_in pointers are unused)
  kSeparate,  // from the *_in buffers, distinct from the outputs
};

// The one Adam loop. It takes 1 - beta_1 and 1 - beta_2 as computed by the
// caller: TF's ApplyAdam kernel subtracts in T (ApplyAdamKernel's callers
// pass T(1) - beta), Keras 3 and tf_keras 2.11+ in Python double, rounded
// to T after (autodiff/adam.cc). The buffers it touches are distinct, which __restrict
// tells the vectorizer; in place, the old values are read through the output
// pointers they are then written through, so no two restrict pointers name
// one buffer (which would be undefined behaviour). Call it through the two
// forms below.
template <AdamBuffers kBuffers, typename T>
void AdamLoop(size_t n, const T* __restrict grad, const T* __restrict var_in,
              const T* __restrict m_in, const T* __restrict v_in, T* __restrict var_out,
              T* __restrict m_out, T* __restrict v_out, T lr, T one_minus_beta1, T one_minus_beta2,
              T beta1_power, T beta2_power, T epsilon) {
  constexpr bool kInPlace = kBuffers == AdamBuffers::kInPlace;
  const T alpha = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
  for (size_t i = 0; i < n; ++i) {
    const T g = grad[i];
    const T var = kInPlace ? var_out[i] : var_in[i];
    const T m = kInPlace ? m_out[i] : m_in[i];
    const T v = kInPlace ? v_out[i] : v_in[i];
    const T new_m = m + (g - m) * one_minus_beta1;
    const T new_v = v + (g * g - v) * one_minus_beta2;
    m_out[i] = new_m;
    v_out[i] = new_v;
    var_out[i] = var - (new_m * alpha) / (std::sqrt(new_v) + epsilon);
  }
}

// The loop costs ~0.6 ns per float32 element on one core here (a vector
// square root and division per element; benchmarks/README.md), so 2^16
// elements are ~40 us, far above a job's hand-off to a worker (a few us).
// Blocks of 2^14 (~10 us) let the caller and a worker even out when one runs
// slower: the main job's 784 x 256 kernel is 13 blocks.
inline constexpr int64_t kAdamParallelMin = int64_t{1} << 16;
inline constexpr int64_t kAdamGrain = int64_t{1} << 14;

// In place: var, m and v are read and written; all four buffers distinct.
template <typename T>
void ApplyAdamKernel(size_t n, const T* __restrict grad, T* __restrict var, T* __restrict m,
                     T* __restrict v, T lr, T one_minus_beta1, T one_minus_beta2, T beta1_power,
                     T beta2_power, T epsilon) {
  ParallelFor(
      static_cast<int64_t>(n), kAdamGrain, kAdamParallelMin, [&](int64_t begin, int64_t end) {
        const auto b = static_cast<size_t>(begin);
        AdamLoop<AdamBuffers::kInPlace, T>(
            static_cast<size_t>(end - begin), grad + b, nullptr, nullptr, nullptr, var + b, m + b,
            v + b, lr, one_minus_beta1, one_minus_beta2, beta1_power, beta2_power, epsilon);
      });
}

// Writes the updated var, m and v to the *_out buffers, reading the *_in
// ones; all seven buffers distinct.
template <typename T>
void ApplyAdamKernelTo(size_t n, const T* __restrict grad, const T* __restrict var_in,
                       const T* __restrict m_in, const T* __restrict v_in, T* __restrict var_out,
                       T* __restrict m_out, T* __restrict v_out, T lr, T one_minus_beta1,
                       T one_minus_beta2, T beta1_power, T beta2_power, T epsilon) {
  ParallelFor(
      static_cast<int64_t>(n), kAdamGrain, kAdamParallelMin, [&](int64_t begin, int64_t end) {
        const auto b = static_cast<size_t>(begin);
        AdamLoop<AdamBuffers::kSeparate, T>(static_cast<size_t>(end - begin), grad + b, var_in + b,
                                            m_in + b, v_in + b, var_out + b, m_out + b, v_out + b,
                                            lr, one_minus_beta1, one_minus_beta2, beta1_power,
                                            beta2_power, epsilon);
      });
}

}  // namespace eager::internal
