#pragma once

// One product C = op(A) op(B) cut into blocks of C by PlanGemm (gemm.h),
// each block one single-threaded GEMM run on the pool: MatMul's product, and
// _FusedMatMul's, which also finishes each block (bias, ReLU) while it is
// still in that core's cache. Private to ops/.

#include <cstdint>
#include <type_traits>

#include "ops/internal/gemm.h"
#include "ops/internal/parallel.h"

namespace eager::internal {

// C[m, n] (row-major, row stride n) = op(A) op(B), k > 0, with the bits of
// one call on any thread count. After each block's GEMM, on the thread that
// ran it, `finish(row, rows, col, cols)` is called with the block's place in
// C: rows [row, row + rows) and columns [col, col + cols).
template <typename T, typename Finish>
void BlockedGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
                 const T* b, int64_t ldb, T* c, Finish&& finish) {
  const GemmSplit split = PlanGemm(std::is_same_v<T, float> && ExactSgemmCuts(), m, n, k,
                                   GetNumThreads(), MachineCores());
  ParallelFor(split.rows ? m : n, split.block, 0, [&](int64_t begin, int64_t end) {
    if (split.rows) {  // rows [begin, end) of op(a) and of c
      const T* a_rows = ta ? a + begin : a + begin * lda;
      Gemm<T>(ta, tb, end - begin, n, k, a_rows, lda, b, ldb, c + begin * n, n);
      finish(begin, end - begin, int64_t{0}, n);
    } else {  // columns [begin, end) of op(b) and of c
      const T* b_cols = tb ? b + begin * ldb : b + begin;
      Gemm<T>(ta, tb, m, end - begin, k, a, lda, b_cols, ldb, c + begin, n);
      finish(int64_t{0}, m, begin, end - begin);
    }
  });
}

}  // namespace eager::internal
