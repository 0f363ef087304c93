#include "ops/internal/avx512_sgemm.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "ops/internal/blas_core.h"
#include "ops/internal/gemm.h"

// Only the functions marked EAGER_AVX512 need AVX-512; the rest of this file
// is compiled for the build's target (which EAGER_NATIVE=OFF keeps generic),
// so that deciding whether to call them is safe on any CPU.
#define EAGER_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma")))

namespace eager::internal {
namespace {

// How OpenBLAS 0.3.21's level-3 driver, on one thread, cuts k into K-blocks
// on the cores with SkylakeX's sgemm (HasSkylakeXSgemm): GEMM_Q long while at
// least twice that remains, else what remains, halved (rounded up to
// GEMM_UNROLL_M, 16) when more than GEMM_Q; k = 449 is cut 224 + 225. Each
// element of C is one FMA chain per K-block, the blocks' sums added in
// order, so GEMM_Q fixes the bits. Measured against the library (and the
// first-use check confirms it): 448 on SkylakeX, 320 on Cooperlake (AVX-512
// BF16 CPUs, e.g. AMD Zen 4), where 0.3.21 runs the same kernel with a smaller Q.
constexpr int64_t kBlasUnrollM = 16;

int64_t BlasQ() {
  static const int64_t q = [] {
    EnsureBlasCore();
    return BlasCoreName() == "Cooperlake" ? int64_t{320} : int64_t{448};
  }();
  return q;
}

int64_t KBlockAt(int64_t k, int64_t done) {
  const int64_t q = BlasQ();
  const int64_t left = k - done;
  if (left >= 2 * q) return q;
  if (left > q) return (left / 2 + kBlasUnrollM - 1) / kBlasUnrollM * kBlasUnrollM;
  return left;
}

// The longest K-block of k. Not always the first: k = 449 is cut 224 + 225.
int64_t LongestKBlock(int64_t k) {
  int64_t longest = 0;
  for (int64_t done = 0; done < k;) {
    const int64_t len = KBlockAt(k, done);
    longest = std::max(longest, len);
    done += len;
  }
  return longest;
}

// The kernel's tile: kRows rows of C by 32 columns (two zmm), 24 of the 32
// zmm registers as accumulators. Twelve rows measured as fast as 8 or 14.
constexpr int kRows = 12;
constexpr int kCols = 32;

// The lanes of a panel row's two zmm halves that hold its first `cols`
// (<= 32) columns.
std::pair<__mmask16, __mmask16> PanelMasks(int64_t cols) {
  const auto first = [](int64_t n) {
    return n >= 16 ? __mmask16{0xffff} : static_cast<__mmask16>((1u << n) - 1);
  };
  return {first(cols), first(std::max<int64_t>(cols - 16, 0))};
}

// dst[c * dst_ld + i] = src[i * ld + c] for i, c < 16: 16 rows of 16 floats
// transposed in registers (pairs of floats, then of doubles, then 128-bit
// lanes twice).
EAGER_AVX512 void Transpose16x16(const float* src, int64_t ld, float* dst, int64_t dst_ld) {
  __m512 r[16], t[16], u[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * ld);
  // t[2p], t[2p+1]: rows 2p and 2p+1 interleaved; per 128-bit lane L
  // columns 4L, 4L+1 (lo) and 4L+2, 4L+3 (hi).
  for (int p = 0; p < 8; ++p) {
    t[2 * p] = _mm512_unpacklo_ps(r[2 * p], r[2 * p + 1]);
    t[2 * p + 1] = _mm512_unpackhi_ps(r[2 * p], r[2 * p + 1]);
  }
  // u[4q+s], lane L: column 4L+s of rows 4q..4q+3.
  for (int q = 0; q < 4; ++q) {
    const __m512d lo01 = _mm512_castps_pd(t[4 * q]), hi01 = _mm512_castps_pd(t[4 * q + 1]);
    const __m512d lo23 = _mm512_castps_pd(t[4 * q + 2]), hi23 = _mm512_castps_pd(t[4 * q + 3]);
    u[4 * q] = _mm512_castpd_ps(_mm512_unpacklo_pd(lo01, lo23));
    u[4 * q + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(lo01, lo23));
    u[4 * q + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(hi01, hi23));
    u[4 * q + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(hi01, hi23));
  }
  // Column 4L+s: lane L of u[s], u[4+s], u[8+s], u[12+s], in that order.
  for (int s = 0; s < 4; ++s) {
    const __m512 x_lo = _mm512_shuffle_f32x4(u[s], u[4 + s], 0x44);  // lanes 0,1 of each
    const __m512 x_hi = _mm512_shuffle_f32x4(u[s], u[4 + s], 0xEE);  // lanes 2,3 of each
    const __m512 y_lo = _mm512_shuffle_f32x4(u[8 + s], u[12 + s], 0x44);
    const __m512 y_hi = _mm512_shuffle_f32x4(u[8 + s], u[12 + s], 0xEE);
    _mm512_storeu_ps(dst + (0 + s) * dst_ld, _mm512_shuffle_f32x4(x_lo, y_lo, 0x88));
    _mm512_storeu_ps(dst + (4 + s) * dst_ld, _mm512_shuffle_f32x4(x_lo, y_lo, 0xDD));
    _mm512_storeu_ps(dst + (8 + s) * dst_ld, _mm512_shuffle_f32x4(x_hi, y_hi, 0x88));
    _mm512_storeu_ps(dst + (12 + s) * dst_ld, _mm512_shuffle_f32x4(x_hi, y_hi, 0xDD));
  }
}

// Packs columns [j0, j0 + cols) (cols <= 32) of rows [k0, k0 + kc) of op(B)
// into out[kk * 32 + j], zero beyond `cols` (those lanes are never stored).
EAGER_AVX512 void PackPanel(bool tb, const float* b, int64_t ldb, int64_t k0, int64_t kc,
                            int64_t j0, int64_t cols, float* out) {
  if (!tb) {  // op(B) rows are B's rows: copy 32-float slices
    const auto [m0, m1] = PanelMasks(cols);
    for (int64_t kk = 0; kk < kc; ++kk) {
      const float* src = b + (k0 + kk) * ldb + j0;
      _mm512_store_ps(out + kk * kCols, _mm512_maskz_loadu_ps(m0, src));
      _mm512_store_ps(out + kk * kCols + 16, _mm512_maskz_loadu_ps(m1, src + 16));
    }
    return;
  }
  // op(B)[kk, j] = B[j, kk]: each of B's rows j is contiguous in kk. Whole
  // 16 x 16 blocks are transposed in registers; the edges go one by one.
  if (cols < kCols) std::memset(out, 0, sizeof(float) * kc * kCols);
  const int64_t whole_kk = kc / 16 * 16;
  for (int64_t j = 0; j + 16 <= cols; j += 16) {
    for (int64_t kk = 0; kk < whole_kk; kk += 16) {
      Transpose16x16(b + (j0 + j) * ldb + k0 + kk, ldb, out + kk * kCols + j, kCols);
    }
  }
  const int64_t whole_j = cols / 16 * 16;
  for (int64_t j = 0; j < cols; ++j) {
    const float* src = b + (j0 + j) * ldb + k0;
    for (int64_t kk = j < whole_j ? whole_kk : 0; kk < kc; ++kk) out[kk * kCols + j] = src[kk];
  }
}

// Copies `rows` (<= 12) consecutive floats from each of kc rows of A
// (stride lda) into out[kk * 12 + r]: rows of op(A) when A is transposed.
EAGER_AVX512 void PackStrip(const float* a, int64_t lda, int64_t kc, int64_t rows, float* out) {
  const __mmask16 mask = static_cast<__mmask16>((1u << rows) - 1);
  for (int64_t kk = 0; kk < kc; ++kk) {
    _mm512_mask_storeu_ps(out + kk * kRows, mask, _mm512_maskz_loadu_ps(mask, a + kk * lda));
  }
}

// C[R rows, cols] (cols <= 32) {=, +=} the product of R rows of op(A) (kc
// long, from `a`) and a packed panel: each element one FMA chain over kk in
// order from zero, then added to C's old value (+0 when `first`: OpenBLAS
// clears C for beta = 0 and adds, which also turns a -0 sum into +0).
template <int R, bool kTransA>
EAGER_AVX512 void Tile(int64_t kc, const float* a, int64_t lda, const float* panel, float* c,
                       int64_t ldc, int64_t cols, bool first) {
  __m512 acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t kk = 0; kk < kc; ++kk) {
    const __m512 b0 = _mm512_load_ps(panel + kk * kCols);
    const __m512 b1 = _mm512_load_ps(panel + kk * kCols + 16);
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      // Row r of op(A) at kk: A[r, kk], or A[kk, r] when transposed.
      const __m512 x = _mm512_set1_ps(kTransA ? a[kk * lda + r] : a[r * lda + kk]);
      acc[r][0] = _mm512_fmadd_ps(x, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(x, b1, acc[r][1]);
    }
  }
  const auto [m0, m1] = PanelMasks(cols);
  for (int r = 0; r < R; ++r) {
    float* row = c + r * ldc;
    const __m512 old0 = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m0, row);
    const __m512 old1 = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m1, row + 16);
    _mm512_mask_storeu_ps(row, m0, _mm512_add_ps(acc[r][0], old0));
    _mm512_mask_storeu_ps(row + 16, m1, _mm512_add_ps(acc[r][1], old1));
  }
}

