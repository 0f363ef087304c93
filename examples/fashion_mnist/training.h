#pragma once

// The main job's training loop: a Classifier (Mlp or Cnn) trained with Adam on shuffled
// mini-batches, an ExponentialMovingAverage of the weights updated after
// every step, and test accuracy with the raw and the averaged weights.

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "autodiff/adam.h"
#include "autodiff/exponential_moving_average.h"
#include "examples/fashion_mnist/classifier.h"
#include "examples/fashion_mnist/dataset.h"
#include "examples/fashion_mnist/mlp.h"

namespace fashion_mnist {

// What Train reports after each step and each epoch (e.g. to a SummaryWriter).
struct StepReport {
  int64_t step = 0;  // 1-based, over all epochs
  float loss = 0;
  double examples_per_second = 0;  // since training started
};
struct EpochReport {
  int epoch = 0;
  int64_t step = 0;              // steps done so far
  double test_accuracy = 0;      // raw weights
  double ema_test_accuracy = 0;  // averaged weights
};

struct TrainOptions {
  int epochs = 2;
  int64_t batch_size = 64;
  double learning_rate = 0.001;
  uint64_t seed = 42;
  double ema_decay = 0.999;  // with num_updates = step, as tf.train's idiom
  bool interactive = false;  // redraw the progress bar in place
  // With a directory: a CheckpointManager (max_to_keep 3) there saves the
  // model, Adam, the EMA, the epoch and step and the data-order RNG state
  // after every epoch and when stopped; Train resumes from its latest
  // checkpoint, so that an interrupted run ends exactly as an uninterrupted one.
  std::string checkpoint_dir{};
  // Checked after every step; when it turns true, Train saves (with a
  // checkpoint_dir) and returns early with `interrupted` set (Ctrl-C).
  const std::atomic<bool>* stop = nullptr;
  // For tests: behave as if stopped once this many steps are done in total.
  std::optional<int64_t> stop_after_steps{};
  // Optional; when on_epoch is set, test accuracy is measured after every epoch.
  std::function<void(const StepReport&)> on_step{};
  std::function<void(const EpochReport&)> on_epoch{};
  // Data parallelism (distributed_training.h): when set, replaces TrainStep;
  // given the global batch, trains on this process's share and returns the
  // batch's loss. distributed_checkpoints: every process saves its share.
  std::function<float(Classifier&, eager::Adam&, const Dataset& batch)> train_step{};
  bool distributed_checkpoints = false;
  // Optional; called once training ends (not when stopped early) with the
  // model and its averages, e.g. to export them (export.h).
  std::function<void(Classifier&, const eager::ExponentialMovingAverage&)> on_trained{};
};

struct TrainResult {
  int64_t steps = 0;
  float last_loss = 0;
  double seconds = 0;
  double examples_per_second = 0;
  double test_accuracy = 0;       // raw weights
  double ema_test_accuracy = 0;   // averaged weights
  bool interrupted = false;       // stopped early: no accuracies
  std::string resumed_from{};     // the checkpoint training resumed from, if any
  std::string last_checkpoint{};  // the last checkpoint saved, if any
};

// One Adam step on the mean sparse softmax cross entropy; returns the loss.
float TrainStep(Classifier& model, eager::Adam& optimizer, const Dataset& batch);

// Fraction of `data` classified correctly, in batches of `batch_size`.
double Accuracy(Classifier& model, const Dataset& data, int64_t batch_size = 1000);

// While alive, the variables hold their moving averages (for evaluation);
// the destructor puts the trained values back. REQUIRES: every variable has
// a shadow in `ema` (else InvalidArgumentError naming it).
class ScopedAverageWeights {
 public:
  ScopedAverageWeights(const eager::ExponentialMovingAverage& ema,
                       const std::vector<eager::Variable*>& variables);
  ~ScopedAverageWeights();
  ScopedAverageWeights(const ScopedAverageWeights&) = delete;
  ScopedAverageWeights& operator=(const ScopedAverageWeights&) = delete;

 private:
  std::vector<eager::Variable*> variables_;
  std::vector<eager::Tensor> saved_;
};

// Trains `model` (built on the first batch) and evaluates on `test`.
// Progress goes to `log`. Throws InvalidArgumentError for options out of
// range (epochs < 1, batch_size < 1 or larger than the training set).
TrainResult Train(Classifier& model, const Dataset& train, const Dataset& test,
                  const TrainOptions& options, std::ostream& log);

}  // namespace fashion_mnist
