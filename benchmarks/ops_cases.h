#pragma once

// eager's op benchmark cases, shared by ops_benchmark (eager alone) and
// ops_torch_benchmark (eager beside libtorch in one run), so both binaries
// measure exactly the same code.
//
//   EagerAdd(N)      a + b on float32 vectors of N elements (N = 1: pure overhead)
//   EagerAddBias     [256,256] + [256] row broadcast (a Dense layer's bias add)
//   EagerMatMul(N)   [N,N] x [N,N] float32, with a GFLOP/s counter

#include <benchmark/benchmark.h>

#include "ops/binary_ops.h"
#include "ops/matmul.h"
#include "ops/operators.h"
#include "ops/random_generator.h"

namespace eager_bench {

// The GFLOP/s counter of an [n,n] x [n,n] matmul benchmark.
inline void SetMatMulFlops(benchmark::State& state, int64_t n) {
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * static_cast<double>(n * n * n) * static_cast<double>(state.iterations()) / 1e9,
      benchmark::Counter::kIsRate);
}

inline void EagerAdd(benchmark::State& state) {
  const int64_t n = state.range(0);
  eager::Tensor a = eager::RandomUniform(eager::Shape{n}, 1);
  eager::Tensor b = eager::RandomUniform(eager::Shape{n}, 2);
  for (auto _ : state) {
    eager::Tensor c = a + b;
    benchmark::DoNotOptimize(c);
  }
  state.SetItemsProcessed(state.iterations());
}

inline void EagerAddBias(benchmark::State& state) {
  eager::Tensor x = eager::RandomUniform(eager::Shape{256, 256}, 1);
  eager::Tensor bias = eager::RandomUniform(eager::Shape{256}, 2);
  for (auto _ : state) {
    eager::Tensor c = eager::Add(x, bias);
    benchmark::DoNotOptimize(c);
  }
  state.SetBytesProcessed(state.iterations() * 2 * 256 * 256 * int64_t{sizeof(float)});
}

inline void EagerMatMul(benchmark::State& state) {
  const int64_t n = state.range(0);
  eager::Tensor a = eager::RandomNormal(eager::Shape{n, n}, 1);
  eager::Tensor b = eager::RandomNormal(eager::Shape{n, n}, 2);
  for (auto _ : state) {
    eager::Tensor c = eager::MatMul(a, b);
    benchmark::DoNotOptimize(c);
  }
  SetMatMulFlops(state, n);
}

}  // namespace eager_bench
