#include "ops/internal/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <type_traits>

#include "ops/internal/blas_core.h"
#include "ops/internal/parallel.h"

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
void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
          int64_t ldb, T* c, int64_t ldc) {
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

template void Gemm<float>(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t,
                          const float*, int64_t, float*, int64_t);
template void Gemm<double>(bool, bool, int64_t, int64_t, int64_t, const double*, int64_t,
                           const double*, int64_t, double*, int64_t);

bool ExactSgemmCuts() {
  static const bool exact = [] {
    EnsureBlasCore();
    return BlasCoreName() == "SkylakeX";
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

}  // namespace eager::internal
