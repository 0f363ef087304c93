// ops/internal/gemm.h: how MatMul cuts a GEMM into blocks, and that the cuts
// it makes on SkylakeX change no bits.

#include "ops/internal/gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "ops/internal/blas_core.h"
#include "ops/matmul.h"
#include "ops/random_generator.h"
#include "runtime/threads.h"

namespace eager::internal {
namespace {

constexpr SgemmKernel kBlas = SgemmKernel::kOpenBlas;
constexpr SgemmKernel kOwn = SgemmKernel::kAvx512;

// The multiply-adds of the smallest block of `split` over C[m, n].
int64_t SmallestBlockMacs(const GemmSplit& split, int64_t m, int64_t n, int64_t k) {
  const int64_t dim = split.rows ? m : n;
  const int64_t rest = dim % split.block;
  const int64_t last = rest == 0 ? split.block : rest;
  return last * (split.rows ? n : m) * k;
}

int64_t Blocks(const GemmSplit& split, int64_t m, int64_t n) {
  const int64_t dim = split.rows ? m : n;
  return (dim + split.block - 1) / split.block;
}

TEST(GemmTest, ExactCutsOnOneThreadAreOneCall) {
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{256, 256, 256},
                         {2048, 2048, 2048},
                         {64, 256, 784},
                         {784, 256, 64}}) {
    const GemmSplit split = PlanGemm(true, m, n, k, 1, 2);
    EXPECT_EQ(split.block, split.rows ? m : n) << m << "x" << n << "x" << k;
  }
}

TEST(GemmTest, ExactCutsFollowTheThreadsAndStayAboveTheSmallMatrixSize) {
  // n = 256 on two threads: two row blocks of 128 (a square C is cut into
  // rows); a wider C into columns.
  const GemmSplit two = PlanGemm(true, 256, 256, 256, 2, 2);
  EXPECT_TRUE(two.rows);
  EXPECT_EQ(two.block, 128);
  EXPECT_FALSE(PlanGemm(true, 256, 257, 256, 2, 2).rows);
  // Never more blocks than cores, even with more threads allowed.
  EXPECT_EQ(Blocks(PlanGemm(true, 1024, 1024, 1024, 8, 2), 1024, 1024), 2);
  EXPECT_EQ(Blocks(PlanGemm(true, 1024, 1024, 1024, 3, 4), 1024, 1024), 3);
  // 64 x 128 x 128 is 1.05e6 multiply-adds: two blocks would fall below.
  EXPECT_EQ(Blocks(PlanGemm(true, 64, 128, 128, 2, 2), 64, 128), 1);
  // Four blocks of 400 x 300 x 8 (0.96e6) would not stay above; three do.
  EXPECT_EQ(Blocks(PlanGemm(true, 1600, 300, 8, 4, 4), 1600, 300), 3);
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const int64_t m = 1 + rng() % 3000;
    const int64_t n = 1 + rng() % 3000;
    const int64_t k = 1 + rng() % 3000;
    const int threads = 1 + static_cast<int>(rng() % 8);
    const int cores = 1 + static_cast<int>(rng() % 8);
    const GemmSplit split = PlanGemm(true, m, n, k, threads, cores);
    const int64_t dim = split.rows ? m : n;
    ASSERT_EQ(split.rows, m >= n);
    ASSERT_GE(split.block, 1);
    ASSERT_LE(split.block, dim);
    if (split.block == dim) continue;
    ASSERT_EQ(split.block % 16, 0) << m << "x" << n << "x" << k;
    ASSERT_LE(Blocks(split, m, n), std::min(threads, cores)) << m << "x" << n << "x" << k;
    ASSERT_GT(SmallestBlockMacs(split, m, n, k), kSmallGemmMacs) << m << "x" << n << "x" << k;
  }
}

TEST(GemmTest, OtherCutsDependOnTheMachineOnly) {
  for (int threads = 1; threads <= 8; ++threads) {
    const GemmSplit split = PlanGemm(false, 517, 67, 300, threads, 2);
    EXPECT_TRUE(split.rows);
    EXPECT_EQ(split.block, 272);                                       // 517 / 2, rounded up to 16
    EXPECT_EQ(PlanGemm(false, 300, 300, 300, threads, 4).block, 128);  // at least 128
    EXPECT_EQ(PlanGemm(false, 60, 60, 60, threads, 2).block, 60);      // below 2^18: whole
  }
}

