// Per-op overhead and matmul throughput of eager's ops, single-threaded (the
// cases are in ops_cases.h; ops_torch_benchmark runs them beside libtorch).

#include "benchmarks/ops_cases.h"
#include "ops/reduction_ops.h"
#include "ops/unary_ops.h"
#include "runtime/threads.h"

namespace {

// ReduceSum of n float32 elements at T threads: to one value (columns:0) or
// over the rows of an [n/256, 256] matrix (columns:1, a bias gradient).
// Below 2^17 elements reductions stay on the calling thread.
void BM_ReduceSum(benchmark::State& state) {
  const int64_t n = state.range(0);
  const bool columns = state.range(1) != 0;
  const int saved = eager::GetNumThreads();
  eager::SetNumThreads(static_cast<int>(state.range(2)));
  const eager::Tensor x = eager::RandomUniform(
      columns ? eager::Shape{n / 256, 256} : eager::Shape{n}, 1, -1.0, 1.0, eager::DType::kFloat32);
  for (auto _ : state) benchmark::DoNotOptimize(eager::ReduceSum(x, {0}));
  state.SetBytesProcessed(state.iterations() * n * 4);
  eager::SetNumThreads(saved);
}

// One-input elementwise ops on 2^20 float32 values in [-4, 4), one thread:
// the transcendental kernels side by side (issue 41: each as fast as Exp's
// vectorized exp, none a scalar expf per element).
enum UnaryCase { kRelu, kExp, kElu, kSigmoid, kTanh, kLog };
void BM_Unary(benchmark::State& state) {
  const auto op = static_cast<UnaryCase>(state.range(0));
  const int saved = eager::GetNumThreads();
  eager::SetNumThreads(1);
  const int64_t n = int64_t{1} << 20;
  const eager::Tensor x =
      eager::RandomUniform(eager::Shape{n}, 1, -4.0, 4.0, eager::DType::kFloat32);
  const eager::Tensor positive = eager::Exp(x);
  for (auto _ : state) {
    switch (op) {
      case kRelu:
        benchmark::DoNotOptimize(eager::Relu(x));
        break;
      case kExp:
        benchmark::DoNotOptimize(eager::Exp(x));
        break;
      case kElu:
        benchmark::DoNotOptimize(eager::Elu(x));
        break;
      case kSigmoid:
        benchmark::DoNotOptimize(eager::Sigmoid(x));
        break;
      case kTanh:
        benchmark::DoNotOptimize(eager::Tanh(x));
        break;
      case kLog:
        benchmark::DoNotOptimize(eager::Log(positive));
        break;
    }
  }
  static const char* const kNames[] = {"Relu", "Exp", "Elu", "Sigmoid", "Tanh", "Log"};
  state.SetLabel(kNames[op]);
  state.SetItemsProcessed(state.iterations() * n);
  eager::SetNumThreads(saved);
}

}  // namespace

BENCHMARK(BM_Unary)->DenseRange(kRelu, kLog)->Unit(benchmark::kMicrosecond);

BENCHMARK(eager_bench::EagerAdd)->Name("BM_Add")->Arg(1)->Arg(100);
BENCHMARK(eager_bench::EagerAddBias)->Name("BM_AddBias");
BENCHMARK(eager_bench::EagerMatMul)
    ->Name("BM_MatMul")
    ->Arg(64)
    ->Arg(256)
    ->Arg(1024)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_ReduceSum)
    ->ArgNames({"n", "columns", "threads"})
    ->ArgsProduct({{1 << 10, 1 << 22}, {0, 1}, {1, 2}});

BENCHMARK_MAIN();
