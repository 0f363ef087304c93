// eager vs libtorch on the same cases, side by side in one binary, so one run
// gives the ratio. Both are single-threaded (at::set_num_threads(1), and
// eager never spawns threads) and libtorch runs under NoGradGuard, so that
// neither pays for autograd bookkeeping: like is compared with like.

#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "ops/binary_ops.h"
#include "ops/matmul.h"
#include "ops/operators.h"
#include "ops/random_ops.h"

namespace {

using eager::Shape;
using eager::Tensor;

void Flops(benchmark::State& state, int64_t n) {
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * static_cast<double>(n * n * n) * static_cast<double>(state.iterations()) / 1e9,
      benchmark::Counter::kIsRate);
}

void BM_EagerAdd(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = eager::RandomUniform(Shape{n}, 1);
  Tensor b = eager::RandomUniform(Shape{n}, 2);
  for (auto _ : state) {
    Tensor c = a + b;
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_EagerAdd)->Arg(1)->Arg(100);

void BM_TorchAdd(benchmark::State& state) {
  at::set_num_threads(1);
  torch::NoGradGuard no_grad;
  const int64_t n = state.range(0);
  torch::Tensor a = torch::rand({n});
  torch::Tensor b = torch::rand({n});
  for (auto _ : state) {
    torch::Tensor c = a + b;
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_TorchAdd)->Arg(1)->Arg(100);

void BM_EagerMatMul(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = eager::RandomNormal(Shape{n, n}, 1);
  Tensor b = eager::RandomNormal(Shape{n, n}, 2);
  for (auto _ : state) {
    Tensor c = eager::MatMul(a, b);
    benchmark::DoNotOptimize(c);
  }
  Flops(state, n);
}
BENCHMARK(BM_EagerMatMul)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond);

void BM_TorchMatMul(benchmark::State& state) {
  at::set_num_threads(1);
  torch::NoGradGuard no_grad;
  const int64_t n = state.range(0);
  torch::Tensor a = torch::randn({n, n});
  torch::Tensor b = torch::randn({n, n});
  for (auto _ : state) {
    torch::Tensor c = torch::matmul(a, b);
    benchmark::DoNotOptimize(c);
  }
  Flops(state, n);
}
BENCHMARK(BM_TorchMatMul)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
