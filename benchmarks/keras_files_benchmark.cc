// Saving and loading Keras 3's files (`.weights.h5`, `.keras`) with
// eager_keras, for keras_files_side_by_side.py, which times Keras 3 itself
// (h5py) on the same model in the same run.
//
//   build/benchmarks/keras_files_benchmark
//   EAGER_BENCH_TMPDIR=/some/disk build/benchmarks/keras_files_benchmark
//
// The model: Input(784) -> Dense(W, relu) -> Dense(W, relu) -> Dense(10), with
// Adam's slots built (Optimizer::Build), so a file holds the weights and the
// optimizer's m and v: W=1024 is 1.86 M parameters (22 MB with Adam), W=4096
// 20.0 M (240 MB). Each iteration writes or reads the whole file; eager's
// writes end with fsync and a rename (crash-safe), Keras's do not.

#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "autodiff/adam.h"
#include "autodiff/dense.h"
#include "autodiff/input_layer.h"
#include "autodiff/sequential.h"
#include "ops/unary_ops.h"
#include "runtime/names.h"
#include "saving/keras/keras_model.h"
#include "saving/keras/keras_weights.h"

namespace eager {
namespace {

namespace fs = std::filesystem;

std::string BenchPath(const std::string& name) {
  const char* env = std::getenv("EAGER_BENCH_TMPDIR");
  const fs::path dir =
      fs::path(env ? env : "/tmp") / ("eager_keras_bench_" + std::to_string(getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

// CPU seconds of this process and of its waited-for children (the libhdf5
// reading child): on a loaded machine, CPU time is what compares.
double ProcessCpuSeconds() {
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage u{};
    getrusage(who, &u);
    total += static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
             1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  }
  return total;
}

// Runs `body` per iteration; adds the counter process_cpu_ms (per iteration,
// children included).
template <typename Fn>
void Timed(benchmark::State& state, Fn body) {
  const double start = ProcessCpuSeconds();
  for (auto _ : state) body();
  state.counters["process_cpu_ms"] =
      1e3 * (ProcessCpuSeconds() - start) / static_cast<double>(state.iterations());
}

struct Model {
  explicit Model(int64_t width) {
    ResetDefaultNames();
    model.Add(std::make_unique<InputLayer>(Shape{784}));
    model.Add(std::make_unique<Dense>(width, Relu));
    model.Add(std::make_unique<Dense>(width, Relu));
    model.Add(std::make_unique<Dense>(10));
    model(Tensor::Zeros(Shape{1, 784}, DType::kFloat32));
    adam.Build(model.TrainableVariables());
  }
  int64_t Bytes() {
    int64_t n = 0;
    for (Variable* v : model.TrainableVariables()) n += v->value().num_elements() * 4;
    return 3 * n;  // weights, m, v
  }
  Sequential model;
  Adam adam;
};

void BM_SaveKerasWeights(benchmark::State& state) {
  Model m(state.range(0));
  const std::string path = BenchPath("m.weights.h5");
  Timed(state, [&] { SaveKerasWeights(path, m.model, &m.adam); });
  state.SetBytesProcessed(state.iterations() * m.Bytes());
  fs::remove(path);
}

void BM_LoadKerasWeights(benchmark::State& state) {
  Model m(state.range(0));
  const std::string path = BenchPath("m.weights.h5");
  SaveKerasWeights(path, m.model, &m.adam);
  Timed(state, [&] { LoadKerasWeights(path, m.model, &m.adam); });
  state.SetBytesProcessed(state.iterations() * m.Bytes());
  fs::remove(path);
}

void BM_SaveKerasModel(benchmark::State& state) {
  Model m(state.range(0));
  const std::string path = BenchPath("m.keras");
  Timed(state, [&] { SaveKerasModel(path, m.model, &m.adam, "sparse_categorical_crossentropy"); });
  state.SetBytesProcessed(state.iterations() * m.Bytes());
  fs::remove(path);
}

void BM_LoadKerasModel(benchmark::State& state) {
  Model m(state.range(0));
  const std::string path = BenchPath("m.keras");
  SaveKerasModel(path, m.model, &m.adam, "sparse_categorical_crossentropy");
  Timed(state, [&] { benchmark::DoNotOptimize(LoadKerasModel(path)); });
  state.SetBytesProcessed(state.iterations() * m.Bytes());
  fs::remove(path);
}

BENCHMARK(BM_SaveKerasWeights)
    ->ArgName("width")
    ->Arg(1024)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_LoadKerasWeights)
    ->ArgName("width")
    ->Arg(1024)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_SaveKerasModel)
    ->ArgName("width")
    ->Arg(1024)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_LoadKerasModel)
    ->ArgName("width")
    ->Arg(1024)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace eager

BENCHMARK_MAIN();
