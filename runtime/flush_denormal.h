#pragma once

// The floating-point mode every kernel runs in: denormals flushed to zero
// and rounding to nearest, as in TensorFlow, whose eager runtime wraps each
// kernel in port::ScopedFlushDenormal and ScopedSetRound(FE_TONEAREST) and
// whose pool threads start with the same two scopes. For eager's own code
// (runtime's Variable, ops' kernels and pool, autodiff's optimizers); not
// installed (cmake/package.cmake): not user API.
//
// Why: an operation that reads or produces a denormal (a float below
// 2^-126 in magnitude) takes a microcode assist on x86, ~100 times slower
// than a normal one. Training makes them: a pixel that is 0 in every image
// gives its kernel row exact-zero gradients, so Adam's m there decays by
// beta_1 each step and is denormal after ~800 steps; the main job ran at
// half speed in its Adam loop until this mode was set.
//
// In this mode a denormal input reads as a zero of its sign and a result
// that would be denormal is written as a zero of its sign: x86 sets FTZ and
// DAZ in MXCSR, aarch64 sets FZ in FPCR (which does both); rounding control
// is set to nearest. Kernels touch only SSE/AVX state (no long double), so
// x87's control word is left alone. On other processors it is a no-op
// (kCanFlushDenormals is false there).
//
// ScopedFlushDenormal restores the caller's mode when it ends, also when a
// kernel throws; exception flags raised inside stay raised, and exception
// masks are never changed. Its cost is one read of the control register
// when the mode is already set (nested scopes, pool workers, a thread that
// set FTZ itself), else two writes and two reads (a few ns per op).

#include <cstdint>

#if defined(__x86_64__) || defined(_M_X64) || (defined(__i386__) && defined(__SSE__))
#include <xmmintrin.h>
#define EAGER_FP_CONTROL_MXCSR 1
#elif defined(__aarch64__)
#define EAGER_FP_CONTROL_FPCR 1
#endif

namespace eager::internal {

#if defined(EAGER_FP_CONTROL_MXCSR)
using FpControl = uint32_t;
inline constexpr bool kCanFlushDenormals = true;
inline constexpr FpControl kFlushToZero = 1u << 15;      // FTZ: denormal results become 0
inline constexpr FpControl kDenormalsAreZero = 1u << 6;  // DAZ: denormal inputs read as 0
inline constexpr FpControl kRoundingControl = 3u << 13;  // RC; 00 is to nearest
inline FpControl ReadFpControl() { return _mm_getcsr(); }
inline void WriteFpControl(FpControl value) { _mm_setcsr(value); }
#elif defined(EAGER_FP_CONTROL_FPCR)
using FpControl = uint64_t;
inline constexpr bool kCanFlushDenormals = true;
inline constexpr FpControl kFlushToZero = uint64_t{1} << 24;      // FZ: inputs and results
inline constexpr FpControl kDenormalsAreZero = 0;                 // (FZ covers inputs too)
inline constexpr FpControl kRoundingControl = uint64_t{3} << 22;  // RMode; 00 is to nearest
inline FpControl ReadFpControl() {
  FpControl value;
  asm volatile("mrs %0, fpcr" : "=r"(value));
  return value;
}
inline void WriteFpControl(FpControl value) { asm volatile("msr fpcr, %0" : : "r"(value)); }
#else
using FpControl = uint32_t;
inline constexpr bool kCanFlushDenormals = false;
inline constexpr FpControl kFlushToZero = 0;
inline constexpr FpControl kDenormalsAreZero = 0;
inline constexpr FpControl kRoundingControl = 0;
inline FpControl ReadFpControl() { return 0; }
inline void WriteFpControl(FpControl) {}
#endif

// The bits this file owns, and their value in kernel mode.
inline constexpr FpControl kKernelModeMask = kFlushToZero | kDenormalsAreZero | kRoundingControl;
inline constexpr FpControl kKernelMode = kFlushToZero | kDenormalsAreZero;

// `control` with its kernel-mode bits taken from `mode`, all others kept.
inline constexpr FpControl WithModeBits(FpControl control, FpControl mode) {
  return (control & ~kKernelModeMask) | (mode & kKernelModeMask);
}

// Kernel mode on this thread while alive; the previous mode afterwards.
class ScopedFlushDenormal {
 public:
  ScopedFlushDenormal() : saved_(ReadFpControl()) {
    if ((saved_ & kKernelModeMask) != kKernelMode) {
      WriteFpControl(WithModeBits(saved_, kKernelMode));
      changed_ = true;
    }
  }
  // Re-reads the register so the exception flags the kernel raised survive.
  ~ScopedFlushDenormal() {
    if (changed_) WriteFpControl(WithModeBits(ReadFpControl(), saved_));
  }
  ScopedFlushDenormal(const ScopedFlushDenormal&) = delete;
  ScopedFlushDenormal& operator=(const ScopedFlushDenormal&) = delete;

 private:
  FpControl saved_;
  bool changed_ = false;
};

// Kernel mode on this thread for the rest of its life: for threads that run
// nothing but kernels (the intra-op pool's workers), as TF's pool threads.
inline void EnterKernelModeForThisThread() {
  WriteFpControl(WithModeBits(ReadFpControl(), kKernelMode));
}

}  // namespace eager::internal
