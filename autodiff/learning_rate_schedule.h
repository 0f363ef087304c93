#pragma once

// Learning-rate schedules as Keras computes them
// (keras.optimizers.schedules; tf_keras's agree to float rounding): the
// learning rate of a step from the optimizer's iterations before it, in
// float32 (Keras computes in the dtype of initial_learning_rate, a Python
// float, so float32).
//
//   auto schedule = std::make_shared<eager::ExponentialDecay>(0.1, 10, 0.9);
//   optimizer.SetLearningRateSchedule(schedule);
//
// A schedule holds no state and writes nothing to a checkpoint; what the
// optimizer saves with one is described at Optimizer::SetLearningRateSchedule.

#include <cstdint>
#include <vector>

namespace eager {

class LearningRateSchedule {
 public:
  virtual ~LearningRateSchedule() = default;
  // The learning rate for a step taken after `step` completed steps.
  virtual float operator()(int64_t step) const = 0;
};

// initial_learning_rate * decay_rate ^ (step / decay_steps), the exponent
// floored when `staircase`. Throws InvalidArgumentError for decay_steps <= 0.
class ExponentialDecay final : public LearningRateSchedule {
 public:
  ExponentialDecay(double initial_learning_rate, int64_t decay_steps, double decay_rate,
                   bool staircase = false);
  float operator()(int64_t step) const override;

  double initial_learning_rate() const { return initial_learning_rate_; }
  int64_t decay_steps() const { return decay_steps_; }
  double decay_rate() const { return decay_rate_; }
  bool staircase() const { return staircase_; }

 private:
  double initial_learning_rate_;
  int64_t decay_steps_;
  double decay_rate_;
  bool staircase_;
};

// values[0] while step <= boundaries[0], values[i] while boundaries[i-1] <
// step <= boundaries[i], the last value after the last boundary. Throws
// InvalidArgumentError unless values has one more element than boundaries.
class PiecewiseConstantDecay final : public LearningRateSchedule {
 public:
  PiecewiseConstantDecay(std::vector<int64_t> boundaries, std::vector<double> values);
  float operator()(int64_t step) const override;

  const std::vector<int64_t>& boundaries() const { return boundaries_; }
  const std::vector<double>& values() const { return values_; }

 private:
  std::vector<int64_t> boundaries_;
  std::vector<double> values_;
};

// Cosine decay without warmup (Loshchilov and Hutter, SGDR):
//   initial_learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * s / decay_steps)) + alpha),
// s = min(step, decay_steps). Throws InvalidArgumentError for decay_steps <= 0.
class CosineDecay final : public LearningRateSchedule {
 public:
  CosineDecay(double initial_learning_rate, int64_t decay_steps, double alpha = 0.0);
  float operator()(int64_t step) const override;

  double initial_learning_rate() const { return initial_learning_rate_; }
  int64_t decay_steps() const { return decay_steps_; }
  double alpha() const { return alpha_; }

 private:
  double initial_learning_rate_;
  int64_t decay_steps_;
  double alpha_;
};

}  // namespace eager
