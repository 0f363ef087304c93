#pragma once

// Half and BFloat16: the two 16-bit floating element types TensorFlow saves
// (DT_HALF, DT_BFLOAT16), as storage types with conversions to and from float.
//
//   Half h(0.1f);              // IEEE 754 binary16, rounded to nearest even
//   float f = float(h);        // exact: every half is a float
//   BFloat16 b(0.1f);          // the upper 16 bits of the float32, rounded
//   uint16_t raw = h.bits;     // what a checkpoint stores, little-endian
//
// eager keeps them for storage, checkpoints, printing and Cast; it has no
// arithmetic kernels in 16 bits (compute in float32 and Cast back, as TF's
// CPU kernels do for bfloat16). Equality is IEEE's (NaN != NaN, -0 == +0).
// Rounding is round-to-nearest-even, as Eigen (and so TF) converts; NaN stays
// NaN (quiet), values beyond the range become infinities.

#include <bit>
#include <cmath>
#include <cstdint>

namespace eager {

namespace internal {

// float -> binary16 bits, round to nearest even.
constexpr uint16_t FloatToHalfBits(float value) {
  const uint32_t f = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  const uint32_t abs = f & 0x7fffffffu;
  if (abs > 0x7f800000u) {  // NaN: quiet, keep the top payload bits
    return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  }
  if (abs >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 2^16 and inf
  if (abs < 0x38800000u) {               // below 2^-14, the smallest normal half
    if (abs < 0x33000000u) return sign;  // below 2^-25: rounds to (signed) zero
    // A subnormal half counts units of 2^-24; the float is m * 2^(e - 150).
    const uint32_t e = abs >> 23;
    const uint32_t m = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14 .. 24
    uint32_t q = m >> shift;
    const uint32_t rest = m & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (q & 1u))) ++q;  // may carry into the smallest normal
    return static_cast<uint16_t>(sign | q);
  }
  // Normal: exponent bias 127 -> 15, mantissa 23 -> 10 bits. A carry out of
  // the mantissa bumps the exponent, up to 0x7c00 (infinity), as it should.
  const uint32_t r = abs - 0x38000000u;
  uint32_t q = r >> 13;
  const uint32_t rest = r & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (q & 1u))) ++q;
  return static_cast<uint16_t>(sign | q);
}

// binary16 bits -> float (exact).
inline float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// float -> bfloat16 bits, round to nearest even.
constexpr uint16_t FloatToBFloat16Bits(float value) {
  const uint32_t f = std::bit_cast<uint32_t>(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) {  // NaN: quiet
    return static_cast<uint16_t>((f >> 16) | 0x0040u);
  }
  const uint32_t rounding = 0x7fffu + ((f >> 16) & 1u);
  return static_cast<uint16_t>((f + rounding) >> 16);
}

inline float BFloat16BitsToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

}  // namespace internal

struct Half {
  uint16_t bits = 0;

  Half() = default;
  explicit Half(float value) : bits(internal::FloatToHalfBits(value)) {}
  static Half FromBits(uint16_t bits) {
    Half h;
    h.bits = bits;
    return h;
  }
  explicit operator float() const { return internal::HalfBitsToFloat(bits); }
  explicit operator double() const { return internal::HalfBitsToFloat(bits); }
  friend bool operator==(Half a, Half b) { return float(a) == float(b); }
};

struct BFloat16 {
  uint16_t bits = 0;

  BFloat16() = default;
  explicit BFloat16(float value) : bits(internal::FloatToBFloat16Bits(value)) {}
  static BFloat16 FromBits(uint16_t bits) {
    BFloat16 b;
    b.bits = bits;
    return b;
  }
  explicit operator float() const { return internal::BFloat16BitsToFloat(bits); }
  explicit operator double() const { return internal::BFloat16BitsToFloat(bits); }
  friend bool operator==(BFloat16 a, BFloat16 b) { return float(a) == float(b); }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);

}  // namespace eager
