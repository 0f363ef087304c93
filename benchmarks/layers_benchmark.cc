// Training steps of the layer library's heavy layers (issues 38 and 41),
// the same models as benchmarks/torch_peer.py's BM_PipTorch* lines of the
// same names, so that benchmarks/layers_side_by_side.py puts them in one
// table:
//
//   BM_EagerLSTMStep/batch:64/seq:32/threads:T   LSTM(256) over [64, 32, 128]
//                                                 inputs, Dense(10) on the last
//                                                 output, mean sparse softmax
//                                                 cross entropy, Adam: one step
//   BM_EagerGRUStep/batch:64/seq:32/threads:T    the same with GRU(256)
//                                                 (reset_after, torch's GRU)
//   BM_EagerConvBNReLUStep/batch:B/threads:T     Conv2D(64, 3x3, same) +
//                                                 BatchNormalization(training)
//                                                 + ReLU on [B, 32, 32, 64],
//                                                 global average pooling,
//                                                 Dense(10), Adam: one step
//
//   BM_LstmCell/fused:F/threads:T                 one LSTM cell step's gate math
//                                                 on z [64, 4 x 256] and its
//                                                 gradient: the fused ops
//                                                 (F = 1, what LSTM runs) or
//                                                 the Sigmoid/Tanh/Mul/Add
//                                                 ops they replace (F = 0)
//
//   build/benchmarks/layers_benchmark --benchmark_min_time=1
//
// flop_per_iter counts the multiply-adds of the matmuls and convolutions
// (2 per), forward plus the two backward products (3x), for the share of
// the FMA peak.

#include <benchmark/benchmark.h>

#include <array>
#include <memory>
#include <span>
#include <vector>

#include "autodiff/adam.h"
#include "autodiff/dense.h"
#include "autodiff/gradient_tape.h"
#include "autodiff/layers/conv.h"
#include "autodiff/layers/normalization.h"
#include "autodiff/layers/pooling.h"
#include "autodiff/layers/recurrent.h"
#include "autodiff/layers/reshaping.h"
#include "autodiff/sequential.h"
#include "ops/binary_ops.h"
#include "ops/fused_lstm_cell.h"
#include "ops/nn_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "ops/unary_ops.h"
#include "runtime/threads.h"

