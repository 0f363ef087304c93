// One single-threaded float32 GEMM: OpenBLAS's call against eager's own
// AVX-512 kernel (ops/internal/avx512_sgemm.h), which MatMul takes where it
// suits the shape. Same operands, same bits; run side by side, compare the
// ratio. The shapes: square products, a 128-row block of a 256 product (what
// each of two threads runs), and a 784-256-128-10 training step's products.
//
//   gemm_benchmark --benchmark_filter='BM_Gemm/' --benchmark_repetitions=5

#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "ops/internal/avx512_sgemm.h"
#include "ops/internal/gemm.h"

namespace {

using eager::internal::Avx512Sgemm;
using eager::internal::Avx512SgemmMatchesBlas;
using eager::internal::BlasGemm;

// Args: kernel (0 OpenBLAS, 1 eager), m, n, k, ta, tb.
void BM_Gemm(benchmark::State& state) {
  const bool own = state.range(0) == 1;
  const int64_t m = state.range(1), n = state.range(2), k = state.range(3);
  const bool ta = state.range(4) != 0, tb = state.range(5) != 0;
  if (own && !Avx512SgemmMatchesBlas()) {
    state.SkipWithError("eager's AVX-512 sgemm does not run here (no AVX-512 or no SkylakeX core)");
    return;
  }
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> a(m * k), b(k * n), c(m * n);
  for (float& v : a) v = u(rng);
  for (float& v : b) v = u(rng);
  const int64_t lda = ta ? m : k, ldb = tb ? k : n;
  for (auto _ : state) {
    if (own) {
      benchmark::DoNotOptimize(
          Avx512Sgemm(ta, tb, m, n, k, a.data(), lda, b.data(), ldb, c.data(), n));
    } else {
      BlasGemm<float>(ta, tb, m, n, k, a.data(), lda, b.data(), ldb, c.data(), n);
    }
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * m * n * k, benchmark::Counter::kIsIterationInvariantRate);
}

void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"own", "m", "n", "k", "ta", "tb"});
  const std::vector<std::vector<int64_t>> shapes = {
      {256, 256, 256, 0, 0}, {256, 256, 256, 1, 0}, {256, 256, 256, 0, 1},    {256, 256, 256, 1, 1},
      {128, 256, 256, 0, 0}, {512, 512, 512, 0, 0}, {1024, 1024, 1024, 0, 0}, {64, 256, 784, 0, 0},
      {256, 256, 784, 0, 0},                         // x W1, batch 64 and 256
      {784, 256, 64, 1, 0},  {784, 256, 256, 1, 0},  // x^T dh1
      {64, 256, 128, 0, 1},  {256, 256, 128, 0, 1},  // dh2 W2^T
  };
  for (const auto& s : shapes) {
    for (int64_t own : {0, 1}) b->Args({own, s[0], s[1], s[2], s[3], s[4]});
  }
}
BENCHMARK(BM_Gemm)->Apply(Shapes);

}  // namespace

BENCHMARK_MAIN();
