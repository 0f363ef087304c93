#pragma once

// The calling thread's floating-point control register, for tests of the
// kernel mode (runtime/flush_denormal.h). Header-only, std and
// runtime only, so every test binary can use it.

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <limits>

#include "runtime/flush_denormal.h"

namespace eager::testing {

// The register without its sticky exception flags (x86 keeps them in MXCSR's
// low six bits; aarch64 keeps them in FPSR): what a kernel must give back.
inline internal::FpControl CallerControl() {
#if defined(EAGER_FP_CONTROL_MXCSR)
  return internal::ReadFpControl() & ~internal::FpControl{0x3f};
#else
  return internal::ReadFpControl();
#endif
}

// Sets this thread's flush bits and rounding mode for the test's duration
// (`flush` true: FTZ and DAZ, or FZ), then restores the register.
class CallerMode {
 public:
  CallerMode(bool flush, int rounding)
      : saved_(internal::ReadFpControl()), saved_rounding_(std::fegetround()) {
    const internal::FpControl bits = internal::kFlushToZero | internal::kDenormalsAreZero;
    internal::WriteFpControl(flush ? (saved_ | bits) : (saved_ & ~bits));
    std::fesetround(rounding);
  }
  ~CallerMode() {
    std::fesetround(saved_rounding_);  // also x87's, which fesetround set
    internal::WriteFpControl(saved_);
  }
  CallerMode(const CallerMode&) = delete;
  CallerMode& operator=(const CallerMode&) = delete;

 private:
  internal::FpControl saved_;
  int saved_rounding_;
};

// 4 x 2^-149, a float32 denormal; and one below FLT_MIN that is 0.5 x 2^-126.
inline float SmallDenormal() { return std::numeric_limits<float>::denorm_min() * 4; }
inline float HalfMinNormal() { return std::numeric_limits<float>::min() / 2; }

// a * b computed on this thread in its current mode (volatile: the compiler
// may neither fold it nor drop a multiplication by one).
inline float MultiplyHere(float a, float b) {
  volatile float x = a;
  volatile float y = b;
  return x * y;
}

inline uint32_t Bits(float x) { return std::bit_cast<uint32_t>(x); }

}  // namespace eager::testing
