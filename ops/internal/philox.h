#pragma once

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC 2011), the counter-based generator behind TensorFlow's random ops,
// with the state layout and float conversion TF's RandomUniform uses, so that
// a seeded graph gives TF's numbers. Private to ops/.
//
// State: a 128-bit counter (four 32-bit words, word 0 least significant) and
// a 64-bit key. TF seeds it from a node's (seed, seed2) attributes: key =
// seed, counter words 2-3 = seed2, words 0-1 = 0. Each Next() encrypts the
// counter with the key (10 rounds) into four 32-bit outputs and steps the
// counter by one.

#include <array>
#include <bit>
#include <cstdint>

namespace eager::internal {

class Philox4x32 {
 public:
  using Block = std::array<uint32_t, 4>;

  Philox4x32(uint64_t seed, uint64_t seed2)
      : counter_{0, 0, static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)},
        key_{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)} {}

  // Any state (the published known-answer tests start from such).
  Philox4x32(const Block& counter, const std::array<uint32_t, 2>& key)
      : counter_(counter), key_(key) {}

  // Four random words; advances the counter by one.
  Block Next() {
    Block x = counter_;
    std::array<uint32_t, 2> key = key_;
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        key[0] += kKeyStep0;
        key[1] += kKeyStep1;
      }
      const uint64_t p0 = uint64_t{kMultiplier0} * x[0];
      const uint64_t p1 = uint64_t{kMultiplier1} * x[2];
      x = {static_cast<uint32_t>(p1 >> 32) ^ x[1] ^ key[0], static_cast<uint32_t>(p1),
           static_cast<uint32_t>(p0 >> 32) ^ x[3] ^ key[1], static_cast<uint32_t>(p0)};
    }
    Skip(1);
    return x;
  }

  // Advances the 128-bit counter by `count` blocks.
  void Skip(uint64_t count) {
    uint64_t low = (uint64_t{counter_[1]} << 32) | counter_[0];
    const uint64_t sum = low + count;
    const bool carry = sum < low;
    low = sum;
    counter_[0] = static_cast<uint32_t>(low);
    counter_[1] = static_cast<uint32_t>(low >> 32);
    if (carry && ++counter_[2] == 0) ++counter_[3];
  }

 private:
  // The Philox4x32 constants: multipliers, and the key schedule's steps
  // (golden ratio and sqrt(3) - 1, as 32-bit fractions).
  static constexpr uint32_t kMultiplier0 = 0xD2511F53;
  static constexpr uint32_t kMultiplier1 = 0xCD9E8D57;
  static constexpr uint32_t kKeyStep0 = 0x9E3779B9;
  static constexpr uint32_t kKeyStep1 = 0xBB67AE85;

  Block counter_;
  std::array<uint32_t, 2> key_;
};

// A float in [0, 1) from the low 23 bits of `bits`: 1.mantissa - 1, so every
// value is a multiple of 2^-23 (TF's conversion).
inline float UniformFloat(uint32_t bits) {
  return std::bit_cast<float>((uint32_t{127} << 23) | (bits & 0x7fffffu)) - 1.0f;
}

// A double in [0, 1) from 52 bits: the low 20 of `high` and all of `low`.
inline double UniformDouble(uint32_t high, uint32_t low) {
  const uint64_t mantissa = (uint64_t{high & 0xfffffu} << 32) | low;
  return std::bit_cast<double>((uint64_t{1023} << 52) | mantissa) - 1.0;
}

}  // namespace eager::internal
