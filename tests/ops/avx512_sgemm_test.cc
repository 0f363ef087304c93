// ops/internal/avx512_sgemm.h: eager's own float32 GEMM gives the bits of
// one OpenBLAS call, and writes nothing outside its block of C.

#include "ops/internal/avx512_sgemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "ops/internal/blas_core.h"
#include "ops/internal/gemm.h"
#include "runtime/flush_denormal.h"

namespace eager::internal {
namespace {

// Skips unless the kernel can run here: an AVX-512 CPU with OpenBLAS on its
// SkylakeX sgemm (the bits it reproduces; HasSkylakeXSgemm).
#define EAGER_SKIP_WITHOUT_AVX512_SGEMM()                                                   \
  do {                                                                                      \
    if (!HostCpuFeatures().avx512 || !ExactSgemmCuts()) {                                   \
      GTEST_SKIP()                                                                          \
          << "needs AVX-512 and an OpenBLAS core with SkylakeX's sgemm; OpenBLAS runs the " \
          << BlasCoreName();                                                                \
    }                                                                                       \
  } while (false)

TEST(Avx512SgemmTest, PassesItsCheckAgainstOpenBlasOnThisMachine) {
  EAGER_SKIP_WITHOUT_AVX512_SGEMM();
  EXPECT_TRUE(Avx512SgemmMatchesBlas());
}

// Random shapes (tails of rows and columns, one to many K-blocks), all four
// transpose cases, leading dimensions wider than the matrices (as MatMul's
// blocks of a larger C have): C equals one cblas_sgemm call bit for bit, and
// the columns of C beyond n keep their values.
TEST(Avx512SgemmTest, RandomShapesGiveTheBitsOfOneOpenBlasCall) {
  EAGER_SKIP_WITHOUT_AVX512_SGEMM();
  ASSERT_TRUE(Avx512SgemmMatchesBlas());
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const auto pick = [&](std::initializer_list<int64_t> common, int64_t hi) {
    const std::vector<int64_t> v(common);
    return rng() % 2 ? v[rng() % v.size()] : static_cast<int64_t>(1 + rng() % hi);
  };
  int tested = 0;
  while (tested < 150) {
    const bool ta = rng() % 2;
    const bool tb = rng() % 2;
    const int64_t m = pick({1, 11, 12, 13, 64, 128, 256, 784}, 400);
    const int64_t n = pick({1, 10, 31, 32, 33, 128, 256}, 400);
    const int64_t k = pick({64, 256, 447, 448, 449, 784, 895, 896, 897, 1344, 2000}, 2500);
    if (m * n * k <= kSmallGemmMacs || m * n * k > 60'000'000) continue;
    ++tested;
    const int64_t pad = rng() % 3 == 0 ? 0 : 1 + rng() % 17;
    const int64_t lda = (ta ? m : k) + pad;
    const int64_t ldb = (tb ? k : n) + pad;
    const int64_t ldc = n + pad;
    std::vector<float> a((ta ? k : m) * lda), b((tb ? n : k) * ldb);
    for (float& v : a) v = u(rng);
    for (float& v : b) v = u(rng);
    std::vector<float> want(m * ldc, 7.0f), got(m * ldc, 7.0f);
    BlasGemm<float>(ta, tb, m, n, k, a.data(), lda, b.data(), ldb, want.data(), ldc);
    ASSERT_TRUE(Avx512Sgemm(ta, tb, m, n, k, a.data(), lda, b.data(), ldb, got.data(), ldc));
    ASSERT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0)
        << "ta=" << ta << " tb=" << tb << " " << m << "x" << n << "x" << k << " pad " << pad;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = n; j < ldc; ++j) ASSERT_EQ(got[i * ldc + j], 7.0f) << i << "," << j;
    }
  }
}

// A sum that is -0: in the kernels' mode (denormals flushed, as TF's), each
// product of 1e-20 and -1e-20 underflows to -0, so a row's whole chain is
// -0. One OpenBLAS call writes +0 there (it clears C, then adds the sum), and
// so must this kernel; other rows keep their signs of zero as OpenBLAS does.
TEST(Avx512SgemmTest, UnderflowedSumsGetOpenBlasSignOfZero) {
  EAGER_SKIP_WITHOUT_AVX512_SGEMM();
  if (!kCanFlushDenormals) GTEST_SKIP() << "this processor cannot flush denormals";
  ScopedFlushDenormal flush;
  const int64_t m = 40, n = 40, k = 1000;
  std::vector<float> a(m * k), b(k * n, -1e-20f);
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t kk = 0; kk < k; ++kk) a[i * k + kk] = i % 3 == 0 ? 1e-20f : u(rng);
  }
  std::vector<float> want(m * n), got(m * n);
  BlasGemm<float>(false, false, m, n, k, a.data(), k, b.data(), n, want.data(), n);
  ASSERT_TRUE(Avx512Sgemm(false, false, m, n, k, a.data(), k, b.data(), n, got.data(), n));
  EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0);
  EXPECT_EQ(got[0], 0.0f);
  EXPECT_FALSE(std::signbit(got[0]));
}

TEST(Avx512SgemmTest, SuitsAboveTheSmallMatrixSizeWhileAPackedKBlockOfBFitsOneMiB) {
  EXPECT_TRUE(Avx512SgemmSuits(256, 256, 256));
  EXPECT_TRUE(Avx512SgemmSuits(512, 512, 512));   // 448 (or 256) x 512 floats: <= 896 KiB
  EXPECT_TRUE(Avx512SgemmSuits(256, 1024, 256));  // exactly 1 MiB
  EXPECT_TRUE(Avx512SgemmSuits(64, 256, 784));    // K-blocks of 392 (or 320 and 232)
  EXPECT_FALSE(Avx512SgemmSuits(100, 100, 100));  // 1e6: OpenBLAS's small kernels
  // 384 (SkylakeX) or 320 (Cooperlake) x 1024 floats: 1.5 or 1.25 MiB.
  EXPECT_FALSE(Avx512SgemmSuits(768, 1024, 768));
  EXPECT_FALSE(Avx512SgemmSuits(1024, 1024, 1024));
  EXPECT_FALSE(Avx512SgemmSuits(256, 1025, 256));  // n padded to 1056
}

}  // namespace
}  // namespace eager::internal
