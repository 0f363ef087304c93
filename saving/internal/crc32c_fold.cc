#include "saving/internal/crc32c_fold.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cstdlib>

namespace eager::internal::crc32c {

#if defined(__x86_64__)
namespace {

// Polynomials here are in the reflected order of CRC-32C states: the first
// bit of the message (bit 0 of byte 0) is the highest power of x. A 128-bit
// piece loaded from memory is then L(x) * x^64 + H(x), L its first eight
// bytes and H its last eight, each read as a little-endian uint64 whose bit
// i is the coefficient of x^(63 - i).
constexpr uint32_t kPolynomial = 0x82f63b78u;  // P(x) - x^32, reflected

// x^e mod P(x) as a reflected 32-bit value (bit 31 - d holds x^d).
constexpr uint32_t XPowModP(int e) {
  uint32_t r = 0x80000000u;  // x^0
  for (int i = 0; i < e; ++i) r = (r >> 1) ^ ((r & 1) ? kPolynomial : 0);
  return r;
}

// The 64-bit operand that multiplies a 64-bit half by x^e mod P. A carry-less
// product of two reflected operands comes out multiplied by an extra x (the
// product's top bit position is unused), hence x^(e - 1); the shift puts the
// 32 coefficients where a reflected uint64 keeps x^31 .. x^0.
constexpr uint64_t Multiplier(int e) { return uint64_t{XPowModP(e - 1)} << 32; }

// Moving a piece `bits` further along the message multiplies it by x^bits:
// L * x^(64 + bits) + H * x^bits, each product under 96 bits, so the result
// is again a 128-bit piece, congruent modulo P, that can be XORed into the
// piece found `bits` later.
struct FoldConstants {
  uint64_t low;   // for L, the piece's first eight bytes
  uint64_t high;  // for H
};
constexpr FoldConstants ForDistance(int bits) { return {Multiplier(64 + bits), Multiplier(bits)}; }

constexpr FoldConstants k2048 = ForDistance(2048);  // four 512-bit accumulators apart
constexpr FoldConstants k512 = ForDistance(512);    // one accumulator apart
constexpr FoldConstants k384 = ForDistance(384);    // lane 0 to lane 3
constexpr FoldConstants k256 = ForDistance(256);    // lane 1 to lane 3
constexpr FoldConstants k128 = ForDistance(128);    // lane 2 to lane 3

#define EAGER_FOLD_TARGET __attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.2")))

// (_mm512_set_epi64, not _mm512_broadcast_i32x4 or the extract intrinsics:
// GCC 12's headers for those trip -Werror=uninitialized.)
EAGER_FOLD_TARGET inline __m512i Broadcast(FoldConstants k) {
  const auto low = static_cast<long long>(k.low);
  const auto high = static_cast<long long>(k.high);
  return _mm512_set_epi64(high, low, high, low, high, low, high, low);
}

EAGER_FOLD_TARGET inline __m512i Load(const uint8_t* p) { return _mm512_loadu_si512(p); }

// Each 128-bit lane of `acc` moved by the lane's constants, XORed with `next`.
EAGER_FOLD_TARGET inline __m512i FoldInto(__m512i acc, __m512i k, __m512i next) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(acc, k, 0x00),
                                   _mm512_clmulepi64_epi128(acc, k, 0x11), next, 0x96);
}

}  // namespace

bool HasCarrylessFold() {
  static const bool has = [] {
    __builtin_cpu_init();  // libgcc reports AVX-512 only when the OS saves zmm state
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("pclmul") &&
           __builtin_cpu_supports("sse4.2");
  }();
  return has;
}

EAGER_FOLD_TARGET uint32_t FoldBlocks(uint32_t state, const uint8_t* p, size_t n) {
  const uint8_t* const end = p + n;
  // The state XORed into the message's first 32 bits continues the CRC of
  // what came before (the state is that prefix times x^32 mod P).
  __m512i a0 = _mm512_xor_si512(Load(p), _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, state));
  __m512i a1 = Load(p + 64);
  __m512i a2 = Load(p + 128);
  __m512i a3 = Load(p + 192);
  p += 256;
  const __m512i by2048 = Broadcast(k2048);
  for (; end - p >= 256; p += 256) {
    a0 = FoldInto(a0, by2048, Load(p));
    a1 = FoldInto(a1, by2048, Load(p + 64));
    a2 = FoldInto(a2, by2048, Load(p + 128));
    a3 = FoldInto(a3, by2048, Load(p + 192));
  }
  const __m512i by512 = Broadcast(k512);
  a1 = FoldInto(a0, by512, a1);
  a2 = FoldInto(a1, by512, a2);
  a3 = FoldInto(a2, by512, a3);
  for (; p < end; p += 64) a3 = FoldInto(a3, by512, Load(p));
  // The four lanes of a3 into one 128-bit piece ending at `end`: lanes 0-2
  // moved to lane 3 (lane 3's constants are 0), lane 3 kept as it is.
  const __m512i to_last =
      _mm512_set_epi64(0, 0, static_cast<long long>(k128.high), static_cast<long long>(k128.low),
                       static_cast<long long>(k256.high), static_cast<long long>(k256.low),
                       static_cast<long long>(k384.high), static_cast<long long>(k384.low));
  const __m512i lanes = FoldInto(a3, to_last, _mm512_maskz_mov_epi64(0xc0, a3));
  alignas(64) uint64_t q[8];
  _mm512_store_si512(q, lanes);
  // That piece (q[0] ^ ... its first eight bytes, q[1] ^ ... its last) times
  // x^32 mod P is the state after the whole message: the crc32 instruction
  // from a zero state computes exactly that.
  uint64_t c = __builtin_ia32_crc32di(0, q[0] ^ q[2] ^ q[4] ^ q[6]);
  c = __builtin_ia32_crc32di(c, q[1] ^ q[3] ^ q[5] ^ q[7]);
  return static_cast<uint32_t>(c);
}

#undef EAGER_FOLD_TARGET

#else  // not x86-64

bool HasCarrylessFold() { return false; }
uint32_t FoldBlocks(uint32_t, const uint8_t*, size_t) { std::abort(); }  // never called

#endif

}  // namespace eager::internal::crc32c
