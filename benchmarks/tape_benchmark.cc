// GradientTape overhead: a 10-op elementwise chain on small tensors, run
// forward only, forward while a tape records, and forward + Gradient().
// The "per_op" counter divides the time by the 10 forward ops, so the
// difference between the rows is the tape's per-op cost.
//
//   build-tape/benchmarks/tape_benchmark --benchmark_min_time=0.5

#include <benchmark/benchmark.h>

#include "autodiff/gradient_tape.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/reduction_ops.h"
#include "ops/unary_ops.h"
#include "runtime/variable.h"

namespace eager {
namespace {

constexpr int kChainOps = 10;

// Ten elementwise ops whose values stay bounded for any input.
Tensor Chain(const Tensor& x, const Tensor& a, const Tensor& b) {
  Tensor y = Mul(x, a);  // 1
  y = Add(y, b);         // 2
  y = Tanh(y);           // 3
  y = Square(y);         // 4
  y = Sigmoid(y);        // 5
  y = Sub(y, b);         // 6
  y = Mul(y, x);         // 7
  y = Exp(y);            // 8
  y = Add(y, a);         // 9
  return Neg(y);         // 10
}

struct Inputs {
  explicit Inputs(int64_t n)
      : x(Fill(Shape{n}, Tensor(0.5f)), "x"),
        a(Fill(Shape{n}, Tensor(1.5f))),
        b(Fill(Shape{n}, Tensor(-0.25f))) {}
  Variable x;
  Tensor a, b;
};

// Seconds per forward op, printed with an SI prefix ("35.2n" is 35.2 ns).
void SetCounters(benchmark::State& state) {
  state.counters["per_op"] = benchmark::Counter(
      kChainOps, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_ChainForward(benchmark::State& state) {
  Inputs in(state.range(0));
  for (auto _ : state) {
    Tensor y = Chain(in.x.value(), in.a, in.b);
    benchmark::DoNotOptimize(y);
  }
  SetCounters(state);
}
BENCHMARK(BM_ChainForward)->Arg(1)->Arg(100);

void BM_ChainForwardRecorded(benchmark::State& state) {
  Inputs in(state.range(0));
  for (auto _ : state) {
    GradientTape tape;
    Tensor y = Chain(in.x.value(), in.a, in.b);
    benchmark::DoNotOptimize(y);
  }
  SetCounters(state);
}
BENCHMARK(BM_ChainForwardRecorded)->Arg(1)->Arg(100);

void BM_ChainForwardAndGradient(benchmark::State& state) {
  Inputs in(state.range(0));
  for (auto _ : state) {
    GradientTape tape;
    Tensor loss = ReduceSum(Chain(in.x.value(), in.a, in.b));
    std::optional<Tensor> grad = tape.Gradient(loss, in.x);
    benchmark::DoNotOptimize(grad);
  }
  SetCounters(state);
}
BENCHMARK(BM_ChainForwardAndGradient)->Arg(1)->Arg(100);

// The same forward without a tape but with the ReduceSum, so that the
// gradient's cost is the difference from BM_ChainForwardAndGradient.
void BM_ChainForwardAndSum(benchmark::State& state) {
  Inputs in(state.range(0));
  for (auto _ : state) {
    Tensor loss = ReduceSum(Chain(in.x.value(), in.a, in.b));
    benchmark::DoNotOptimize(loss);
  }
  SetCounters(state);
}
BENCHMARK(BM_ChainForwardAndSum)->Arg(1)->Arg(100);

// A tape that is alive but tracks none of the inputs: the cost every op pays
// for ShouldRecord when a tape records something else.
void BM_ChainForwardUnwatchedTape(benchmark::State& state) {
  Inputs in(state.range(0));
  Tensor x = in.x.value();
  GradientTape tape(/*persistent=*/false, /*watch_accessed_variables=*/false);
  tape.Watch(Tensor(1.0f));
  for (auto _ : state) {
    Tensor y = Chain(x, in.a, in.b);
    benchmark::DoNotOptimize(y);
  }
  SetCounters(state);
}
BENCHMARK(BM_ChainForwardUnwatchedTape)->Arg(1)->Arg(100);

}  // namespace
}  // namespace eager

BENCHMARK_MAIN();
