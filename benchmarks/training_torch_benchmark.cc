// The main job's training step in eager and in libtorch, side by side in one
// binary: the same 784-256-10 ReLU MLP, mean cross entropy, Adam (eager:
// Keras defaults; torch::optim::Adam with lr 1e-3 and eps 1e-7). items/s is
// examples/s. BM_TorchTrainStep/batch:B/threads:T sets at::set_num_threads(T);
// its eager counterpart on T threads is anchors_benchmark's
// BM_EagerMainJobStep/batch:B/threads:T.
//
// Run libtorch at its strongest, on OpenBLAS (benchmarks/README.md):
//   LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp ATEN_CPU_CAPABILITY=avx512 \
//     build/benchmarks/training_torch_benchmark --benchmark_min_time=2

#include <torch/torch.h>

// The eager cases, exactly as in training_benchmark.cc.
#define EAGER_TRAINING_BENCHMARK_NO_MAIN
#include "benchmarks/training_benchmark.cc"

namespace {

struct TorchMlp : torch::nn::Module {
  TorchMlp()
      : hidden(register_module("hidden", torch::nn::Linear(784, 256))),
        logits(register_module("logits", torch::nn::Linear(256, 10))) {}
  torch::Tensor forward(const torch::Tensor& x) { return logits(torch::relu(hidden(x))); }
  torch::nn::Linear hidden, logits;
};

void BM_TorchTrainStep(benchmark::State& state) {
  const int64_t batch = state.range(0);
  at::set_num_threads(static_cast<int>(state.range(1)));
  torch::manual_seed(1);
  torch::Tensor images = torch::rand({batch, 784});
  torch::Tensor labels = torch::randint(0, 10, {batch}, torch::kLong);
  auto model = std::make_shared<TorchMlp>();
  torch::optim::Adam optimizer(model->parameters(),
                               torch::optim::AdamOptions(1e-3).betas({0.9, 0.999}).eps(1e-7));
  auto step = [&] {
    optimizer.zero_grad();
    torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(images), labels);
    loss.backward();
    optimizer.step();
    return loss.item<float>();
  };
  step();
  for (auto _ : state) benchmark::DoNotOptimize(step());
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_TorchTrainStep)
    ->ArgsProduct({{64, 256}, {1, 2}})
    ->ArgNames({"batch", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
