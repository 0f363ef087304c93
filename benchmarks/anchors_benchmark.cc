// eager's side of ../shared/anchors (libtorch + OpenBLAS and the hand-written
// Eigen floor): the same cases under the names its run.sh and summarize.py
// line up, so one run puts eager in the same tables.
//
//   BM_EagerMatmul/n:N/threads:T        float32 n x n GEMM, GFLOP/s
//   BM_EagerMLPStep/batch:B/threads:T   784-256-128-10 ReLU MLP, mean sparse
//                                       softmax cross entropy, Adam: one step
//   BM_EagerMainJobStep/batch:B/threads:T  the main job's 784-256-10 step
//   BM_EagerCNNStep/batch:B/threads:T   the main job's CNN (examples/fashion_mnist/cnn.h:
//                                       conv5x5x32-pool-conv5x5x64-pool-1024-10, Adam): one step
//   BM_EagerAdd/n:N                     a + b, the per-op floor
//   BM_EagerMatmulWide/m:M/n:N/k:K/threads:T  a wide C (column cut); eager's own
//
//   cd ../shared/anchors && PROJECT_BENCH=$PWD/build/benchmarks/anchors_benchmark QUICK=1 ./run.sh
//
// Threads are set per case with eager::SetNumThreads (runtime/threads.h).

#include <benchmark/benchmark.h>

#include <optional>
#include <vector>

#include "autodiff/adam.h"
#include "autodiff/dense.h"
#include "autodiff/gradient_tape.h"
#include "autodiff/module.h"
#include "examples/fashion_mnist/cnn.h"
#include "examples/fashion_mnist/mlp.h"
#include "ops/binary_ops.h"
#include "ops/matmul.h"
#include "ops/nn_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "ops/unary_ops.h"
#include "runtime/threads.h"

