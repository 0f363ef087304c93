// The 10-op chain of tape_benchmark.cc in eager and in libtorch autograd,
// side by side in one binary (one thread each), so that one run gives the
// ratio under the same machine noise.
//
//   build-tape/benchmarks/tape_torch_benchmark --benchmark_min_time=0.5

#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "autodiff/gradient_tape.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/reduction_ops.h"
#include "ops/unary_ops.h"
#include "runtime/variable.h"

namespace {

constexpr int kChainOps = 10;

void SetCounters(benchmark::State& state) {
  state.counters["per_op"] = benchmark::Counter(
      kChainOps, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// Same ops, same order as tape_benchmark.cc.
eager::Tensor EagerChain(const eager::Tensor& x, const eager::Tensor& a, const eager::Tensor& b) {
  using namespace eager;
  Tensor y = Mul(x, a);
  y = Add(y, b);
  y = Tanh(y);
  y = Square(y);
  y = Sigmoid(y);
  y = Sub(y, b);
  y = Mul(y, x);
  y = Exp(y);
  y = Add(y, a);
  return Neg(y);
}

torch::Tensor TorchChain(const torch::Tensor& x, const torch::Tensor& a, const torch::Tensor& b) {
  torch::Tensor y = x * a;
  y = y + b;
  y = torch::tanh(y);
  y = torch::square(y);
  y = torch::sigmoid(y);
  y = y - b;
  y = y * x;
  y = torch::exp(y);
  y = y + a;
  return -y;
}

void BM_EagerForward(benchmark::State& state) {
  const int64_t n = state.range(0);
  eager::Variable x(eager::Fill(eager::Shape{n}, eager::Tensor(0.5f)), "x");
  eager::Tensor a = eager::Fill(eager::Shape{n}, eager::Tensor(1.5f));
  eager::Tensor b = eager::Fill(eager::Shape{n}, eager::Tensor(-0.25f));
  for (auto _ : state) {
    eager::Tensor y = EagerChain(x.value(), a, b);
    benchmark::DoNotOptimize(y);
  }
  SetCounters(state);
}
BENCHMARK(BM_EagerForward)->Arg(1)->Arg(100);

void BM_EagerForwardAndGradient(benchmark::State& state) {
  const int64_t n = state.range(0);
  eager::Variable x(eager::Fill(eager::Shape{n}, eager::Tensor(0.5f)), "x");
  eager::Tensor a = eager::Fill(eager::Shape{n}, eager::Tensor(1.5f));
  eager::Tensor b = eager::Fill(eager::Shape{n}, eager::Tensor(-0.25f));
  for (auto _ : state) {
    eager::GradientTape tape;
    eager::Tensor loss = eager::ReduceSum(EagerChain(x.value(), a, b));
    std::optional<eager::Tensor> grad = tape.Gradient(loss, x);
    benchmark::DoNotOptimize(grad);
  }
  SetCounters(state);
}
BENCHMARK(BM_EagerForwardAndGradient)->Arg(1)->Arg(100);

void BM_TorchForwardNoGrad(benchmark::State& state) {
  at::set_num_threads(1);
  const int64_t n = state.range(0);
  torch::Tensor x = torch::full({n}, 0.5f);
  torch::Tensor a = torch::full({n}, 1.5f);
  torch::Tensor b = torch::full({n}, -0.25f);
  torch::NoGradGuard no_grad;
  for (auto _ : state) {
    torch::Tensor y = TorchChain(x, a, b);
    benchmark::DoNotOptimize(y);
  }
  SetCounters(state);
}
BENCHMARK(BM_TorchForwardNoGrad)->Arg(1)->Arg(100);

void BM_TorchForwardAndBackward(benchmark::State& state) {
  at::set_num_threads(1);
  const int64_t n = state.range(0);
  torch::Tensor x = torch::full({n}, 0.5f, torch::requires_grad());
  torch::Tensor a = torch::full({n}, 1.5f);
  torch::Tensor b = torch::full({n}, -0.25f);
  for (auto _ : state) {
    // torch::autograd::grad, like Gradient(), returns the gradient instead
    // of accumulating into x.grad().
    torch::Tensor loss = TorchChain(x, a, b).sum();
    std::vector<torch::Tensor> grad = torch::autograd::grad({loss}, {x});
    benchmark::DoNotOptimize(grad);
  }
  SetCounters(state);
}
BENCHMARK(BM_TorchForwardAndBackward)->Arg(1)->Arg(100);

}  // namespace

BENCHMARK_MAIN();
