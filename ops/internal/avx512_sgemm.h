#pragma once

// eager's own float32 GEMM for AVX-512 machines, with OpenBLAS's bits.
// Private to ops/.
//
// Why: on two threads MatMul cuts a product into two blocks, and with
// OpenBLAS each block is a call that packs all of the shared operand again
// (and all of A in its own layout). At n = 256 that capped two threads at
// ~1.72x one. This kernel packs only B, in panels of 32 columns, and reads A
// in place (broadcasts straight from A's rows), so a block of rows costs its
// share of the multiply-adds plus one copy of B. On one thread (SkylakeX
// kernels both, benchmarks/gemm_benchmark.cc) it ran a 256 product in 0.91-0.93x
// OpenBLAS's time and a 128-row block of it in 0.87-0.88x; two threads then ran
// MatMul 256 1.85x faster than one (benchmarks/README.md).
//
// Bits: OpenBLAS's SkylakeX sgemm (0.3.21; Cooperlake runs the same kernel)
// computes every element of C as one chain of fused multiply-adds over k, in
// order, from zero, in K-blocks that its level-3 driver fixes from k alone
// (448 long on SkylakeX, 320 on Cooperlake, the last two split evenly when
// fewer than twice that remain, rounded up to 16), and adds each
// K-block's chain to C (the first to +0: beta = 0 clears C first). This
// kernel does the same, one zmm lane per element of C. So, above OpenBLAS's
// small-matrix size (kSmallGemmMacs, whose kernels sum differently), it gives
// the bits of one cblas_sgemm call, and so does any cut of C into blocks.
// That is not taken on trust: the first use checks it against the installed
// OpenBLAS (every transpose case, K-blocks of every kind, edge rows and
// columns; ~8 ms, once per process), and eager falls back to OpenBLAS for
// good if a single bit differs. tests/ops/avx512_sgemm_test.cc checks it on random shapes.

#include <cstdint>

namespace eager::internal {

// True when this CPU has AVX-512 (F, BW, DQ, VL), OpenBLAS runs a core with
// SkylakeX's sgemm (HasSkylakeXSgemm) and the check against it passed.
// Settled once per process.
bool Avx512SgemmMatchesBlas();

// Whether eager takes its own kernel for C[m, n] = op(A) op(B) (inner
// dimension k) instead of OpenBLAS: above the small-matrix size, and while a
// K-block of B packed (at most 448 x n floats; 320 x n on Cooperlake) fits in 1 MiB of the core's
// L2; OpenBLAS's own blocking of n is faster beyond (768^3 on one thread:
// 1.035x OpenBLAS's time, 1024^3: 1.08x). Shape only: the same answer on
// any thread.
bool Avx512SgemmSuits(int64_t m, int64_t n, int64_t k);

// C[m, n] = op(A) op(B), row-major (leading dimensions lda, ldb, ldc), on
// the calling thread; C is written, never read. Returns false, with C
// untouched, when the thread's buffer for packed B cannot be allocated (it
// runs inside pool blocks, which must not throw; the caller then runs
// OpenBLAS). Call only when Avx512SgemmMatchesBlas() (the CPU must have
// AVX-512).
[[nodiscard]] bool Avx512Sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a,
                               int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);

}  // namespace eager::internal
