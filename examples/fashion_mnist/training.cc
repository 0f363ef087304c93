#include "examples/fashion_mnist/training.h"

#include <chrono>
#include <numeric>

#include "autodiff/gradient_tape.h"
#include "examples/fashion_mnist/progress_bar.h"
#include "ops/binary_ops.h"
#include "ops/nn_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "runtime/trackable.h"
#include "saving/checkpoint/checkpoint.h"
#include "saving/checkpoint/checkpoint_manager.h"

namespace fashion_mnist {

using eager::StrCat;
using eager::Tensor;
using eager::Variable;

namespace {

// The data-order generator's state at the start of the epoch in progress, as
// a checkpointable string attribute: restoring it puts the generator back,
// so the resumed epoch shuffles exactly as the interrupted one did.
class ShuffleState final : public eager::Trackable {
 public:
  explicit ShuffleState(eager::RandomGenerator& generator)
      : generator_(generator), at_epoch_start_(generator.State()) {}
  void MarkEpochStart() { at_epoch_start_ = generator_.State(); }
  std::map<std::string, Tensor> SerializeToTensors() const override {
    return {{"state", Tensor(at_epoch_start_)}};
  }
  void RestoreFromTensors(const std::map<std::string, Tensor>& tensors) override {
    at_epoch_start_ = tensors.at("state").scalar<std::string>();
    generator_.SetState(at_epoch_start_);
  }

 private:
  eager::RandomGenerator& generator_;
  std::string at_epoch_start_;
};

}  // namespace

float TrainStep(Classifier& model, eager::Adam& optimizer, const Dataset& batch) {
  return TrainStep(model, optimizer, batch.images, batch.labels);
}

double Accuracy(Classifier& model, const Dataset& data, int64_t batch_size) {
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
    const Variable* shadow = ema.AverageVariable(*v);
    EAGER_CHECK(shadow != nullptr, "ScopedAverageWeights: variable '", v->shared_name(),
                "' has no moving average");
    saved_.push_back(v->value());
  }
  for (Variable* v : variables_) v->Assign(ema.AverageVariable(*v)->value());
}

ScopedAverageWeights::~ScopedAverageWeights() {
  for (size_t i = 0; i < variables_.size(); ++i) variables_[i]->Assign(saved_[i]);
}