using TileFn = void (*)(int64_t, const float*, int64_t, const float*, float*, int64_t, int64_t,
                        bool);

template <bool kTransA, int... Rs>
constexpr std::array<TileFn, sizeof...(Rs)> TileTable(std::integer_sequence<int, Rs...>) {
  return {&Tile<Rs + 1, kTransA>...};
}

// Tiles of 1..12 rows, for op(A) plain and transposed.
const std::array<TileFn, kRows> kTiles[2] = {
    TileTable<false>(std::make_integer_sequence<int, kRows>{}),
    TileTable<true>(std::make_integer_sequence<int, kRows>{})};

// A 64-byte-aligned buffer for this thread's packed B, grown as needed and
// kept for the thread's life (at most ~1 MiB, Avx512SgemmSuits); nullptr
// when memory runs out.
float* PanelBuffer(int64_t floats) {
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  thread_local std::unique_ptr<float, Free> buffer;
  thread_local int64_t capacity = 0;
  if (floats > capacity) {
    const int64_t bytes = (floats * static_cast<int64_t>(sizeof(float)) + 63) / 64 * 64;
    buffer.reset(static_cast<float*>(std::aligned_alloc(64, static_cast<size_t>(bytes))));
    capacity = buffer ? floats : 0;
  }
  return buffer.get();
}