// The claim ExactSgemmCuts makes, against the installed OpenBLAS: one sgemm
// call and any cut of C into blocks (multiples of 16, the last the rest) of
// more than kSmallGemmMacs multiply-adds each give the same bits. Random
// shapes over all four transpose cases, ragged edges, row and column cuts,
// and k on both sides of OpenBLAS's K-blocks (448, 896).
TEST(GemmTest, SgemmCutsAboveTheSmallMatrixSizeChangeNoBits) {
  if (!ExactSgemmCuts()) {
    GTEST_SKIP() << "OpenBLAS runs the " << BlasCoreName()
                 << " core, where eager cuts float32 GEMMs by the machine's cores only";
  }
  std::mt19937 rng(11);
  const auto pick = [&](std::initializer_list<int64_t> common, int64_t hi) {
    const std::vector<int64_t> v(common);
    return rng() % 2 ? v[rng() % v.size()] : static_cast<int64_t>(1 + rng() % hi);
  };
  int tested = 0;
  for (int i = 0; tested < 120 && i < 5000; ++i) {
    const bool ta = rng() % 2;
    const bool tb = rng() % 2;
    const int64_t m = pick({64, 67, 128, 200, 256, 300, 517, 784}, 800);
    const int64_t n = pick({10, 17, 64, 128, 256, 449, 784}, 800);
    const int64_t k = pick({32, 64, 128, 256, 447, 448, 449, 784, 896, 897, 1344}, 1400);
    const bool rows = rng() % 2;
    const int64_t dim = rows ? m : n;
    const int64_t parts = 2 + rng() % 4;
    const int64_t block = std::max<int64_t>(16, (dim + parts - 1) / parts + 15) / 16 * 16;
    if (block >= dim) continue;
    const GemmSplit split{rows, block};
    if (SmallestBlockMacs(split, m, n, k) <= kSmallGemmMacs) continue;
    ++tested;
    const int64_t lda = ta ? m : k;
    const int64_t ldb = tb ? k : n;
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> a(m * k), b(k * n), whole(m * n), cut(m * n, -1.0f);
    for (float& v : a) v = u(rng);
    for (float& v : b) v = u(rng);
    BlasGemm<float>(ta, tb, m, n, k, a.data(), lda, b.data(), ldb, whole.data(), n);
    for (int64_t s = 0; s < dim; s += block) {
      const int64_t e = std::min(dim, s + block);
      if (rows) {
        Gemm<float>(ta, tb, e - s, n, k, ta ? a.data() + s : a.data() + s * lda, lda, b.data(), ldb,
                    cut.data() + s * n, n);
      } else {
        Gemm<float>(ta, tb, m, e - s, k, a.data(), lda, tb ? b.data() + s * ldb : b.data() + s, ldb,
                    cut.data() + s, n);
      }
    }
    ASSERT_EQ(std::memcmp(whole.data(), cut.data(), whole.size() * sizeof(float)), 0)
        << "ta=" << ta << " tb=" << tb << " " << m << "x" << n << "x" << k
        << (rows ? " rows" : " columns") << " in blocks of " << block;
  }
  EXPECT_EQ(tested, 120);
}