namespace {

void BM_EagerMatmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  eager::SetNumThreads(static_cast<int>(state.range(1)));
  eager::RandomGenerator rng(1);
  const eager::Tensor a = rng.Uniform(eager::Shape{n, n});
  const eager::Tensor b = rng.Uniform(eager::Shape{n, n});
  for (auto _ : state) benchmark::DoNotOptimize(eager::MatMul(a, b));
  state.counters["flop_per_iter"] = 2.0 * static_cast<double>(n * n) * static_cast<double>(n);
  state.counters["threads"] = eager::GetNumThreads();
}
BENCHMARK(BM_EagerMatmul)
    ->ArgsProduct({{64, 256, 1024, 2048}, {1, 2}})
    ->ArgNames({"n", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// A wide C (m < n), which MatMul cuts into column blocks: 128 x 512 with
// k = 256 is a 256 GEMM's work, 512 x 2048 with k = 1024 a 1024 GEMM's.
// Not one of the anchors' cases (eager's own, for issue 11's two-thread target).
void BM_EagerMatmulWide(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  eager::SetNumThreads(static_cast<int>(state.range(3)));
  eager::RandomGenerator rng(1);
  const eager::Tensor a = rng.Uniform(eager::Shape{m, k});
  const eager::Tensor b = rng.Uniform(eager::Shape{k, n});
  for (auto _ : state) benchmark::DoNotOptimize(eager::MatMul(a, b));
  state.counters["flop_per_iter"] = 2.0 * static_cast<double>(m * n) * static_cast<double>(k);
  state.counters["threads"] = eager::GetNumThreads();
}
BENCHMARK(BM_EagerMatmulWide)
    ->Args({128, 512, 256, 1})
    ->Args({128, 512, 256, 2})
    ->Args({512, 2048, 1024, 1})
    ->Args({512, 2048, 1024, 2})
    ->ArgNames({"m", "n", "k", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// The anchors' model: 784-256-128-10, ReLU, Adam(1e-3).
struct Mlp3 : eager::Module {
  Mlp3()
      : h1(256, eager::Relu, true, uint64_t{1}),
        h2(128, eager::Relu, true, uint64_t{2}),
        out(10, nullptr, true, uint64_t{3}) {
    Track("h1", h1);
    Track("h2", h2);
    Track("out", out);
  }
  eager::Tensor operator()(const eager::Tensor& x) { return out(h2(h1(x))); }
  eager::Dense h1, h2, out;
};

float Step(Mlp3& model, eager::Optimizer& optimizer, const eager::Tensor& images,
           const eager::Tensor& labels) {
  eager::GradientTape tape;
  const eager::Tensor loss =
      eager::ReduceMean(eager::SparseSoftmaxCrossEntropyWithLogits(labels, model(images)));
  const std::vector<eager::Variable*> variables = model.TrainableVariables();
  const std::vector<const eager::Variable*> sources(variables.begin(), variables.end());
  std::vector<std::optional<eager::Tensor>> grads = tape.Gradient(loss, sources);
  std::vector<eager::Optimizer::GradientAndVariable> pairs;
  for (size_t i = 0; i < variables.size(); ++i)
    pairs.emplace_back(std::move(grads[i]), variables[i]);
  optimizer.ApplyGradients(pairs);
  return loss.scalar<float>();
}

struct Batch {
  eager::Tensor images, labels;
  explicit Batch(int64_t batch) {
    eager::RandomGenerator rng(123);
    images = rng.Uniform(eager::Shape{batch, 784});
    std::vector<int32_t> y(static_cast<size_t>(batch));
    for (auto& v : y) v = static_cast<int32_t>(rng.NextBelow(10));
    labels = eager::Tensor::FromVector<int32_t>(y, eager::Shape{batch});
  }
};

void BM_EagerMLPStep(benchmark::State& state) {
  const int64_t batch = state.range(0);
  eager::SetNumThreads(static_cast<int>(state.range(1)));
  Batch data(batch);
  Mlp3 model;
  eager::Adam optimizer;
  float loss = 0;
  for (int i = 0; i < 3; ++i) loss = Step(model, optimizer, data.images, data.labels);  // warm
  for (auto _ : state) {
    loss = Step(model, optimizer, data.images, data.labels);
    benchmark::DoNotOptimize(loss);
  }
  state.counters["samples_per_iter"] = static_cast<double>(batch);
  state.counters["loss"] = loss;
}
BENCHMARK(BM_EagerMLPStep)
    ->ArgsProduct({{64, 256}, {1, 2}})
    ->ArgNames({"batch", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void BM_EagerMainJobStep(benchmark::State& state) {
  const int64_t batch = state.range(0);
  eager::SetNumThreads(static_cast<int>(state.range(1)));
  Batch data(batch);
  fashion_mnist::Mlp model(1);
  eager::Adam optimizer;
  for (int i = 0; i < 3; ++i) fashion_mnist::TrainStep(model, optimizer, data.images, data.labels);
  for (auto _ : state) {
    benchmark::DoNotOptimize(fashion_mnist::TrainStep(model, optimizer, data.images, data.labels));
  }
  state.counters["samples_per_iter"] = static_cast<double>(batch);
}
BENCHMARK(BM_EagerMainJobStep)
    ->ArgsProduct({{64, 256}, {1, 2}})
    ->ArgNames({"batch", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// FLOP of one CNN step as the anchors count it (../shared/anchors/README.md):
// B * (3F - C1), multiply-add = 2, SAME windows counted whole, conv1 without
// an input gradient; pooling, ReLU, softmax and Adam not counted.
double CnnStepFlop(int64_t batch) {
  const double conv1 = 2.0 * 28 * 28 * 32 * 25 * 1;
  const double forward = conv1 + 2.0 * 14 * 14 * 64 * 25 * 32 + 2.0 * 3136 * 1024 + 2.0 * 1024 * 10;
  return static_cast<double>(batch) * (3 * forward - conv1);
}

void BM_EagerCNNStep(benchmark::State& state) {
  const int64_t batch = state.range(0);
  eager::SetNumThreads(static_cast<int>(state.range(1)));
  Batch data(batch);
  fashion_mnist::Cnn model(1);
  eager::Adam optimizer;
  float loss = 0;
  for (int i = 0; i < 3; ++i) {
    loss = fashion_mnist::TrainStep(model, optimizer, data.images, data.labels);
  }
  for (auto _ : state) {
    loss = fashion_mnist::TrainStep(model, optimizer, data.images, data.labels);
    benchmark::DoNotOptimize(loss);
  }
  state.counters["samples_per_iter"] = static_cast<double>(batch);
  state.counters["flop_per_iter"] = CnnStepFlop(batch);
  state.counters["loss"] = loss;
}
BENCHMARK(BM_EagerCNNStep)
    ->ArgsProduct({{64, 256}, {1, 2}})
    ->ArgNames({"batch", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_EagerAdd(benchmark::State& state) {
  const int64_t n = state.range(0);
  eager::RandomGenerator rng(7);
  const eager::Tensor a = rng.Uniform(eager::Shape{n});
  const eager::Tensor b = rng.Uniform(eager::Shape{n});
  for (auto _ : state) benchmark::DoNotOptimize(eager::Add(a, b));
}
BENCHMARK(BM_EagerAdd)->Arg(1)->Arg(100)->ArgName("n")->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
