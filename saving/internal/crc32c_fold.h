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
// Internal to crc32c.cc; tests reach it through crc32c.h's ExtendWith.

#include <cstddef>
#include <cstdint>

namespace eager::internal::crc32c {

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