// Deterministic operands for the first-use check: floats in [-1, 1).
void FillForCheck(std::vector<float>& v, uint32_t seed) {
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / 8388608.0f - 1.0f;
  }
}

// Does the kernel give the installed OpenBLAS's bits? Shapes chosen to take
// every path: rows left over (m mod 12), columns left over (n mod 32, and
// n < 32), one K-block, two split ones (GEMM_Q < k < 2 GEMM_Q: 449 on both
// cores), full ones and a split tail, every transpose case; all above the
// small-matrix size.
bool CheckAgainstBlas() {
  struct Shape {
    int64_t m, n, k;
  };
  const Shape shapes[] = {{61, 83, 300},  {50, 70, 700},  {37, 45, 1000},
                          {13, 17, 5000}, {100, 33, 449}, {24, 64, 1344}};
  for (const Shape& s : shapes) {
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1;
      const bool tb = t & 2;
      std::vector<float> a(s.m * s.k), b(s.k * s.n), want(s.m * s.n), got(s.m * s.n, 1.0f);
      FillForCheck(a, static_cast<uint32_t>(s.m * 7 + t));
      FillForCheck(b, static_cast<uint32_t>(s.n * 13 + t));
      const int64_t lda = ta ? s.m : s.k;
      const int64_t ldb = tb ? s.k : s.n;
      BlasGemm<float>(ta, tb, s.m, s.n, s.k, a.data(), lda, b.data(), ldb, want.data(), s.n);
      if (!Avx512Sgemm(ta, tb, s.m, s.n, s.k, a.data(), lda, b.data(), ldb, got.data(), s.n) ||
          std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) != 0)
        return false;
    }
  }
  return true;
}

}  // namespace

bool Avx512SgemmMatchesBlas() {
  static const bool matches = HostCpuFeatures().avx512 && ExactSgemmCuts() && CheckAgainstBlas();
  return matches;
}

bool Avx512SgemmSuits(int64_t m, int64_t n, int64_t k) {
  constexpr int64_t kPackedBytes = int64_t{1} << 20;
  const int64_t padded_n = (n + kCols - 1) / kCols * kCols;
  return m * n * k > kSmallGemmMacs &&
         LongestKBlock(k) * padded_n * static_cast<int64_t>(sizeof(float)) <= kPackedBytes;
}

bool Avx512Sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float* c, int64_t ldc) {
  const int64_t panels = (n + kCols - 1) / kCols;
  const int64_t kc_max = LongestKBlock(k);
  float* packed = PanelBuffer(kc_max * (panels * kCols + (ta ? kRows : 0)));
  if (packed == nullptr) return false;
  float* strip = packed + kc_max * panels * kCols;  // 64-byte aligned: kCols floats a row
  for (int64_t k0 = 0, kc; k0 < k; k0 += kc) {
    kc = KBlockAt(k, k0);
    for (int64_t p = 0; p < panels; ++p) {
      PackPanel(tb, b, ldb, k0, kc, p * kCols, std::min<int64_t>(kCols, n - p * kCols),
                packed + p * kc * kCols);
    }
    const bool first = k0 == 0;
    for (int64_t i = 0; i < m; i += kRows) {
      const int64_t rows = std::min<int64_t>(kRows, m - i);
      const TileFn tile = kTiles[ta ? 1 : 0][rows - 1];
      // Rows [i, i + rows) of op(A) from column k0: read in place from A's
      // rows; when A is transposed, copied first into a kc x 12 strip (its
      // rows of 12 floats straddle cache lines in place: 784 x 256 x 256
      // ran 1.10x OpenBLAS's time without the copy).
      const float* a_rows = a + i * lda + k0;
      int64_t a_stride = lda;
      if (ta) {
        PackStrip(a + k0 * lda + i, lda, kc, rows, strip);
        a_rows = strip;
        a_stride = kRows;
      }
      for (int64_t p = 0; p < panels; ++p) {
        tile(kc, a_rows, a_stride, packed + p * kc * kCols, c + i * ldc + p * kCols, ldc,
             std::min<int64_t>(kCols, n - p * kCols), first);
      }
    }
  }
  return true;
}

}  // namespace eager::internal
