#include "ops/random_generator.h"

#include <cmath>
#include <numbers>
#include <sstream>

#include "ops/internal/dispatch.h"
#include "runtime/tensor_access.h"

namespace eager {

double RandomGenerator::NextDouble() {
  // The top 53 bits of one draw, scaled: exactly representable, in [0, 1).
  return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
}

std::string RandomGenerator::State() const {
  std::ostringstream out;
  out << engine_;
  return out.str();
}

void RandomGenerator::SetState(const std::string& state) {
  std::istringstream in(state);
  std::mt19937_64 engine;
  in >> engine;
  EAGER_CHECK(!in.fail(), "RandomGenerator::SetState: not a generator state (", state.size(),
              " bytes)");
  engine_ = engine;
}

uint64_t RandomGenerator::NextBelow(uint64_t n) {
  EAGER_CHECK(n > 0, "RandomGenerator::NextBelow: n must be > 0, got ", n);
  // Rejection keeps every residue equally likely (plain % would favour small ones).
  const uint64_t limit =
      std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % n;
  uint64_t draw;
  do {
    draw = engine_();
  } while (draw >= limit);
  return draw % n;
}

Tensor RandomGenerator::Normal(const Shape& shape, double mean, double stddev, DType dtype) {
  Tensor out = internal::NewTensor(shape, dtype);
  VisitFloatDType(dtype, "RandomGenerator::Normal", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = internal::MutableData<T>(out);
    const int64_t n = out.num_elements();
    // Box-Muller: two uniforms give two independent standard normals. u1 is
    // taken in (0, 1] so that log(u1) is finite.
    for (int64_t i = 0; i < n; i += 2) {
      const double u1 = 1.0 - NextDouble();
      const double u2 = NextDouble();
      const double r = std::sqrt(-2.0 * std::log(u1));
      const double theta = 2.0 * std::numbers::pi * u2;
      o[i] = static_cast<T>(mean + stddev * r * std::cos(theta));
      if (i + 1 < n) o[i + 1] = static_cast<T>(mean + stddev * r * std::sin(theta));
    }
  });
  return out;
}

Tensor RandomGenerator::Uniform(const Shape& shape, double minval, double maxval, DType dtype) {
  EAGER_CHECK(minval < maxval, "RandomGenerator::Uniform: minval (", minval,
              ") must be less than maxval (", maxval, ") for shape ", shape);
  Tensor out = internal::NewTensor(shape, dtype);
  VisitFloatDType(dtype, "RandomGenerator::Uniform", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = internal::MutableData<T>(out);
    for (int64_t i = 0; i < out.num_elements(); ++i) {
      T v = static_cast<T>(minval + (maxval - minval) * NextDouble());
      // Rounding to float32 can land on maxval; keep the interval half-open.
      if (v >= static_cast<T>(maxval))
        v = std::nextafter(static_cast<T>(maxval), static_cast<T>(minval));
      o[i] = v;
    }
  });
  return out;
}

Tensor RandomNormal(const Shape& shape, uint64_t seed, double mean, double stddev, DType dtype) {
  return RandomGenerator(seed).Normal(shape, mean, stddev, dtype);
}

Tensor RandomUniform(const Shape& shape, uint64_t seed, double minval, double maxval, DType dtype) {
  return RandomGenerator(seed).Uniform(shape, minval, maxval, dtype);
}

}  // namespace eager
