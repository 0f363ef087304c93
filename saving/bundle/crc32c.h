#pragma once

// CRC-32C (Castagnoli), as TensorFlow and LevelDB compute and store it
// (FORMAT.md 1.2): reflected polynomial 0x82F63B78, initial value and final
// XOR 0xFFFFFFFF. The kernel is picked once at run time, the fastest this
// CPU has (Kernel below): a carry-less-multiply fold on AVX-512 VPCLMULQDQ
// for inputs of 256 bytes and more (the tail by the crc32 instruction);
// else the SSE4.2 crc32 instruction (inputs of 12 KiB and more run three
// interleaved chains, ~3x one chain's speed); else a slicing-by-8 table.
// Every kernel gives the same result for every input (crc32c_test). For
// saving's bundle and summary files; not installed (cmake/package.cmake): not user API.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace eager::internal::crc32c {

// The CRC of data[0, n) appended to a byte string whose CRC is `crc`:
// Extend(Value(A), B) == Value(A || B), and Value(x) == Extend(0, x).
uint32_t Extend(uint32_t crc, const void* data, size_t n);

inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }
inline uint32_t Value(std::string_view s) { return Extend(0, s.data(), s.size()); }

// Value(A || B) from crc_a = Value(A), crc_b = Value(B) and B's length, without
// the bytes (zlib's crc32_combine): lets parts of one buffer be checksummed
// apart, on different threads, and joined. About 2,000 bit operations per
// call, whatever len_b.
uint32_t Combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);
// The same in two steps, for joining many parts of one length: compute
// shift = CombineShift(len_b) once, then each join is 32 bit steps.
uint32_t CombineShift(uint64_t len_b);
uint32_t CombineWithShift(uint32_t crc_a, uint32_t crc_b, uint32_t shift);

// The implementations Extend chooses from, slowest first.
enum class Kernel {
  kTable,              // slicing-by-8, any CPU
  kCrc32Instruction,   // SSE4.2 crc32, three interleaved chains
  kCarrylessMultiply,  // VPCLMULQDQ folding (internal/crc32c_fold.h) + crc32
};
// Whether this machine runs `kernel`.
bool HasKernel(Kernel kernel);
// The kernel Extend uses: the last one HasKernel accepts.
Kernel FastestKernel();
// As Extend, with the given kernel (for tests and benchmarks).
// REQUIRES: HasKernel(kernel).
uint32_t ExtendWith(Kernel kernel, uint32_t crc, const void* data, size_t n);

// As Extend, forcing the portable table implementation (for tests).
uint32_t ExtendPortable(uint32_t crc, const void* data, size_t n);
// Whether Extend uses a hardware instruction on this machine.
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
