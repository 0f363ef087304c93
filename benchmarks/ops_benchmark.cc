// Per-op overhead and matmul throughput of eager's ops, single-threaded.
//
//   BM_Add/N      a + b on float32 vectors of N elements (N = 1: pure overhead)
//   BM_AddBias    [256,256] + [256] row broadcast (a Dense layer's bias add)
//   BM_MatMul/N   [N,N] x [N,N] float32, with a GFLOP/s counter

#include <benchmark/benchmark.h>

#include "ops/binary_ops.h"
#include "ops/matmul.h"
#include "ops/operators.h"
#include "ops/random_ops.h"

namespace {

using eager::DType;
using eager::Shape;
using eager::Tensor;

void BM_Add(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = eager::RandomUniform(Shape{n}, 1);
  Tensor b = eager::RandomUniform(Shape{n}, 2);
  for (auto _ : state) {
    Tensor c = a + b;
    benchmark::DoNotOptimize(c);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Add)->Arg(1)->Arg(100);

void BM_AddBias(benchmark::State& state) {
  Tensor x = eager::RandomUniform(Shape{256, 256}, 1);
  Tensor bias = eager::RandomUniform(Shape{256}, 2);
  for (auto _ : state) {
    Tensor c = eager::Add(x, bias);
    benchmark::DoNotOptimize(c);
  }
  state.SetBytesProcessed(state.iterations() * 2 * 256 * 256 * int64_t{sizeof(float)});
}
BENCHMARK(BM_AddBias);

void BM_MatMul(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = eager::RandomNormal(Shape{n, n}, 1);
  Tensor b = eager::RandomNormal(Shape{n, n}, 2);
  for (auto _ : state) {
    Tensor c = eager::MatMul(a, b);
    benchmark::DoNotOptimize(c);
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * static_cast<double>(n * n * n) * static_cast<double>(state.iterations()) / 1e9,
      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MatMul)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