TrainResult Train(Classifier& model, const Dataset& train, const Dataset& test,
                  const TrainOptions& options, std::ostream& log) {
  EAGER_CHECK(options.epochs >= 1, "Train: epochs must be >= 1, got ", options.epochs);
  EAGER_CHECK(options.batch_size >= 1 && options.batch_size <= train.size(),
              "Train: batch_size must be in [1, ", train.size(), "], got ", options.batch_size);
  eager::AdamOptions adam_options;
  adam_options.learning_rate = options.learning_rate;
  eager::Adam optimizer(adam_options);
  eager::ExponentialMovingAverage ema(options.ema_decay, /*num_updates=*/0);
  eager::RandomGenerator shuffle(options.seed);

  // What a checkpoint holds besides the model, Adam and the EMA: the epoch
  // in progress, the steps done in it, and the shuffle state at its start.
  Variable epoch_in_progress(Tensor(int64_t{1}), "epoch", /*trainable=*/false);
  Variable epoch_step(Tensor(int64_t{0}), "epoch_step", /*trainable=*/false);
  ShuffleState shuffle_state(shuffle);
  std::optional<eager::Checkpoint> checkpoint;
  std::optional<eager::CheckpointManager> manager;
  TrainResult result;
  if (!options.checkpoint_dir.empty()) {
    checkpoint.emplace(
        std::vector<std::pair<std::string, eager::Trackable*>>{{"model", &model},
                                                               {"optimizer", &optimizer},
                                                               {"ema", &ema},
                                                               {"epoch", &epoch_in_progress},
                                                               {"epoch_step", &epoch_step},
                                                               {"shuffle", &shuffle_state}});
    manager.emplace(*checkpoint, options.checkpoint_dir, /*max_to_keep=*/3);
    if (const auto& latest = manager->latest_checkpoint()) {
      // The model builds, Adam makes its slots and the EMA its shadows on
      // the first step: they take their saved values then.
      checkpoint->Restore(*latest).AssertExistingObjectsMatched();
      result.resumed_from = *latest;
      result.steps = optimizer.iterations();
      log << "resumed from " << *latest << " at epoch "
          << epoch_in_progress.value().scalar<int64_t>() << ", step "
          << epoch_step.value().scalar<int64_t>() << "\n";
    }
  }
  const auto start = std::chrono::steady_clock::now();
  auto stop_timing = [&](int64_t examples) {
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.examples_per_second = result.seconds > 0 ? examples / result.seconds : 0;
  };
  auto save = [&] {
    if (manager) {
      result.last_checkpoint =
          *manager->Save(std::nullopt, true, {.distributed = options.distributed_checkpoints});
    }
  };

  const int64_t steps_per_epoch = train.size() / options.batch_size;  // drop the remainder
  std::vector<int64_t> order(static_cast<size_t>(train.size()));
  int64_t examples = 0;
  const int first_epoch = static_cast<int>(epoch_in_progress.value().scalar<int64_t>());
  const int64_t first_step = epoch_step.value().scalar<int64_t>();
  for (int epoch = first_epoch; epoch <= options.epochs; ++epoch) {
    epoch_in_progress.Assign(Tensor(int64_t{epoch}));
    shuffle_state.MarkEpochStart();
    std::iota(order.begin(), order.end(), 0);
    for (size_t i = order.size() - 1; i > 0; --i) {  // Fisher-Yates
      std::swap(order[i], order[shuffle.NextBelow(i + 1)]);
    }
    ProgressBar bar(log, StrCat("epoch ", epoch, "/", options.epochs), steps_per_epoch,
                    options.interactive);
    for (int64_t step = epoch == first_epoch ? first_step : 0; step < steps_per_epoch; ++step) {
      const Dataset batch = Batch(train, order, step * options.batch_size, options.batch_size);
      result.last_loss = options.train_step ? options.train_step(model, optimizer, batch)
                                            : TrainStep(model, optimizer, batch);
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
      const bool stop = (options.stop != nullptr && options.stop->load()) ||
                        (options.stop_after_steps && result.steps >= *options.stop_after_steps);
      if (stop && step + 1 < steps_per_epoch) {
        bar.Finish();
        epoch_step.Assign(Tensor(step + 1));
        save();
        result.interrupted = true;
        stop_timing(examples);
        return result;
      }
    }
    bar.Finish();
    if (options.on_epoch) {
      EpochReport report{epoch, result.steps, Accuracy(model, test), 0};
      {
        ScopedAverageWeights averaged(ema, model.TrainableVariables());
        report.ema_test_accuracy = Accuracy(model, test);
      }
      options.on_epoch(report);
    }
    // The next epoch starts at its step 0 with the generator as it is now.
    epoch_in_progress.Assign(Tensor(int64_t{epoch + 1}));
    epoch_step.Assign(Tensor(int64_t{0}));
    shuffle_state.MarkEpochStart();
    save();
    if ((options.stop != nullptr && options.stop->load()) ||
        (options.stop_after_steps && result.steps >= *options.stop_after_steps)) {
      if (epoch < options.epochs) {
        result.interrupted = true;
        stop_timing(examples);
        return result;
      }
    }
  }
  stop_timing(examples);
  if (result.steps > 0 && !model.built()) {
    // Resumed after the last epoch: nothing trained in this run, so the
    // model and the averages are made (from the checkpoint) to evaluate.
    model(Batch(test, {0}, 0, 1).images);
    ema.CreateAverages(model.TrainableVariables());
  }
  result.test_accuracy = Accuracy(model, test);
  {
    ScopedAverageWeights averaged(ema, model.TrainableVariables());
    result.ema_test_accuracy = Accuracy(model, test);
  }
  if (options.on_trained) options.on_trained(model, ema);
  return result;
}

}  // namespace fashion_mnist
