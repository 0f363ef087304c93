#include "ops/internal/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <cstdlib>
#include <type_traits>

#include "ops/internal/avx512_sgemm.h"
#include "ops/internal/blas_core.h"
#include "ops/parallel.h"

namespace eager::internal {
namespace {

int64_t RoundUp16(int64_t v) { return (v + 15) / 16 * 16; }

// Blocks of `block` over `dim`: the length of the last one.
int64_t LastBlock(int64_t dim, int64_t block) {
  const int64_t rest = dim % block;
  return rest == 0 ? block : rest;
}

}  // namespace

template <typename T>
void BlasGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
              const T* b, int64_t ldb, T* c, int64_t ldc) {
  KeepBlasSingleThreaded();  // on whichever pool thread runs the block
  const CBLAS_TRANSPOSE opa = ta ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE opb = tb ? CblasTrans : CblasNoTrans;
  const auto i = [](int64_t v) { return static_cast<blasint>(v); };
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, opa, opb, i(m), i(n), i(k), 1.0f, a, i(lda), b, i(ldb), 0.0f, c,
                i(ldc));
  } else {
    cblas_dgemm(CblasRowMajor, opa, opb, i(m), i(n), i(k), 1.0, a, i(lda), b, i(ldb), 0.0, c,
                i(ldc));
  }
}

template <typename T>
void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
          int64_t ldb, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    if (SgemmKernelFor(m, n, k) == SgemmKernel::kAvx512 &&
        Avx512Sgemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc)) {
      return;
    }
  }
  BlasGemm<T>(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
}

template void BlasGemm<float>(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t,
                              const float*, int64_t, float*, int64_t);
template void BlasGemm<double>(bool, bool, int64_t, int64_t, int64_t, const double*, int64_t,
                               const double*, int64_t, double*, int64_t);
template void Gemm<float>(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t,
                          const float*, int64_t, float*, int64_t);
template void Gemm<double>(bool, bool, int64_t, int64_t, int64_t, const double*, int64_t,
                           const double*, int64_t, double*, int64_t);

bool ExactSgemmCuts() {
  static const bool exact = [] {
    EnsureBlasCore();
    return HasSkylakeXSgemm(BlasCoreName());
  }();
  return exact;
}

GemmSplit PlanGemm(bool exact_cuts, int64_t m, int64_t n, int64_t k, int threads, int cores) {
  GemmSplit split;
  // The longer side; a square C is cut into rows. On one thread either cut
  // of a 256 GEMM runs at 0.93-0.94 of one call's speed, but side by side on
  // two cores column blocks, which write interleaved halves of every row of
  // C (512 bytes each at n = 256), ran 10-15% slower than row blocks, which
  // write one contiguous half each (256: 136 against 122 us a block; 512:
  // 1.79x against 1.89x one call; equal at 1024; benchmarks/README.md).
  split.rows = m >= n;
  const int64_t dim = split.rows ? m : n;
  const int64_t other = split.rows ? n : m;
  split.block = dim;
  if (exact_cuts) {
    // The most blocks (up to one per thread) whose every block stays off the
    // small-matrix path; the whole product is larger than any block.
    for (int64_t parts = std::min(threads, cores); parts > 1; --parts) {
      const int64_t block = RoundUp16((dim + parts - 1) / parts);
      if (block >= dim) continue;
      if (LastBlock(dim, block) * other * k > kSmallGemmMacs) {
        split.block = block;
        break;
      }
    }
    return split;
  }
  // Fixed by the shape and the machine: below 2^18 multiply-adds a hand-off
  // costs more than it saves. No more blocks than cores: each extra block is
  // one more call that packs the shared operand again.
  constexpr int64_t kMinSplitMacs = int64_t{1} << 18;
  if (m * n * k < kMinSplitMacs) return split;
  const int64_t parts = std::max(1, cores);
  split.block = std::min(dim, std::max<int64_t>(128, RoundUp16((dim + parts - 1) / parts)));
  return split;
}

SgemmKernel SgemmKernelFor(int64_t m, int64_t n, int64_t k) {
  // The shape test first: it is a few multiplies, the other a load.
  return Avx512SgemmSuits(m, n, k) && Avx512SgemmMatchesBlas() ? SgemmKernel::kAvx512
                                                               : SgemmKernel::kOpenBlas;
}

double GemmBlockWork(SgemmKernel kernel, bool rows, int64_t len) {
  const double units = static_cast<double>(len);
  if (kernel == SgemmKernel::kAvx512) return rows ? 11.0 + units : units;
  if (!rows) return 22.0 + units;
  const int64_t steps = len / 48;  // whole 48-row steps of OpenBLAS's kernel
  return 10.0 + 40.0 * static_cast<double>(steps) + static_cast<double>(len % 48);
}

int64_t BalancedCut(double caller_share, SgemmKernel kernel, bool rows, int64_t dim, int64_t other,
                    int64_t k) {
  // Both blocks above the small-matrix size, block 0 a multiple of 16 and
  // within [dim / 4, 3 dim / 4] (rounded), so that one bad measurement cannot
  // hand a thread almost nothing.
  const int64_t macs_per_unit = std::max<int64_t>(1, other * k);
  const int64_t min_len = kSmallGemmMacs / macs_per_unit + 1;
  const int64_t lo = std::max(RoundUp16(min_len), RoundUp16(dim / 4));
  const int64_t hi = std::min((dim - min_len) / 16 * 16, RoundUp16(3 * dim / 4));
  if (lo > hi) return 0;
  const double q = std::clamp(caller_share, 0.0, 1.0);
  int64_t best = 0;
  double best_time = 0;
  for (int64_t cut = lo; cut <= hi; cut += 16) {
    const double time = std::max(q * GemmBlockWork(kernel, rows, cut),
                                 (1.0 - q) * GemmBlockWork(kernel, rows, dim - cut));
    // Ties (within a part in 1e9) go to the cut nearer the middle.
    if (best == 0 || time < best_time * (1 - 1e-9) ||
        (time <= best_time * (1 + 1e-9) && std::abs(2 * cut - dim) < std::abs(2 * best - dim))) {
      best = cut;
      best_time = time;
    }
  }
  return best;
}

void GemmBalance::Observe(SgemmKernel kernel, bool rows, int64_t len0, double seconds0,
                          int64_t len1, double seconds1) {
  if (!(seconds0 > 0) || !(seconds1 > 0) || len0 <= 0 || len1 <= 0) return;
  const double s0 = seconds0 / GemmBlockWork(kernel, rows, len0);
  const double s1 = seconds1 / GemmBlockWork(kernel, rows, len1);
  // One job's share, kept within [0.2, 0.8]: a block preempted for a
  // scheduler tick would otherwise swing the average for many jobs.
  const double q = std::clamp(s0 / (s0 + s1), 0.2, 0.8);
  const double old = share_.load(std::memory_order_relaxed);
  share_.store(old + kWeight * (q - old), std::memory_order_relaxed);
}

GemmBalance& SharedGemmBalance() {
  static GemmBalance* balance = new GemmBalance();  // never destroyed: pool threads use it
  return *balance;
}

}  // namespace eager::internal