// MatMul itself: the shapes of a 784-256-128-10 training step (batches 64
// and 256, forward and both gradients) and shapes whose blocks sit right at
// the small-matrix size, bit-identical on 1 to 4 threads and, on one thread,
// equal to one OpenBLAS call.
TEST(GemmTest, MatMulOfTrainingStepShapesIsIdenticalOnAnyThreadCount) {
  struct Case {
    int64_t m, n, k;
    bool ta, tb;
  };
  std::vector<Case> cases;
  for (int64_t batch : {64, 256}) {
    cases.push_back({batch, 256, 784, false, false});  // x W1
    cases.push_back({batch, 128, 256, false, false});  // h1 W2
    cases.push_back({784, 256, batch, true, false});   // x^T dh1
    cases.push_back({256, 128, batch, true, false});   // h1^T dh2
    cases.push_back({batch, 256, 128, false, true});   // dh2 W2^T
    cases.push_back({batch, 10, 128, false, false});   // h2 W3
  }
  cases.push_back({64, 128, 128, false, false});  // 2 blocks would be 0.52e6 each
  cases.push_back({64, 130, 128, false, false});  // last of 2 blocks 64 x 50 x 128
  cases.push_back({64, 256, 62, false, false});   // 2 blocks of 64 x 128 x 62 = 0.51e6
  cases.push_back({64, 256, 123, false, false});  // 2 blocks of 1.008e6
  const int saved = GetNumThreads();
  for (const Case& c : cases) {
    const Tensor a = RandomUniform(c.ta ? Shape{c.k, c.m} : Shape{c.m, c.k}, 1, -1.0, 1.0);
    const Tensor b = RandomUniform(c.tb ? Shape{c.n, c.k} : Shape{c.k, c.n}, 2, -1.0, 1.0);
    std::vector<std::vector<float>> results;
    for (int threads = 1; threads <= 4; ++threads) {
      SetNumThreads(threads);
      results.push_back(MatMul(a, b, c.ta, c.tb).ToVector<float>());
    }
    for (int t = 1; t < 4; ++t) {
      EXPECT_EQ(results[0], results[t])
          << c.m << "x" << c.n << "x" << c.k << " on " << t + 1 << " threads";
    }
    if (ExactSgemmCuts()) {
      std::vector<float> one_call(c.m * c.n);
      BlasGemm<float>(c.ta, c.tb, c.m, c.n, c.k, a.ToVector<float>().data(), c.ta ? c.m : c.k,
                      b.ToVector<float>().data(), c.tb ? c.k : c.n, one_call.data(), c.n);
      EXPECT_EQ(results[0], one_call) << c.m << "x" << c.n << "x" << c.k;
    }
  }
  SetNumThreads(saved);
}

// Two-block cuts that follow the threads' speeds (gemm.h, BalancedCut).
TEST(GemmTest, BalancedCutGivesTheSlowerThreadFewerRows) {
  // The work model: a row block pays 10 rows of packing, 40 per 48 rows and
  // one per row of the rest (a 256 GEMM: 226 for one call, 122 for each half);
  // a column block 22 columns of packing and one per column.
  EXPECT_EQ(GemmBlockWork(kBlas, true, 256), 226.0);
  EXPECT_EQ(GemmBlockWork(kBlas, true, 128), 122.0);
  EXPECT_EQ(GemmBlockWork(kBlas, true, 144), 130.0);
  EXPECT_EQ(GemmBlockWork(kBlas, false, 256), 278.0);
  // Equal threads: the even cut.
  EXPECT_EQ(BalancedCut(0.5, kBlas, true, 256, 256, 256), 128);
  EXPECT_EQ(BalancedCut(0.5, kBlas, true, 1024, 1024, 1024), 512);
  EXPECT_EQ(BalancedCut(0.5, kBlas, false, 512, 128, 256), 256);
  // The caller 1.5x slower than the helper (share 0.6): 96 rows (0.6 * 90 =
  // 54 against 0.4 * 146 = 58.4); the other way round 160; columns 192.
  EXPECT_EQ(BalancedCut(0.6, kBlas, true, 256, 256, 256), 96);
  EXPECT_EQ(BalancedCut(0.4, kBlas, true, 256, 256, 256), 160);
  EXPECT_EQ(BalancedCut(0.6, kBlas, false, 512, 128, 256), 192);
  // A small difference already pays at 256 rows: 112 + 144 rows (144 is
  // three of OpenBLAS's 48-row steps) beats 128 + 128 once the caller is
  // 8% slower (share 0.52).
  EXPECT_EQ(BalancedCut(0.51, kBlas, true, 256, 256, 256), 128);
  EXPECT_EQ(BalancedCut(0.52, kBlas, true, 256, 256, 256), 112);
  // Never below a quarter or above three quarters, nor a block at or below
  // the small-matrix size: at k = 16 each block of 256 x 256 would need 240
  // of the 256 rows, so no cut at all.
  EXPECT_EQ(BalancedCut(0.95, kBlas, true, 256, 256, 256), 64);
  EXPECT_EQ(BalancedCut(0.05, kBlas, true, 256, 256, 256), 192);
  EXPECT_EQ(BalancedCut(0.5, kBlas, true, 256, 256, 16), 0);
  // eager's AVX-512 kernel: 11 rows of packing and one per row; a column
  // block one per column. With no 48-row steps to chase, share 0.52 keeps
  // the even cut. Share 0.6: 96 rows (the slower block 0.4 * 171 = 68.4,
  // against 0.6 * 123 = 73.8 at 112); 0.4: 160; columns at 0.6: 208 (0.6 *
  // 208 = 124.8, against 0.4 * 320 = 128 at 192).
  EXPECT_EQ(GemmBlockWork(kOwn, true, 256), 267.0);
  EXPECT_EQ(GemmBlockWork(kOwn, true, 128), 139.0);
  EXPECT_EQ(GemmBlockWork(kOwn, false, 256), 256.0);
  EXPECT_EQ(BalancedCut(0.5, kOwn, true, 256, 256, 256), 128);
  EXPECT_EQ(BalancedCut(0.52, kOwn, true, 256, 256, 256), 128);
  EXPECT_EQ(BalancedCut(0.6, kOwn, true, 256, 256, 256), 96);
  EXPECT_EQ(BalancedCut(0.4, kOwn, true, 256, 256, 256), 160);
  EXPECT_EQ(BalancedCut(0.6, kOwn, false, 512, 128, 256), 208);
  std::mt19937 rng(3);
  for (int i = 0; i < 5000; ++i) {
    const SgemmKernel kernel = rng() % 2 ? kOwn : kBlas;
    const bool rows = rng() % 2;
    const int64_t dim = 2 + rng() % 3000;
    const int64_t other = 1 + rng() % 3000;
    const int64_t k = 1 + rng() % 3000;
    const double q = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    const int64_t cut = BalancedCut(q, kernel, rows, dim, other, k);
    if (cut == 0) continue;
    ASSERT_EQ(cut % 16, 0) << dim << " " << other << " " << k << " " << q;
    ASSERT_GT(cut * other * k, kSmallGemmMacs) << dim << " " << other << " " << k << " " << q;
    ASSERT_GT((dim - cut) * other * k, kSmallGemmMacs) << dim << " " << other << " " << k;
    // A slower caller never gets more rows.
    ASSERT_LE(BalancedCut(std::min(1.0, q + 0.05), kernel, rows, dim, other, k), cut)
        << dim << " " << q;
  }
}

