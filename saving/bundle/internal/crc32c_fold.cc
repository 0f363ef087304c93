#include "saving/bundle/internal/crc32c_fold.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cstdlib>

namespace eager::internal::crc32c {

#if defined(__x86_64__)
namespace {

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
  const __m512i by2048 = Broadcast(kFold2048);
  for (; end - p >= 256; p += 256) {
    a0 = FoldInto(a0, by2048, Load(p));
    a1 = FoldInto(a1, by2048, Load(p + 64));
    a2 = FoldInto(a2, by2048, Load(p + 128));
    a3 = FoldInto(a3, by2048, Load(p + 192));
  }
  const __m512i by512 = Broadcast(kFold512);
  a1 = FoldInto(a0, by512, a1);
  a2 = FoldInto(a1, by512, a2);
  a3 = FoldInto(a2, by512, a3);
  for (; p < end; p += 64) a3 = FoldInto(a3, by512, Load(p));
  // The four lanes of a3 into one 128-bit piece ending at `end`: lanes 0-2
  // moved to lane 3 (lane 3's constants are 0), lane 3 kept as it is.
  const __m512i to_last = _mm512_set_epi64(
      0, 0, static_cast<long long>(kFold128.high), static_cast<long long>(kFold128.low),
      static_cast<long long>(kFold256.high), static_cast<long long>(kFold256.low),
      static_cast<long long>(kFold384.high), static_cast<long long>(kFold384.low));
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
