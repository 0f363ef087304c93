// Per-op overhead and matmul throughput of eager's ops, single-threaded (the
// cases are in ops_cases.h; ops_torch_benchmark runs them beside libtorch).

#include "benchmarks/ops_cases.h"

BENCHMARK(eager_bench::EagerAdd)->Name("BM_Add")->Arg(1)->Arg(100);
BENCHMARK(eager_bench::EagerAddBias)->Name("BM_AddBias");
BENCHMARK(eager_bench::EagerMatMul)
    ->Name("BM_MatMul")
    ->Arg(64)
    ->Arg(256)
    ->Arg(1024)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