TEST(GemmTest, BalanceMovesRowsTowardTheFasterThread) {
  GemmBalance balance;
  EXPECT_EQ(BalancedCut(balance.CallerShare(), kBlas, true, 256, 256, 256), 128);
  // Injected timings: the caller's core runs 1.5x slower per unit of work
  // than the helper's, job after job. The cut follows each job's measured
  // share step by step: rows only ever leave the caller, and end at the
  // balanced cut (96 rows, BalancedCut's test above).
  const auto work = [](int64_t len) { return GemmBlockWork(kBlas, true, len); };
  int64_t cut = 128;
  int first_at_96 = -1;
  for (int job = 0; job < 200; ++job) {
    balance.Observe(kBlas, true, cut, 1.5e-6 * work(cut), 256 - cut, 1.0e-6 * work(256 - cut));
    const int64_t next = BalancedCut(balance.CallerShare(), kBlas, true, 256, 256, 256);
    ASSERT_LE(next, cut) << "job " << job;
    if (next == 96 && first_at_96 < 0) first_at_96 = job;
    cut = next;
  }
  EXPECT_NEAR(balance.CallerShare(), 0.6, 1e-3);
  EXPECT_EQ(cut, 96);
  EXPECT_LT(first_at_96, 40);  // within 40 jobs
  // The helper's core slows down instead (2x): rows move back past the middle.
  for (int job = 0; job < 200; ++job) {
    balance.Observe(kBlas, true, cut, 1e-6 * work(cut), 256 - cut, 2e-6 * work(256 - cut));
    cut = BalancedCut(balance.CallerShare(), kBlas, true, 256, 256, 256);
  }
  EXPECT_EQ(cut, 176);
  // A job preempted for a scheduler tick (a block 10,000x slower) moves the
  // share by at most kWeight * (0.8 - share).
  const double before = balance.CallerShare();
  balance.Observe(kBlas, true, cut, 1.0, 256 - cut, 1e-4);
  EXPECT_LE(balance.CallerShare() - before, GemmBalance::kWeight * (0.8 - before) + 1e-12);
  // Equal threads again: back to the even cut.
  for (int job = 0; job < 300; ++job) {
    balance.Observe(kBlas, true, cut, 1e-6 * work(cut), 256 - cut, 1e-6 * work(256 - cut));
    cut = BalancedCut(balance.CallerShare(), kBlas, true, 256, 256, 256);
  }
  EXPECT_EQ(cut, 128);
}

