#pragma once

// The lookup tables of crc32c.cc's table and crc32-instruction kernels, built
// at compile time from crc32c_poly.h's arithmetic. Internal to crc32c.cc;
// crc32c_kernels_test checks them against a bit-at-a-time computation.

#include <array>
#include <cstddef>
#include <cstdint>

#include "saving/bundle/internal/crc32c_poly.h"

namespace eager::internal::crc32c {

// Eight tables of 256 entries, one per byte position of a 64-bit word.
using ByteTables8 = std::array<std::array<uint32_t, 256>, 8>;
using ByteTables4 = std::array<std::array<uint32_t, 256>, 4>;

// kSlicingTables[k][b]: the raw state after byte b followed by k zero bytes,
// from state 0 (b * x^(8(k + 1)) mod P), so eight bytes fold in with eight
// lookups and no data dependency between them (slicing-by-8).
inline constexpr ByteTables8 kSlicingTables = [] {
  ByteTables8 t{};
  for (int k = 0; k < 8; ++k)
    t[static_cast<size_t>(k)] = ByteProducts(0, ZeroBytesMultiplier(k + 1));
  return t;
}();

// The crc32 instruction kernel's interleaved chains are kChainStride bytes
// long; joining them advances a state over kChainStride zero bytes, a
// multiplication by a constant done with four lookups: kChainShiftTables[k]
// takes the state's byte k.
inline constexpr size_t kChainStride = 4096;
inline constexpr ByteTables4 kChainShiftTables = [] {
  ByteTables4 t{};
  const uint32_t shift = ZeroBytesMultiplier(kChainStride);
  for (int k = 0; k < 4; ++k) t[static_cast<size_t>(k)] = ByteProducts(k, shift);
  return t;
}();

// state * x^(8 * kChainStride) mod P.
inline uint32_t ShiftByChainStride(uint32_t state) {
  const auto& t = kChainShiftTables;
  return t[0][state & 0xff] ^ t[1][(state >> 8) & 0xff] ^ t[2][(state >> 16) & 0xff] ^
         t[3][state >> 24];
}

}  // namespace eager::internal::crc32c
