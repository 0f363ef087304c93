#pragma once

// CRC-32C (Castagnoli), as TensorFlow and LevelDB compute and store it
// (FORMAT.md 1.2): reflected polynomial 0x82F63B78, initial value and final
// XOR 0xFFFFFFFF. Uses the SSE4.2 crc32 instruction when the CPU has it
// (detected once at run time; inputs of 12 KiB and more run three
// interleaved chains, ~3x one chain's speed) and a slicing-by-8 table
// otherwise.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace eager::internal::crc32c {

// The CRC of data[0, n) appended to a byte string whose CRC is `crc`:
// Extend(Value(A), B) == Value(A || B), and Value(x) == Extend(0, x).
uint32_t Extend(uint32_t crc, const void* data, size_t n);

inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }
inline uint32_t Value(std::string_view s) { return Extend(0, s.data(), s.size()); }

// As Extend, forcing the portable table implementation (for tests).
uint32_t ExtendPortable(uint32_t crc, const void* data, size_t n);
// Whether Extend uses the hardware instruction on this machine.
bool HasHardwareSupport();

// Every CRC stored in TF's files is masked, so that a CRC of data that itself
// contains CRCs stays well distributed (LevelDB's convention).
inline constexpr uint32_t kMaskDelta = 0xa282ead8u;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  const uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace eager::internal::crc32c
