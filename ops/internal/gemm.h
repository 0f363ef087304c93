#pragma once

// eager's GEMM: single-threaded calls with the bits of one OpenBLAS call
// (OpenBLAS itself, or for float32 on AVX-512 where it suits the shape
// eager's own kernel, ops/internal/avx512_sgemm.h), and how MatMul cuts one
// product into blocks for the pool without changing a bit. Private to ops/.
//
// Results must not depend on the thread count (runtime/threads.h). A block of C
// is one such call on a slice of the rows (or columns) of C; the inner sum
// is never cut. Whether such a cut changes bits depends on OpenBLAS's
// kernels, measured on 0.3.21 with random shapes and cuts (benchmarks/README.md):
//   - SkylakeX sgemm (what eager runs on AVX-512): no bit changes as long
//     as every call stays off OpenBLAS's small-matrix kernels, taken when
//     m * n * k <= 1e6 (kSmallGemmMacs), which sum all of k at once and
//     treat edge rows and columns their own way; its blocked path sums k in
//     K-blocks of 448 fixed by k alone. Below that size a third of the cuts
//     changed bits. So a float32 product cut into blocks (multiples of 16
//     long) of more than 1e6 multiply-adds each gives the bits of one call,
//     whatever the cut: the cut may follow the thread count, and one thread
//     makes one call (no operand packed twice). tests/ops/gemm_test.cc
//     checks this against the installed OpenBLAS. (OpenBLAS also has a
//     row-major "direct" AVX-512 sgemm; Debian's build never takes it: row-
//     and column-major calls give the same bits and times.)
//   - Haswell and Zen sgemm, and SkylakeX dgemm: cuts change bits at any
//     size (four fifths, and a third, of random cuts did). Products there are
//     cut by the machine's cores alone, the same cut on any thread count (one
//     thread runs the blocks one after another).

#include <atomic>
#include <cstdint>

namespace eager::internal {

// C[m, n] = op(A) op(B), row-major, single-threaded, with the bits of one
// OpenBLAS call: float32 products that suit eager's own AVX-512 kernel run
// it (ops/internal/avx512_sgemm.h), everything else is that call.
// beta = 0: C is written, never read. T is float or double.
template <typename T>
void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
          int64_t ldb, T* c, int64_t ldc);

// The same product as one single-threaded OpenBLAS call, always.
template <typename T>
void BlasGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
              const T* b, int64_t ldb, T* c, int64_t ldc);

// OpenBLAS's small-matrix sgemm kernels run at most this many multiply-adds.
inline constexpr int64_t kSmallGemmMacs = 1000000;

// True when OpenBLAS runs a core with SkylakeX's sgemm (HasSkylakeXSgemm:
// SkylakeX or Cooperlake), which gives the same bits
// for any cut of C into blocks above kSmallGemmMacs (measured, see above).
// Settles OpenBLAS's core first (EnsureBlasCore).
bool ExactSgemmCuts();

// How MatMul cuts C[m, n] (inner dimension k): the larger dimension (rows
// when m >= n, else columns) into blocks of `block` (the last one shorter),
// one GEMM each, spread over the pool. block == the whole dimension: one call.
struct GemmSplit {
  bool rows = true;
  int64_t block = 0;
};

// With `exact_cuts` (float32 on SkylakeX): at most min(threads, cores)
// blocks, multiples of 16 long, each of more than kSmallGemmMacs
// multiply-adds; fewer blocks when that cannot be met; one call on one
// thread. Otherwise one block per core, at least 128 long (whole below 2^18
// multiply-adds), whatever `threads` is.
GemmSplit PlanGemm(bool exact_cuts, int64_t m, int64_t n, int64_t k, int threads, int cores);

// Two blocks of an exact cut (float32 on SkylakeX, two threads), cut where
// both threads should finish together. The pool's caller always runs block 0
// and its one helper block 1, but this VM's two vCPUs are at times unequal
// for seconds (one 35-70% slower, benchmarks/README.md), and an even cut then
// waits for the slower one. Since any cut above kSmallGemmMacs gives the same
// bits, the cut may follow the threads' measured speeds without changing a
// bit of C.
//
// Which kernel runs a float32 block, for its cost model: eager's own
// (ops/internal/avx512_sgemm.h) where it suits the block's shape, else
// OpenBLAS.
enum class SgemmKernel { kOpenBlas, kAvx512 };
SgemmKernel SgemmKernelFor(int64_t m, int64_t n, int64_t k);

// A block of `len` rows (or columns) on a thread of slowness s takes
// s * GemmBlockWork(kernel, rows, len). Measured on one thread, row-major,
// n = k = 256 (benchmarks/README.md, 2026-12-04):
//   - OpenBLAS's SkylakeX sgemm: a row block costs the shared operand's
//     packing (~10 rows' worth at n = k = 256 and 1024) plus 40 rows' worth
//     per 48 rows (its kernel runs 48 of our rows at a time) and one per row
//     of the rest; a column block ~22 columns' worth of packing plus one per
//     column. (One call 220.7 us; row blocks of 48, 96, 128, 144: 47.8, 87.1,
//     118.9, 126.3 us.)
//   - eager's AVX-512 kernel: 12 rows at a time, so a row block is ~11 rows'
//     worth of packing B plus one per row (16 to 256 rows: 20.7 to 202.6 us,
//     8.3 + 0.76 per row); a column block packs only its own columns: one
//     per column (128 x 64 to 128 x 512, k = 256: 26.1 to 213.5 us).
double GemmBlockWork(SgemmKernel kernel, bool rows, int64_t len);

// Block 0's length for a two-block cut of `dim` (rows when `rows`; `other`
// the output's other dimension, k the inner one) when the caller's slowness
// is `caller_share` of the sum of both threads' slowness (0.5: equal): the
// multiple of 16 that minimizes the slower block's predicted time by
// `kernel`'s model (ties: the one nearest dim / 2), leaving both blocks above
// kSmallGemmMacs multiply-adds and block 0 between a quarter and three
// quarters of `dim` (rounded to 16). Returns 0 when no such cut exists.
int64_t BalancedCut(double caller_share, SgemmKernel kernel, bool rows, int64_t dim, int64_t other,
                    int64_t k);

// The caller's share of the two threads' slowness, measured: an exponential
// average (weight kWeight per job) of each two-thread job's s0 / (s0 + s1),
// s = a block's time / GemmBlockWork. Thread-safe; one per process
// (SharedGemmBalance), since it measures the cores, not a shape.
class GemmBalance {
 public:
  static constexpr double kWeight = 1.0 / 16;

  double CallerShare() const { return share_.load(std::memory_order_relaxed); }

  // A job whose block 0 (len0 long) took seconds0 on the caller and block 1
  // (len1) took seconds1 on another thread, both run by `kernel`.
  void Observe(SgemmKernel kernel, bool rows, int64_t len0, double seconds0, int64_t len1,
               double seconds1);

  void Reset() { share_.store(0.5, std::memory_order_relaxed); }

 private:
  std::atomic<double> share_{0.5};
};

GemmBalance& SharedGemmBalance();

}  // namespace eager::internal