// The claim the balanced cut rests on, for every cut it can make of the
// benchmark's shapes: a 256 GEMM cut into two row blocks anywhere at a
// multiple of 16, and a wide 128 x 512 (k 256) one into two column blocks,
// in all four transpose cases, gives one call's bits; a 1024 GEMM too, at a
// sample of its cuts.
TEST(GemmTest, EveryTwoBlockCutOfTheBenchmarkShapesChangesNoBits) {
  if (!ExactSgemmCuts()) {
    GTEST_SKIP() << "OpenBLAS runs the " << BlasCoreName() << " core: no balanced cuts";
  }
  struct Case {
    int64_t m, n, k;
    bool rows;
    int64_t step;
  };
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const Case& c : {Case{256, 256, 256, true, 16}, Case{128, 512, 256, false, 16},
                        Case{1024, 1024, 1024, true, 112}}) {
    for (auto [ta, tb] : {std::pair{false, false}, {false, true}, {true, false}, {true, true}}) {
      if (c.m == 1024 && (ta || tb)) continue;  // time: one transpose case at 1024
      const int64_t lda = ta ? c.m : c.k;
      const int64_t ldb = tb ? c.k : c.n;
      std::vector<float> a(c.m * c.k), b(c.k * c.n), whole(c.m * c.n);
      for (float& v : a) v = u(rng);
      for (float& v : b) v = u(rng);
      BlasGemm<float>(ta, tb, c.m, c.n, c.k, a.data(), lda, b.data(), ldb, whole.data(), c.n);
      const int64_t dim = c.rows ? c.m : c.n;
      for (int64_t cut = 16; cut < dim; cut += c.step) {
        std::vector<float> two(c.m * c.n, -1.0f);
        for (auto [s, e] : {std::pair<int64_t, int64_t>{0, cut}, {cut, dim}}) {
          if (c.rows) {
            Gemm<float>(ta, tb, e - s, c.n, c.k, ta ? a.data() + s : a.data() + s * lda, lda,
                        b.data(), ldb, two.data() + s * c.n, c.n);
          } else {
            Gemm<float>(ta, tb, c.m, e - s, c.k, a.data(), lda,
                        tb ? b.data() + s * ldb : b.data() + s, ldb, two.data() + s, c.n);
          }
        }
        ASSERT_EQ(std::memcmp(whole.data(), two.data(), whole.size() * sizeof(float)), 0)
            << c.m << "x" << c.n << "x" << c.k << " ta=" << ta << " tb=" << tb << " cut at " << cut;
      }
    }
  }
}

// MatMul on two threads with the shared balance pushed to either end (the
// caller's core 3x slower, then 3x faster) gives the bits of one thread.
TEST(GemmTest, MatMulIsIdenticalWhateverTheBalance) {
  const int saved = GetNumThreads();
  GemmBalance& balance = SharedGemmBalance();
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{256, 256, 256},
                         {128, 512, 256},
                         {517, 67, 300},
                         {64, 256, 784}}) {
    const Tensor a = RandomUniform(Shape{m, k}, 1, -1.0, 1.0);
    const Tensor b = RandomUniform(Shape{k, n}, 2, -1.0, 1.0);
    SetNumThreads(1);
    const std::vector<float> one = MatMul(a, b).ToVector<float>();
    SetNumThreads(2);
    for (double slow : {3.0, 1.0 / 3.0}) {
      balance.Reset();
      for (int i = 0; i < 100; ++i) balance.Observe(kBlas, true, 96, slow * 90e-6, 96, 90e-6);
      const int64_t dim = m >= n ? m : n;
      const int64_t half = PlanGemm(true, m, n, k, 2, 2).block;  // the kernel MatMul models
      const SgemmKernel kernel = m >= n ? SgemmKernelFor(half, n, k) : SgemmKernelFor(m, half, k);
      const int64_t cut = BalancedCut(balance.CallerShare(), kernel, m >= n, dim, m + n - dim, k);
      if (ExactSgemmCuts()) {  // the uneven cut is the one MatMul makes below
        ASSERT_NE(cut, 0) << m << "x" << n << "x" << k;
        EXPECT_NE(cut, BalancedCut(0.5, kernel, m >= n, dim, m + n - dim, k))
            << m << "x" << n << "x" << k;
      }
      for (int rep = 0; rep < 5; ++rep) {
        EXPECT_EQ(MatMul(a, b).ToVector<float>(), one)
            << m << "x" << n << "x" << k << " caller slowness " << slow;
      }
    }
  }
  balance.Reset();
  SetNumThreads(saved);
}

}  // namespace
}  // namespace eager::internal
