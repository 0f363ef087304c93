// One training step of the main job's model (784-256-10 ReLU MLP, sparse
// softmax cross entropy, Adam) at batch 64 and 256; items/s is examples/s.
// training_torch_benchmark.cc runs the same eager cases beside libtorch.
//
//   build/benchmarks/training_benchmark --benchmark_min_time=2
//
// BM_EagerTrainStepAsyncSave/batch:B/threads:T/save:S times one step at a
// time, the same way in every mode: between two timed steps the thread keeps
// training, untimed, for at least kUntimedMs (time enough for a save to end),
// then waits for the previous save (Checkpoint::Sync, normally done by then)
// and runs kWarmSteps more steps. So, as in a training loop that saves every
// few steps, the timed step never follows an idle wait: on this VM a step
// after a few milliseconds asleep runs ~5% slower (benchmarks/README.md), and
// when only save:1 waited for its save, its ratio carried that too. With
// S = 1 an asynchronous Checkpoint save of the model and optimizer
// (CheckpointOptions{.async = true}) starts just before the timed step, so
// that step runs while the save copies and writes. The save:1 / save:0 time
// ratio is the cost of saving in the background (issue 11: <= 1.1).
// save:2 splits it: no save, but every variable's and slot's value is held
// as a save holds it, so the step pays the copies and nothing else.
// Counters: step_page_faults (the timed step's page faults, this thread),
// save_call_us (Write() itself), wait_after_step_us (the wait for the
// previous save after the untimed steps: time the thread still slept),
// new_buffer_steps (the share of timed steps in which Adam wrote the first
// kernel into a new buffer because a save still held its value: 0 when the
// save let go of it in time, 1 in save:2).
// Checkpoints go to EAGER_BENCH_TMPDIR (default /tmp).

#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <utility>
#include <vector>

#include "autodiff/adam.h"
#include "autodiff/exponential_moving_average.h"
#include "examples/fashion_mnist/mlp.h"
#include "ops/random_generator.h"
#include "runtime/threads.h"
#include "saving/checkpoint/checkpoint.h"

namespace {

// Pixels uniform in [0, 1) and labels spread over the 10 classes.
struct FakeBatch {
  eager::Tensor images, labels;
  explicit FakeBatch(int64_t batch) {
    eager::RandomGenerator rng(123);
    images = rng.Uniform(eager::Shape{batch, 784});
    std::vector<int32_t> y(static_cast<size_t>(batch));
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<int32_t>(rng.NextBelow(10));
    labels = eager::Tensor::FromVector<int32_t>(y, eager::Shape{batch});
  }
};

void BM_EagerTrainStep(benchmark::State& state) {
  const int64_t batch = state.range(0);
  FakeBatch data(batch);
  fashion_mnist::Mlp model(1);
  eager::Adam optimizer;
  fashion_mnist::TrainStep(model, optimizer, data.images, data.labels);  // build + slots
  for (auto _ : state) {
    benchmark::DoNotOptimize(fashion_mnist::TrainStep(model, optimizer, data.images, data.labels));
  }
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_EagerTrainStep)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);

// The main job's step: the training step plus the EMA update of the weights.
void BM_EagerTrainStepWithEma(benchmark::State& state) {
  const int64_t batch = state.range(0);
  FakeBatch data(batch);
  fashion_mnist::Mlp model(1);
  eager::Adam optimizer;
  eager::ExponentialMovingAverage ema(0.999);
  fashion_mnist::TrainStep(model, optimizer, data.images, data.labels);
  for (auto _ : state) {
    benchmark::DoNotOptimize(fashion_mnist::TrainStep(model, optimizer, data.images, data.labels));
    ema.Apply(model.TrainableVariables());
  }
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_EagerTrainStepWithEma)->Arg(64)->Unit(benchmark::kMicrosecond);

constexpr int kWarmSteps = 3;
constexpr int kUntimedMs = 10;

// Page faults this thread has taken so far (minor: fresh or reclaimed pages
// of the heap; major: read from disk).
int64_t ThisThreadsPageFaults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt + usage.ru_majflt;
}

// Where the first kernel's value lives: Adam updates it in place unless
// someone else (a save) holds it.
const void* KernelData(fashion_mnist::Mlp& model) {
  return model.TrainableVariables()[0]->value().bytes().data();
}

