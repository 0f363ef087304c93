#include "autodiff/learning_rate_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "ops/fp_contract_off.h"
#include "runtime/errors.h"

namespace eager {

// Each operation in float32, in Keras's order (ops on float32 tensors, the
// Python floats converted to float32 where they meet one).

ExponentialDecay::ExponentialDecay(double initial_learning_rate, int64_t decay_steps,
                                   double decay_rate, bool staircase)
    : initial_learning_rate_(initial_learning_rate),
      decay_steps_(decay_steps),
      decay_rate_(decay_rate),
      staircase_(staircase) {
  EAGER_CHECK(decay_steps > 0, "ExponentialDecay: Argument `decay_steps` must be > 0, got ",
              decay_steps);
}

float ExponentialDecay::operator()(int64_t step) const {
  float p = static_cast<float>(step) / static_cast<float>(decay_steps_);
  if (staircase_) p = std::floor(p);
  return static_cast<float>(initial_learning_rate_) * std::pow(static_cast<float>(decay_rate_), p);
}

PiecewiseConstantDecay::PiecewiseConstantDecay(std::vector<int64_t> boundaries,
                                               std::vector<double> values)
    : boundaries_(std::move(boundaries)), values_(std::move(values)) {
  EAGER_CHECK(!boundaries_.empty() && boundaries_.size() + 1 == values_.size(),
              "PiecewiseConstantDecay: The length of boundaries should be 1 less than the "
              "length of values, and at least 1; got ",
              boundaries_.size(), " boundaries and ", values_.size(), " values");
}

float PiecewiseConstantDecay::operator()(int64_t step) const {
  // Keras sums indicator * value over the ranges: exactly one is 1.
  size_t i = 0;
  while (i < boundaries_.size() && step > boundaries_[i]) ++i;
  return static_cast<float>(values_[i]);
}

CosineDecay::CosineDecay(double initial_learning_rate, int64_t decay_steps, double alpha)
    : initial_learning_rate_(initial_learning_rate), decay_steps_(decay_steps), alpha_(alpha) {
  EAGER_CHECK(decay_steps > 0, "CosineDecay: Argument `decay_steps` must be > 0, got ",
              decay_steps);
}

float CosineDecay::operator()(int64_t step) const {
  const float decay_steps = static_cast<float>(decay_steps_);
  const float s = std::min(static_cast<float>(step), decay_steps);
  const float completed_fraction = s / decay_steps;
  const float pi = static_cast<float>(std::numbers::pi);
  const float cosine_decayed = 0.5f * (1.0f + std::cos(pi * completed_fraction));
  const float decayed =
      static_cast<float>(1.0 - alpha_) * cosine_decayed + static_cast<float>(alpha_);
  return static_cast<float>(initial_learning_rate_) * decayed;
}

}  // namespace eager
