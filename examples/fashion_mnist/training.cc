#include "examples/fashion_mnist/training.h"

#include <chrono>
#include <numeric>

#include "autodiff/gradient_tape.h"
#include "examples/fashion_mnist/progress_bar.h"
#include "ops/binary_ops.h"
#include "ops/nn_ops.h"
#include "ops/random_ops.h"
#include "ops/reduction_ops.h"

namespace fashion_mnist {

using eager::StrCat;
using eager::Tensor;
using eager::Variable;

float TrainStep(Mlp& model, eager::Adam& optimizer, const Dataset& batch) {
  return TrainStep(model, optimizer, batch.images, batch.labels);
}

double Accuracy(Mlp& model, const Dataset& data, int64_t batch_size) {
  std::vector<int64_t> order(static_cast<size_t>(data.size()));
  std::iota(order.begin(), order.end(), 0);
  int64_t correct = 0;
  for (int64_t begin = 0; begin < data.size(); begin += batch_size) {
    const int64_t count = std::min(batch_size, data.size() - begin);
    const Dataset batch = Batch(data, order, begin, count);
    const Tensor predicted = eager::ArgMax(model(batch.images), 1);
    auto p = predicted.data<int64_t>();
    auto y = batch.labels.data<int32_t>();
    for (size_t i = 0; i < p.size(); ++i) correct += p[i] == y[i];
  }
  return data.size() > 0 ? static_cast<double>(correct) / static_cast<double>(data.size()) : 0;
}

ScopedAverageWeights::ScopedAverageWeights(const eager::ExponentialMovingAverage& ema,
                                           const std::vector<Variable*>& variables)
    : variables_(variables) {
  for (Variable* v : variables_) {
    const Variable* shadow = ema.Average(*v);
    EAGER_CHECK(shadow != nullptr, "ScopedAverageWeights: variable '", v->shared_name(),
                "' has no moving average");
    saved_.push_back(v->value());
  }
  for (Variable* v : variables_) v->Assign(ema.Average(*v)->value());
}

ScopedAverageWeights::~ScopedAverageWeights() {
  for (size_t i = 0; i < variables_.size(); ++i) variables_[i]->Assign(saved_[i]);
}

TrainResult Train(Mlp& model, const Dataset& train, const Dataset& test,
                  const TrainOptions& options, std::ostream& log) {
  EAGER_CHECK(options.epochs >= 1, "Train: epochs must be >= 1, got ", options.epochs);
  EAGER_CHECK(options.batch_size >= 1 && options.batch_size <= train.size(),
              "Train: batch_size must be in [1, ", train.size(), "], got ", options.batch_size);
  eager::AdamOptions adam_options;
  adam_options.learning_rate = options.learning_rate;
  eager::Adam optimizer(adam_options);
  eager::ExponentialMovingAverage ema(options.ema_decay, /*num_updates=*/0);
  eager::RandomGenerator shuffle(options.seed);

  const int64_t steps_per_epoch = train.size() / options.batch_size;  // drop the remainder
  std::vector<int64_t> order(static_cast<size_t>(train.size()));
  TrainResult result;
  int64_t examples = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    std::iota(order.begin(), order.end(), 0);
    for (size_t i = order.size() - 1; i > 0; --i) {  // Fisher-Yates
      std::swap(order[i], order[shuffle.NextBelow(i + 1)]);
    }
    ProgressBar bar(log, StrCat("epoch ", epoch, "/", options.epochs), steps_per_epoch,
                    options.interactive);
    for (int64_t step = 0; step < steps_per_epoch; ++step) {
      const Dataset batch = Batch(train, order, step * options.batch_size, options.batch_size);
      result.last_loss = TrainStep(model, optimizer, batch);
      ++result.steps;
      examples += options.batch_size;
      // The shadows follow the weights; num_updates keeps the early average
      // from clinging to the random initialization.
      ema.set_num_updates(result.steps);
      ema.Apply(model.TrainableVariables());
      bar.Update(step + 1, result.last_loss, (step + 1) * options.batch_size);
      if (options.on_step) {
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        options.on_step({result.steps, result.last_loss, seconds > 0 ? examples / seconds : 0});
      }
    }
    bar.Finish();
    if (options.on_epoch) {
      result.test_accuracy = Accuracy(model, test);
      {
        ScopedAverageWeights averaged(ema, model.TrainableVariables());
        result.ema_test_accuracy = Accuracy(model, test);
      }
      options.on_epoch({epoch, result.steps, result.test_accuracy, result.ema_test_accuracy});
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.examples_per_second = result.seconds > 0 ? examples / result.seconds : 0;
  if (!options.on_epoch) {  // else measured after the last epoch already
    result.test_accuracy = Accuracy(model, test);
    ScopedAverageWeights averaged(ema, model.TrainableVariables());
    result.ema_test_accuracy = Accuracy(model, test);
  }
  return result;
}

}  // namespace fashion_mnist