void BM_EagerTrainStepAsyncSave(benchmark::State& state) {
  const int64_t batch = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  const int64_t mode = state.range(2);
  const int saved_threads = eager::GetNumThreads();
  eager::SetNumThreads(threads);
  FakeBatch data(batch);
  fashion_mnist::Mlp model(1);
  eager::Adam optimizer;
  fashion_mnist::TrainStep(model, optimizer, data.images, data.labels);  // build + slots
  eager::Checkpoint checkpoint({{"model", &model}, {"optimizer", &optimizer}});
  const char* env = std::getenv("EAGER_BENCH_TMPDIR");
  const std::filesystem::path dir = std::filesystem::path(env ? env : "/tmp") /
                                    ("eager_async_save_bench_" + std::to_string(getpid()));
  const std::string prefix = (dir / "ckpt").string();
  using Clock = std::chrono::steady_clock;
  double save_call_seconds = 0;
  double wait_seconds = 0;
  std::vector<eager::Variable*> variables = model.TrainableVariables();
  for (eager::Variable* v : model.TrainableVariables()) {
    variables.push_back(optimizer.GetSlot(*v, "m"));
    variables.push_back(optimizer.GetSlot(*v, "v"));
  }
  std::vector<eager::Tensor> held;
  int64_t step_faults = 0;
  int64_t faults_before_step = -1;  // read when the timing resumes
  int64_t new_buffer_steps = 0;
  const void* kernel_before_step = nullptr;
  for (auto _ : state) {
    state.PauseTiming();
    if (faults_before_step >= 0) step_faults += ThisThreadsPageFaults() - faults_before_step;
    if (kernel_before_step != nullptr && KernelData(model) != kernel_before_step)
      ++new_buffer_steps;
    held.clear();
    // Training goes on while the previous save (mode 1) writes.
    auto start = Clock::now();
    do {
      benchmark::DoNotOptimize(
          fashion_mnist::TrainStep(model, optimizer, data.images, data.labels));
    } while (Clock::now() - start < std::chrono::milliseconds(kUntimedMs));
    start = Clock::now();
    checkpoint.Sync();  // the previous save, normally over by now
    wait_seconds += std::chrono::duration<double>(Clock::now() - start).count();
    // A few more, in every mode, in case Sync() did wait.
    for (int i = 0; i < kWarmSteps; ++i) {
      benchmark::DoNotOptimize(
          fashion_mnist::TrainStep(model, optimizer, data.images, data.labels));
    }
    if (mode == 2) {
      for (eager::Variable* v : variables) held.push_back(v->value());
    }
    if (mode == 1) {
      start = Clock::now();
      checkpoint.Write(prefix, eager::CheckpointOptions{.async = true});
      save_call_seconds += std::chrono::duration<double>(Clock::now() - start).count();
    }
    faults_before_step = ThisThreadsPageFaults();
    kernel_before_step = KernelData(model);
    state.ResumeTiming();
    benchmark::DoNotOptimize(fashion_mnist::TrainStep(model, optimizer, data.images, data.labels));
  }
  step_faults += ThisThreadsPageFaults() - faults_before_step;
  if (KernelData(model) != kernel_before_step) ++new_buffer_steps;
  checkpoint.Sync();
  const double n = static_cast<double>(state.iterations());
  state.counters["step_page_faults"] = static_cast<double>(step_faults) / n;
  state.counters["save_call_us"] = save_call_seconds / n * 1e6;
  state.counters["wait_after_step_us"] = wait_seconds / n * 1e6;
  state.counters["new_buffer_steps"] = static_cast<double>(new_buffer_steps) / n;
  state.SetItemsProcessed(state.iterations() * batch);
  std::filesystem::remove_all(dir);
  eager::SetNumThreads(saved_threads);
}
BENCHMARK(BM_EagerTrainStepAsyncSave)
    ->ArgNames({"batch", "threads", "save"})
    ->ArgsProduct({{64, 256}, {1, 2}, {0, 1, 2}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// This thread's CPU time so far, in seconds (user + system).
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The same comparison as BM_EagerTrainStepAsyncSave save:1 against save:0,
// paired: every iteration times one step without a save and then, after the
// same untimed steps and Sync(), one step during an asynchronous save, in one
// process a few milliseconds apart. On a loaded machine separate runs of
// save:0 and save:1 see different load; a pair sees nearly the same. The
// counters are medians over the pairs of (step during a save) / (step
// without): by wall time (ratio_wall) and by this thread's CPU time
// (ratio_cpu, which leaves out the time the thread waited for a core), and
// the steps' medians in microseconds. The benchmark's own time is the pair's.
void BM_EagerTrainStepAsyncSavePaired(benchmark::State& state) {
  const int64_t batch = state.range(0);
  const int saved_threads = eager::GetNumThreads();
  eager::SetNumThreads(static_cast<int>(state.range(1)));
  FakeBatch data(batch);
  fashion_mnist::Mlp model(1);
  eager::Adam optimizer;
  fashion_mnist::TrainStep(model, optimizer, data.images, data.labels);  // build + slots
  eager::Checkpoint checkpoint({{"model", &model}, {"optimizer", &optimizer}});
  const char* env = std::getenv("EAGER_BENCH_TMPDIR");
  const std::filesystem::path dir = std::filesystem::path(env ? env : "/tmp") /
                                    ("eager_async_save_paired_" + std::to_string(getpid()));
  const std::string prefix = (dir / "ckpt").string();
  using Clock = std::chrono::steady_clock;
  const auto train = [&] {
    benchmark::DoNotOptimize(fashion_mnist::TrainStep(model, optimizer, data.images, data.labels));
  };
  // As BM_EagerTrainStepAsyncSave between timed steps: kUntimedMs of
  // training, Sync(), kWarmSteps more.
  const auto untimed = [&] {
    const auto start = Clock::now();
    do train();
    while (Clock::now() - start < std::chrono::milliseconds(kUntimedMs));
    checkpoint.Sync();
    for (int i = 0; i < kWarmSteps; ++i) train();
  };
  // {wall, cpu} seconds of one step.
  const auto timed_step = [&] {
    const double cpu = ThreadCpuSeconds();
    const auto start = Clock::now();
    train();
    return std::pair{std::chrono::duration<double>(Clock::now() - start).count(),
                     ThreadCpuSeconds() - cpu};
  };
  std::vector<double> plain_wall, save_wall, ratio_wall, ratio_cpu;
  for (auto _ : state) {
    untimed();
    const auto plain = timed_step();
    untimed();
    checkpoint.Write(prefix, eager::CheckpointOptions{.async = true});
    const auto during = timed_step();
    plain_wall.push_back(plain.first);
    save_wall.push_back(during.first);
    ratio_wall.push_back(during.first / plain.first);
    ratio_cpu.push_back(during.second / plain.second);
  }
  checkpoint.Sync();
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  state.counters["ratio_wall"] = median(ratio_wall);
  state.counters["ratio_cpu"] = median(ratio_cpu);
  state.counters["step_us"] = median(plain_wall) * 1e6;
  state.counters["step_during_save_us"] = median(save_wall) * 1e6;
  std::filesystem::remove_all(dir);
  eager::SetNumThreads(saved_threads);
}
BENCHMARK(BM_EagerTrainStepAsyncSavePaired)
    ->ArgNames({"batch", "threads"})
    ->ArgsProduct({{64, 256}, {1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Adam alone on the model's 203,530 parameters: the optimizer's share.
void BM_EagerAdamApply(benchmark::State& state) {
  eager::Variable kernel(eager::Tensor::Zeros(eager::Shape{784, 256}), "k");
  eager::Variable bias(eager::Tensor::Zeros(eager::Shape{256}), "b");
  eager::Variable kernel2(eager::Tensor::Zeros(eager::Shape{256, 10}), "k2");
  eager::Variable bias2(eager::Tensor::Zeros(eager::Shape{10}), "b2");
  eager::RandomGenerator rng(5);
  std::vector<eager::Optimizer::GradientAndVariable> pairs = {
      {rng.Normal(kernel.shape()), &kernel},
      {rng.Normal(bias.shape()), &bias},
      {rng.Normal(kernel2.shape()), &kernel2},
      {rng.Normal(bias2.shape()), &bias2}};
  eager::Adam optimizer;
  for (auto _ : state) optimizer.ApplyGradients(pairs);
  state.SetItemsProcessed(state.iterations() * 203530);
}
BENCHMARK(BM_EagerAdamApply)->Unit(benchmark::kMicrosecond);

}  // namespace

#ifndef EAGER_TRAINING_BENCHMARK_NO_MAIN
BENCHMARK_MAIN();
#endif
