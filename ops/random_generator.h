#pragma once

// Seeded, reproducible random tensors (tf.random.Generator.from_seed).
//
// The same seed gives the same numbers on every platform and build: the
// generator is a fixed algorithm (std::mt19937_64, whose output the standard
// specifies) and the distributions are our own (the standard's are not
// portable). Not thread-safe; use one generator per thread.

#include <cstdint>
#include <random>
#include <string>

#include "runtime/tensor.h"

namespace eager {

class RandomGenerator {
 public:
  explicit RandomGenerator(uint64_t seed) : engine_(seed) {}

  // N(mean, stddev^2), float32 or float64.
  Tensor Normal(const Shape& shape, double mean = 0.0, double stddev = 1.0,
                DType dtype = DType::kFloat32);
  // Uniform in [minval, maxval), float32 or float64.
  Tensor Uniform(const Shape& shape, double minval = 0.0, double maxval = 1.0,
                 DType dtype = DType::kFloat32);
  // Uniform in [0, 1) with 53 random bits.
  double NextDouble();
  // Uniform integer in [0, n). REQUIRES: n > 0.
  uint64_t NextBelow(uint64_t n);

  // The engine's whole state as text (for checkpointing a data order), and
  // back. SetState throws InvalidArgumentError for text State() did not make.
  std::string State() const;
  void SetState(const std::string& state);

 private:
  std::mt19937_64 engine_;
};

// Shorthands with a one-off generator seeded by `seed`.
Tensor RandomNormal(const Shape& shape, uint64_t seed, double mean = 0.0, double stddev = 1.0,
                    DType dtype = DType::kFloat32);
Tensor RandomUniform(const Shape& shape, uint64_t seed, double minval = 0.0, double maxval = 1.0,
                     DType dtype = DType::kFloat32);

}  // namespace eager
