#pragma once

// One product C = op(A) op(B) cut into blocks of C by PlanGemm (gemm.h),
// each block one single-threaded GEMM run on the pool: MatMul's product, and
// _FusedMatMul's, which also finishes each block (bias, ReLU) while it is
// still in that core's cache. Private to ops/.

#include <chrono>
#include <cstdint>
#include <thread>
#include <type_traits>

#include "ops/internal/gemm.h"
#include "ops/parallel.h"

namespace eager::internal {

// C[m, n] (row-major, row stride n) = op(A) op(B), k > 0, with the bits of
// one call on any thread count. Two float32 blocks on SkylakeX are cut
// unevenly, after the two threads' recent speeds (GemmBalance). After each block's GEMM, on the
// thread that ran it, `finish(row, rows, col, cols)` is called with the block's place in C: rows
// [row, row + rows) and columns [col, col + cols).
template <typename T, typename Finish>
void BlockedGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
                 const T* b, int64_t ldb, T* c, Finish&& finish) {
  const bool exact = std::is_same_v<T, float> && ExactSgemmCuts();
  const GemmSplit split = PlanGemm(exact, m, n, k, GetNumThreads(), MachineCores());
  const int64_t dim = split.rows ? m : n;
  const auto run = [&](int64_t begin, int64_t end) {
    if (split.rows) {  // rows [begin, end) of op(a) and of c
      const T* a_rows = ta ? a + begin : a + begin * lda;
      Gemm<T>(ta, tb, end - begin, n, k, a_rows, lda, b, ldb, c + begin * n, n);
      finish(begin, end - begin, int64_t{0}, n);
    } else {  // columns [begin, end) of op(b) and of c
      const T* b_cols = tb ? b + begin * ldb : b + begin;
      Gemm<T>(ta, tb, m, end - begin, k, a, lda, b_cols, ldb, c + begin, n);
      finish(int64_t{0}, m, begin, end - begin);
    }
  };
  // Two exact blocks: cut where the two threads' measured speeds say both
  // finish together (gemm.h, BalancedCut); any such cut gives the same bits.
  // Its cost model is that of the kernel the even cut's blocks run: a row
  // cut's blocks differ only in m, so both run the same one; a column cut's
  // can differ near the packed-B limit, where the model is then a little off
  // for one (bits never are).
  const bool two_blocks = exact && split.block < dim && 2 * split.block >= dim;
  const SgemmKernel kernel = !two_blocks  ? SgemmKernel::kOpenBlas
                             : split.rows ? SgemmKernelFor(split.block, n, k)
                                          : SgemmKernelFor(m, split.block, k);
  const int64_t cut = two_blocks ? BalancedCut(SharedGemmBalance().CallerShare(), kernel,
                                               split.rows, dim, m + n - dim, k)
                                 : 0;
  if (cut == 0) {
    ParallelFor(dim, split.block, 0, run);
    return;
  }
  using Clock = std::chrono::steady_clock;
  const int64_t bounds[3] = {0, cut, dim};
  double seconds[2] = {0, 0};
  std::thread::id thread[2];
  ParallelFor(2, 1, 0, [&](int64_t block, int64_t) {
    const Clock::time_point start = Clock::now();
    run(bounds[block], bounds[block + 1]);
    seconds[block] = std::chrono::duration<double>(Clock::now() - start).count();
    thread[block] = std::this_thread::get_id();
  });
  // Only a job whose blocks ran side by side on two threads says how fast
  // each is (a busy pool runs both on the caller).
  if (thread[0] != thread[1])
    SharedGemmBalance().Observe(kernel, split.rows, cut, seconds[0], dim - cut, seconds[1]);
}

}  // namespace eager::internal
