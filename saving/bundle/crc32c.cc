#include "saving/bundle/crc32c.h"

#include <cstdlib>
#include <cstring>

#include "saving/bundle/internal/crc32c_fold.h"
#include "saving/bundle/internal/crc32c_poly.h"
#include "saving/bundle/internal/crc32c_tables.h"

namespace eager::internal::crc32c {
namespace {

uint64_t LoadLE64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));  // little-endian hosts only (tensor.h)
  return v;
}

uint32_t ExtendTable(uint32_t crc, const uint8_t* p, size_t n) {
  const auto& t = kSlicingTables;
  uint32_t c = crc ^ 0xffffffffu;
  for (; n >= 8; n -= 8, p += 8) {
    const uint64_t v = LoadLE64(p) ^ c;
    c = t[7][v & 0xff] ^ t[6][(v >> 8) & 0xff] ^ t[5][(v >> 16) & 0xff] ^ t[4][(v >> 24) & 0xff] ^
        t[3][(v >> 32) & 0xff] ^ t[2][(v >> 40) & 0xff] ^ t[1][(v >> 48) & 0xff] ^ t[0][v >> 56];
  }
  for (; n > 0; --n, ++p) c = t[0][(c ^ *p) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

#if defined(__x86_64__)
// The crc32 instruction has a latency of 3 cycles and a throughput of one per
// cycle, so one dependent chain runs at a third of the instruction's speed.
// Long inputs are therefore cut into rounds of three consecutive stretches of
// kChainStride bytes, checksummed as three independent chains, and joined: the
// raw (unconditioned) CRC state is linear over GF(2), so the state after
// A || B is (state after A) * x^(8|B|) ^ (state of B started from 0), and
// ShiftByChainStride (crc32c_tables.h) multiplies by x^(8 * kChainStride).
//
// Compiled for SSE4.2 regardless of -march, and only called after the CPU
// said it has the instruction.
__attribute__((target("sse4.2"))) uint32_t ExtendInstruction(uint32_t crc, const uint8_t* p,
                                                             size_t n) {
  uint64_t c = crc ^ 0xffffffffu;
  for (; n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0; --n, ++p) {
    c = __builtin_ia32_crc32qi(static_cast<uint32_t>(c), *p);
  }
  if (n >= 3 * kChainStride) {
    for (; n >= 3 * kChainStride; n -= 3 * kChainStride, p += 3 * kChainStride) {
      uint64_t c1 = 0, c2 = 0;
      for (size_t i = 0; i < kChainStride; i += 8) {
        c = __builtin_ia32_crc32di(c, LoadLE64(p + i));
        c1 = __builtin_ia32_crc32di(c1, LoadLE64(p + kChainStride + i));
        c2 = __builtin_ia32_crc32di(c2, LoadLE64(p + 2 * kChainStride + i));
      }
      c = ShiftByChainStride(ShiftByChainStride(static_cast<uint32_t>(c)) ^
                             static_cast<uint32_t>(c1)) ^
          static_cast<uint32_t>(c2);
    }
  }
  // Shorter inputs and the tail: one chain, four steps per iteration to keep
  // the loop overhead low (~8 bytes / 3 cycles).
  for (; n >= 32; n -= 32, p += 32) {
    c = __builtin_ia32_crc32di(c, LoadLE64(p));
    c = __builtin_ia32_crc32di(c, LoadLE64(p + 8));
    c = __builtin_ia32_crc32di(c, LoadLE64(p + 16));
    c = __builtin_ia32_crc32di(c, LoadLE64(p + 24));
  }
  for (; n >= 8; n -= 8, p += 8) c = __builtin_ia32_crc32di(c, LoadLE64(p));
  for (; n > 0; --n, ++p) c = __builtin_ia32_crc32qi(static_cast<uint32_t>(c), *p);
  return static_cast<uint32_t>(c) ^ 0xffffffffu;
}

bool HasInstruction() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}
#else
uint32_t ExtendInstruction(uint32_t crc, const uint8_t* p, size_t n) {
  return ExtendTable(crc, p, n);
}
bool HasInstruction() { return false; }
#endif

// The bulk (whole 64-byte blocks) by carry-less multiplication, the rest by
// the crc32 instruction. REQUIRES: HasCarrylessFold().
uint32_t ExtendCarryless(uint32_t crc, const uint8_t* p, size_t n) {
  const size_t bulk = FoldableBytes(n);
  if (bulk > 0) crc = FoldBlocks(crc ^ 0xffffffffu, p, bulk) ^ 0xffffffffu;
  return ExtendInstruction(crc, p + bulk, n - bulk);
}

Kernel DetectFastest() {
  if (HasCarrylessFold()) return Kernel::kCarrylessMultiply;
  if (HasInstruction()) return Kernel::kCrc32Instruction;
  return Kernel::kTable;
}

// A function-local static, so that callers in other files' static
// initializers still see the detected value.
Kernel Fastest() {
  static const Kernel fastest = DetectFastest();
  return fastest;
}

uint32_t Dispatch(Kernel kernel, uint32_t crc, const uint8_t* p, size_t n) {
  switch (kernel) {
    case Kernel::kCarrylessMultiply:
      return ExtendCarryless(crc, p, n);
    case Kernel::kCrc32Instruction:
      return ExtendInstruction(crc, p, n);
    case Kernel::kTable:
      return ExtendTable(crc, p, n);
  }
  std::abort();
}

}  // namespace

// Extend(c, B) is affine in c: Extend(c, B) = c * x^(8|B|) ^ Extend(0, B) (the
// two conditioning XORs cancel in the difference of two starting states).
uint32_t Combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b) {
  return CombineWithShift(crc_a, crc_b, CombineShift(len_b));
}

uint32_t CombineShift(uint64_t len_b) { return ZeroBytesMultiplier(len_b); }

uint32_t CombineWithShift(uint32_t crc_a, uint32_t crc_b, uint32_t shift) {
  return MultiplyModP(crc_a, shift) ^ crc_b;
}

uint32_t Extend(uint32_t crc, const void* data, size_t n) {
  return Dispatch(Fastest(), crc, static_cast<const uint8_t*>(data), n);
}

bool HasKernel(Kernel kernel) { return kernel <= Fastest(); }

Kernel FastestKernel() { return Fastest(); }

uint32_t ExtendWith(Kernel kernel, uint32_t crc, const void* data, size_t n) {
  if (!HasKernel(kernel)) std::abort();  // a wrong instruction would be SIGILL anyway
  return Dispatch(kernel, crc, static_cast<const uint8_t*>(data), n);
}

uint32_t ExtendPortable(uint32_t crc, const void* data, size_t n) {
  return ExtendTable(crc, static_cast<const uint8_t*>(data), n);
}

bool HasHardwareSupport() { return Fastest() != Kernel::kTable; }

}  // namespace eager::internal::crc32c
