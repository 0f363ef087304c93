#include "saving/internal/crc32c.h"

#include <array>
#include <cstdlib>
#include <cstring>

#include "saving/internal/crc32c_fold.h"

namespace eager::internal::crc32c {
namespace {

constexpr uint32_t kPolynomial = 0x82f63b78u;

// tables[k][b]: the CRC contribution of byte b followed by k zero bytes, so
// eight bytes fold in with eight lookups and no data dependency between them.
struct Tables {
  std::array<std::array<uint32_t, 256>, 8> t;
  constexpr Tables() : t{} {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t c = b;
      for (int i = 0; i < 8; ++i) c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
      t[0][b] = c;
    }
    for (int k = 1; k < 8; ++k) {
      for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
    }
  }
};
constexpr Tables kTables;

uint64_t LoadLE64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));  // little-endian hosts only (tensor.h)
  return v;
}

uint32_t ExtendTable(uint32_t crc, const uint8_t* p, size_t n) {
  const auto& t = kTables.t;
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
// kStride bytes, checksummed as three independent chains, and joined: the
// raw (unconditioned) CRC state is linear over GF(2), so the state after
// A || B is Shift(state after A) ^ (state of B started from 0), where Shift
// advances a state over kStride zero bytes, a linear map on 32 bits applied
// with four 256-entry tables.
constexpr size_t kStride = 4096;

__attribute__((target("sse4.2"))) uint32_t ShiftSlow(uint32_t state) {
  uint64_t c = state;
  for (size_t i = 0; i < kStride; i += 8) c = __builtin_ia32_crc32di(c, 0);
  return static_cast<uint32_t>(c);
}

struct ShiftTables {
  std::array<std::array<uint32_t, 256>, 4> t;
  ShiftTables() : t{} {
    uint32_t basis[32];
    for (int bit = 0; bit < 32; ++bit) basis[bit] = ShiftSlow(uint32_t{1} << bit);
    for (int k = 0; k < 4; ++k) {
      for (uint32_t b = 0; b < 256; ++b) {
        uint32_t v = 0;
        for (int bit = 0; bit < 8; ++bit) {
          if ((b >> bit) & 1) v ^= basis[8 * k + bit];
        }
        t[static_cast<size_t>(k)][b] = v;
      }
    }
  }
  uint32_t Shift(uint32_t c) const {
    return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
  }
};

const ShiftTables& GetShiftTables() {
  static const ShiftTables tables;
  return tables;
}

// Compiled for SSE4.2 regardless of -march, and only called after the CPU
// said it has the instruction.
__attribute__((target("sse4.2"))) uint32_t ExtendInstruction(uint32_t crc, const uint8_t* p,
                                                             size_t n) {
  uint64_t c = crc ^ 0xffffffffu;
  for (; n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0; --n, ++p) {
    c = __builtin_ia32_crc32qi(static_cast<uint32_t>(c), *p);
  }
  if (n >= 3 * kStride) {
    const ShiftTables& tables = GetShiftTables();
    for (; n >= 3 * kStride; n -= 3 * kStride, p += 3 * kStride) {
      uint64_t c1 = 0, c2 = 0;
      for (size_t i = 0; i < kStride; i += 8) {
        c = __builtin_ia32_crc32di(c, LoadLE64(p + i));
        c1 = __builtin_ia32_crc32di(c1, LoadLE64(p + kStride + i));
        c2 = __builtin_ia32_crc32di(c2, LoadLE64(p + 2 * kStride + i));
      }
      const uint32_t joined =
          tables.Shift(tables.Shift(static_cast<uint32_t>(c)) ^ static_cast<uint32_t>(c1)) ^
          static_cast<uint32_t>(c2);
      c = joined;
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

// Reflected CRC states are polynomials modulo P with bit 31 - d holding the
// coefficient of x^d. a * b mod P, one coefficient of a at a time.
uint32_t MultiplyModP(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (int d = 0; d < 32; ++d) {
    if (a & (0x80000000u >> d)) product ^= b;
    b = (b >> 1) ^ ((b & 1) ? kPolynomial : 0);  // b *= x
  }
  return product;
}

// x^(8 * bytes) mod P by repeated squaring.
uint32_t ShiftByBytes(uint64_t bytes) {
  uint32_t result = 0x80000000u;  // x^0
  uint32_t power = 0x00800000u;   // x^8
  for (; bytes != 0; bytes >>= 1) {
    if (bytes & 1) result = MultiplyModP(result, power);
    power = MultiplyModP(power, power);
  }
  return result;
}

}  // namespace

// Extend(c, B) is affine in c: Extend(c, B) = c * x^(8|B|) ^ Extend(0, B) (the
// two conditioning XORs cancel in the difference of two starting states).
uint32_t Combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b) {
  return CombineWithShift(crc_a, crc_b, CombineShift(len_b));
}

uint32_t CombineShift(uint64_t len_b) { return ShiftByBytes(len_b); }

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