namespace {

namespace layers = eager::layers;

constexpr int64_t kFeatures = 128;  // the recurrent layers' input width
constexpr int64_t kUnits = 256;
constexpr int64_t kClasses = 10;
constexpr int64_t kImage = 32;  // Conv+BN+ReLU: [B, 32, 32, 64] -> 64 channels
constexpr int64_t kChannels = 64;

eager::Tensor Labels(int64_t batch, eager::RandomGenerator& rng) {
  std::vector<int32_t> y(static_cast<size_t>(batch));
  for (auto& v : y) v = static_cast<int32_t>(rng.NextBelow(kClasses));
  return eager::Tensor::FromVector<int32_t>(y, eager::Shape{batch});
}

float Step(eager::Sequential& model, eager::Adam& optimizer, const eager::Tensor& x,
           const eager::Tensor& labels) {
  eager::GradientTape tape;
  const eager::Tensor loss = eager::ReduceMean(
      eager::SparseSoftmaxCrossEntropyWithLogits(labels, model(x, /*training=*/true)));
  const std::vector<eager::Variable*> variables = model.TrainableVariables();
  optimizer.ApplyGradients(tape.Gradient(loss, variables), variables);
  return loss.scalar<float>();
}

void RunSteps(benchmark::State& state, eager::Sequential& model, const eager::Tensor& x,
              int64_t batch, double flop) {
  eager::RandomGenerator rng(2);
  const eager::Tensor labels = Labels(batch, rng);
  eager::Adam optimizer(1e-3);
  float loss = 0;
  for (int i = 0; i < 2; ++i) loss = Step(model, optimizer, x, labels);
  for (auto _ : state) {
    loss = Step(model, optimizer, x, labels);
    benchmark::DoNotOptimize(loss);
  }
  state.counters["samples_per_iter"] = static_cast<double>(batch);
  state.counters["flop_per_iter"] = flop;
  state.counters["loss"] = loss;
  state.counters["threads"] = eager::GetNumThreads();
}

// gates = 4 (LSTM) or 3 (GRU): per step [B, F] x [F, g U] and [B, U] x [U, g U].
double RecurrentStepFlop(int64_t batch, int64_t seq, int64_t gates) {
  const double per_step = 2.0 * static_cast<double>(batch * (kFeatures + kUnits) * gates * kUnits);
  return 3.0 * (static_cast<double>(seq) * per_step +
                2.0 * static_cast<double>(batch * kUnits) * static_cast<double>(kClasses));
}

template <typename Layer>
void BM_RecurrentStep(benchmark::State& state, int64_t gates) {
  const int64_t batch = state.range(0), seq = state.range(1);
  eager::SetNumThreads(static_cast<int>(state.range(2)));
  eager::RandomGenerator rng(1);
  const eager::Tensor x = rng.Uniform(eager::Shape{batch, seq, kFeatures});
  eager::Sequential model;
  model.Add(std::make_unique<Layer>(kUnits, layers::RecurrentConfig{.seed = 3}));
  model.Add(std::make_unique<eager::Dense>(kClasses, nullptr, true, /*seed=*/4));
  RunSteps(state, model, x, batch, RecurrentStepFlop(batch, seq, gates));
}

void BM_EagerLSTMStep(benchmark::State& state) { BM_RecurrentStep<layers::LSTM>(state, 4); }
void BM_EagerGRUStep(benchmark::State& state) { BM_RecurrentStep<layers::GRU>(state, 3); }

BENCHMARK(BM_EagerLSTMStep)
    ->ArgsProduct({{64}, {32}, {1, 2}})
    ->ArgNames({"batch", "seq", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EagerGRUStep)
    ->ArgsProduct({{64}, {32}, {1, 2}})
    ->ArgNames({"batch", "seq", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_EagerConvBNReLUStep(benchmark::State& state) {
  const int64_t batch = state.range(0);
  eager::SetNumThreads(static_cast<int>(state.range(1)));
  eager::RandomGenerator rng(1);
  const eager::Tensor x = rng.Uniform(eager::Shape{batch, kImage, kImage, kChannels});
  eager::Sequential model;
  model.Add(std::make_unique<layers::Conv2D>(
      kChannels, std::array<int64_t, 2>{3, 3},
      layers::Conv2DConfig{.padding = "same", .use_bias = false, .seed = 3}));
  model.Add(std::make_unique<layers::BatchNormalization>());
  model.Add(std::make_unique<layers::Activation>("relu"));
  model.Add(std::make_unique<layers::GlobalAveragePooling2D>());
  model.Add(std::make_unique<eager::Dense>(kClasses, nullptr, true, /*seed=*/4));
  const double conv = 2.0 * static_cast<double>(batch * kImage * kImage * kChannels) * 9.0 *
                      static_cast<double>(kChannels);
  RunSteps(state, model, x, batch, 3.0 * conv);
}
void BM_LstmCell(benchmark::State& state) {
  const bool fused = state.range(0) != 0;
  eager::SetNumThreads(static_cast<int>(state.range(1)));
  constexpr int64_t kBatch = 64;
  const eager::Tensor z = eager::RandomUniform(eager::Shape{kBatch, 4 * kUnits}, 1, -3, 3);
  const eager::Tensor c_prev = eager::RandomUniform(eager::Shape{kBatch, kUnits}, 2, -1, 1);
  const auto gate = [&](int g) {
    return eager::StridedSlice(z, {0, g * kUnits}, {0, (g + 1) * kUnits}, {1, 1},
                               {.begin = 1, .end = 1});
  };
  for (auto _ : state) {
    eager::GradientTape tape;
    tape.Watch(z);
    tape.Watch(c_prev);
    eager::Tensor c, h;
    if (fused) {
      c = eager::LstmCellState(z, c_prev);
      h = eager::LstmCellOutput(z, c);
    } else {
      const eager::Tensor i = eager::Sigmoid(gate(0));
      const eager::Tensor f = eager::Sigmoid(gate(1));
      c = eager::Add(eager::Mul(f, c_prev), eager::Mul(i, eager::Tanh(gate(2))));
      h = eager::Mul(eager::Sigmoid(gate(3)), eager::Tanh(c));
    }
    // The two states' gradients arrive as in a sequence: h's from above, c's
    // from the next step.
    const std::vector<eager::Tensor> targets = {h, c}, sources = {z, c_prev};
    auto grads = tape.Gradient(std::span<const eager::Tensor>(targets),
                               std::span<const eager::Tensor>(sources));
    benchmark::DoNotOptimize(grads);
  }
  state.counters["threads"] = eager::GetNumThreads();
}
BENCHMARK(BM_LstmCell)
    ->ArgsProduct({{0, 1}, {1, 2}})
    ->ArgNames({"fused", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_EagerConvBNReLUStep)
    ->ArgsProduct({{64}, {1, 2}})
    ->ArgNames({"batch", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
