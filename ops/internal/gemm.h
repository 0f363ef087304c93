#pragma once

// eager's GEMM: single-threaded OpenBLAS calls, and how MatMul cuts one
// product into blocks for the pool without changing a bit. Private to ops/.
//
// Results must not depend on the thread count (ops/threads.h). A block of C
// is one OpenBLAS call on a slice of the rows (or columns) of C; the inner
// sum is never cut. Whether such a cut changes bits depends on OpenBLAS's
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

#include <cstdint>

namespace eager::internal {

// C[m, n] = op(A) op(B), row-major, in one single-threaded OpenBLAS call.
// beta = 0: C is written, never read. T is float or double.
template <typename T>
void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
          int64_t ldb, T* c, int64_t ldc);

// OpenBLAS's small-matrix sgemm kernels run at most this many multiply-adds.
inline constexpr int64_t kSmallGemmMacs = 1000000;

// True when OpenBLAS runs the SkylakeX core, whose sgemm gives the same bits
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

}  // namespace eager::internal
