#pragma once

// Arithmetic on CRC-32C states as polynomials over GF(2) modulo the CRC
// polynomial P(x) = x^32 + 0x1EDC6F41 (FORMAT.md 1.2): the one coding of it,
// from which every derived constant of the kernels is built at compile time
// (crc32c_tables.h, crc32c_fold.h) and Combine multiplies at run time.
//
// A value is reflected, as CRC-32C states are: bit 31 - d holds the
// coefficient of x^d, so x^0 is 0x80000000 and multiplying by x is a right
// shift. The raw (unconditioned) state after a message M is M(x) * x^32 mod P,
// so extending a state by n zero bytes multiplies it by x^(8n): that is what
// lets chains of a message be checksummed apart and joined.

#include <array>
#include <cstdint>

namespace eager::internal::crc32c {

inline constexpr uint32_t kPolynomial = 0x82f63b78u;  // P(x) - x^32, reflected
inline constexpr uint32_t kOne = 0x80000000u;         // x^0

// a * x mod P.
constexpr uint32_t TimesX(uint32_t a) { return (a >> 1) ^ ((a & 1) ? kPolynomial : 0); }

// a * b mod P, one coefficient of a at a time (32 steps).
constexpr uint32_t MultiplyModP(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (int d = 0; d < 32; ++d) {
    if (a & (kOne >> d)) product ^= b;
    b = TimesX(b);
  }
  return product;
}

// x^n mod P by repeated squaring (at most 64 squarings and multiplies).
constexpr uint32_t XPowModP(uint64_t n) {
  uint32_t result = kOne;
  uint32_t power = TimesX(kOne);  // x^1, then x^2, x^4, ...
  for (; n != 0; n >>= 1) {
    if (n & 1) result = MultiplyModP(result, power);
    power = MultiplyModP(power, power);
  }
  return result;
}

// x^(8 * bytes) mod P: what extending a state by `bytes` zero bytes multiplies
// it by. (x^bytes)^8 rather than x^(8 * bytes), which could overflow.
constexpr uint32_t ZeroBytesMultiplier(uint64_t bytes) {
  uint32_t m = XPowModP(bytes);
  for (int i = 0; i < 3; ++i) m = MultiplyModP(m, m);
  return m;
}

// table[b] == MultiplyModP(b << (8 * byte), m): a state's byte `byte` times m,
// so that multiplying by a fixed m is one lookup per byte of the state.
constexpr std::array<uint32_t, 256> ByteProducts(int byte, uint32_t m) {
  std::array<uint32_t, 256> table{};
  for (uint32_t b = 0; b < 256; ++b) table[b] = MultiplyModP(b << (8 * byte), m);
  return table;
}

}  // namespace eager::internal::crc32c
