// eager vs libtorch on the same cases, side by side in one binary, so one run
// gives the ratio. Both are single-threaded (at::set_num_threads(1), and
// eager never spawns threads) and libtorch runs under NoGradGuard, so that
// neither pays for autograd bookkeeping: like is compared with like.

#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "benchmarks/ops_cases.h"

namespace {

BENCHMARK(eager_bench::EagerAdd)->Name("BM_EagerAdd")->Arg(1)->Arg(100);

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

BENCHMARK(eager_bench::EagerMatMul)
    ->Name("BM_EagerMatMul")
    ->Arg(64)
    ->Arg(256)
    ->Arg(1024)
    ->Unit(benchmark::kMicrosecond);

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
  eager_bench::SetMatMulFlops(state, n);
}
BENCHMARK(BM_TorchMatMul)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
