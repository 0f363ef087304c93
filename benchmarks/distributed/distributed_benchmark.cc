// distributed_benchmark: eager's collectives and distributed saves under
// mpirun (benchmarks/distributed/run.sh runs it on 1 and 2 ranks).
//
//   mpirun -np 2 build/benchmarks/distributed/distributed_benchmark
//
// Every rank runs every case with a fixed iteration count (Google
// Benchmark's adaptive count could differ between ranks, and the
// collectives must meet); only rank 0 reports. Times are rank 0's.
//   RawAllreduce/BYTES and AverageAcrossRanks/BYTES, in pairs, three rounds:
//   AverageAcrossRanks/BYTES: eager's bucketed gradient averaging of 16
//     tensors of BYTES/16 (what DistributedOptimizer does a step)
//   RawAllreduce/BYTES: one MPI_Allreduce(SUM) on a float buffer of BYTES,
//     the floor: the same bytes with nothing around them
//   DistributedSave: a 1 GiB checkpoint (16 variables of 64 MiB) saved with
//     CheckpointOptions{.distributed = true} into EAGER_BENCH_TMPDIR (/tmp)

#include <benchmark/benchmark.h>
#include <mpi.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "distributed/gradient_averaging.h"
#include "distributed/world.h"
#include "runtime/variable.h"
#include "saving/checkpoint/checkpoint.h"

namespace {

using eager::distributed::World;

const World& TheWorld() { return *World::Current(); }

void AverageAcrossRanks(benchmark::State& state) {
  const auto bytes = static_cast<int64_t>(state.range(0));
  const int64_t per_tensor = bytes / 16 / 4;
  std::vector<std::optional<eager::Tensor>> tensors(16,
                                                    eager::Tensor::Zeros(eager::Shape{per_tensor}));
  for (auto _ : state) {
    benchmark::DoNotOptimize(eager::distributed::AverageAcrossRanks(TheWorld(), tensors));
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

void RawAllreduce(benchmark::State& state) {
  std::vector<float> values(static_cast<size_t>(state.range(0) / 4), 1.0f);
  for (auto _ : state) {
    MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}

void DistributedSave(benchmark::State& state) {
  constexpr int kVariables = 16;
  constexpr int64_t kFloats = (int64_t{64} << 20) / 4;
  std::vector<std::unique_ptr<eager::Variable>> variables;
  std::vector<std::pair<std::string, eager::Trackable*>> children;
  for (int i = 0; i < kVariables; ++i) {
    variables.push_back(std::make_unique<eager::Variable>(
        eager::Tensor::FromVector<float>(std::vector<float>(kFloats, float(i))), "v"));
    std::string name = "v";
    name += std::to_string(i);
    children.emplace_back(std::move(name), variables.back().get());
  }
  eager::Checkpoint checkpoint(children);
  const char* base = std::getenv("EAGER_BENCH_TMPDIR");
  std::string dir = base != nullptr ? base : "/tmp";
  dir += "/eager_dsave_bench";
  std::string prefix = dir;
  prefix += "/ckpt";
  for (auto _ : state) {
    checkpoint.Write(prefix, {.distributed = true});
  }
  state.SetBytesProcessed(state.iterations() * kVariables * kFloats * 4);
  state.counters["ranks"] = TheWorld().size();
  TheWorld().Barrier();
  if (TheWorld().is_root()) std::filesystem::remove_all(dir);
}

constexpr int kIterations = 30;
// Each size's raw MPI_Allreduce and eager's averaging run back to back, in
// three rounds, so that both see the same moment's load (a loaded machine
// swings collectives' times by 100x between neighbouring runs); compare
// the medians of the three.
void RegisterAllreducePairs() {
  for (int round = 0; round < 3; ++round) {
    for (int64_t bytes :
         {int64_t{64} << 10, int64_t{1} << 20, int64_t{4} << 20, int64_t{16} << 20}) {
      benchmark::RegisterBenchmark("RawAllreduce", RawAllreduce)
          ->Arg(bytes)
          ->Iterations(kIterations)
          ->UseRealTime();
      benchmark::RegisterBenchmark("AverageAcrossRanks", AverageAcrossRanks)
          ->Arg(bytes)
          ->Iterations(kIterations)
          ->UseRealTime();
    }
  }
}
BENCHMARK(DistributedSave)->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);

// Rank 0 reports; the others run silently.
class NullReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace

int main(int argc, char** argv) {
  World world(argc, argv);
  RegisterAllreducePairs();
  benchmark::Initialize(&argc, argv);
  if (world.is_root()) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    NullReporter silent;
    benchmark::RunSpecifiedBenchmarks(&silent);
  }
  benchmark::Shutdown();
  return 0;
}
