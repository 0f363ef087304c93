#pragma once

// CRC-32C by carry-less multiplication (VPCLMULQDQ on 512-bit registers):
// the bulk kernel crc32c.cc dispatches to on CPUs that have it. The message
// is a polynomial over GF(2); a 128-bit piece of it moved D bits further
// along is the piece times x^D, and modulo the CRC polynomial that product
// is two 64x32-bit carry-less multiplies by precomputed constants. Sixteen
// such pieces (four 512-bit accumulators) fold 256 bytes per step with no
// dependency between them, several times the speed of the crc32
// instruction's three interleaved chains (benchmarks/bundle_benchmark,
// BM_Crc32c). The technique is Intel's white paper "Fast CRC Computation
// for Generic Polynomials Using PCLMULQDQ Instruction" (Gopal et al., 2009).
//
// Internal to crc32c.cc; tests reach it through crc32c.h's ExtendWith, and
// check the folding constants below against a bit-at-a-time computation.

#include <cstddef>
#include <cstdint>

#include "saving/bundle/internal/crc32c_poly.h"

namespace eager::internal::crc32c {

// Polynomials here are in the reflected order of CRC-32C states: the first
// bit of the message (bit 0 of byte 0) is the highest power of x. A 128-bit
// piece loaded from memory is then L(x) * x^64 + H(x), L its first eight
// bytes and H its last eight, each read as a little-endian uint64 whose bit
// i is the coefficient of x^(63 - i).
//
// The 64-bit operand that multiplies a 64-bit half by x^e mod P. A carry-less
// product of two reflected operands comes out multiplied by an extra x (the
// product's top bit position is unused), hence x^(e - 1); the shift puts the
// 32 coefficients where a reflected uint64 keeps x^31 .. x^0.
constexpr uint64_t FoldMultiplier(int e) { return uint64_t{XPowModP(e - 1)} << 32; }

// Moving a piece `bits` further along the message multiplies it by x^bits:
// L * x^(64 + bits) + H * x^bits, each product under 96 bits, so the result
// is again a 128-bit piece, congruent modulo P, that can be XORed into the
// piece found `bits` later.
struct FoldConstants {
  uint64_t low;   // for L, the piece's first eight bytes
  uint64_t high;  // for H
};
constexpr FoldConstants FoldConstantsFor(int bits) {
  return {FoldMultiplier(64 + bits), FoldMultiplier(bits)};
}

inline constexpr FoldConstants kFold2048 = FoldConstantsFor(2048);  // four zmm accumulators apart
inline constexpr FoldConstants kFold512 = FoldConstantsFor(512);    // one accumulator apart
inline constexpr FoldConstants kFold384 = FoldConstantsFor(384);    // lane 0 to lane 3
inline constexpr FoldConstants kFold256 = FoldConstantsFor(256);    // lane 1 to lane 3
inline constexpr FoldConstants kFold128 = FoldConstantsFor(128);    // lane 2 to lane 3

// Whether this CPU and OS run FoldBlocks: AVX-512F/VL (zmm state saved by
// the OS), VPCLMULQDQ and SSE4.2.
bool HasCarrylessFold();

// The bytes FoldBlocks takes from a message of n bytes: 0 below
// kMinFoldBytes, otherwise n rounded down to a multiple of 64.
inline constexpr size_t kMinFoldBytes = 256;
inline size_t FoldableBytes(size_t n) { return n < kMinFoldBytes ? 0 : n & ~size_t{63}; }

// The raw (unconditioned) CRC state after `state` is extended by p[0, n).
// REQUIRES: HasCarrylessFold(), n >= kMinFoldBytes and n % 64 == 0.
uint32_t FoldBlocks(uint32_t state, const uint8_t* p, size_t n);

}  // namespace eager::internal::crc32c
