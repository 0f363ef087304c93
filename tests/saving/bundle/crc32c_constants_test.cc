// The constants the CRC-32C kernels derive at compile time from
// crc32c_poly.h (the slicing and chain-join tables of crc32c_tables.h, the
// folding constants of crc32c_fold.h, Combine's shift) against computations
// that share no code with it: the CRC's bit-at-a-time step from its
// definition, and polynomial arithmetic in the plain (unreflected) bit order
// with P(x) = x^32 + 0x1EDC6F41 (FORMAT.md 1.2).

#include <gtest/gtest.h>

#include <cstdint>

#include "saving/bundle/crc32c.h"
#include "saving/bundle/internal/crc32c_fold.h"
#include "saving/bundle/internal/crc32c_tables.h"

namespace eager::internal::crc32c {
namespace {

// The raw CRC state `state` extended by `zero_bytes` zero bytes, one bit at a
// time: the definition's step, the message bits all zero.
uint32_t ExtendRawByZeros(uint32_t state, size_t zero_bytes) {
  for (size_t i = 0; i < 8 * zero_bytes; ++i)
    state = (state >> 1) ^ (0x82f63b78u & (0u - (state & 1u)));
  return state;
}

// x^e mod P with bit d holding the coefficient of x^d (the plain order).
uint32_t PlainXPowModP(uint64_t e) {
  uint64_t r = 1;
  for (uint64_t i = 0; i < e; ++i) {
    r <<= 1;
    if (r >> 32) r ^= 0x11edc6f41u;
  }
  return static_cast<uint32_t>(r);
}

// The plain order to the reflected one the kernels keep (bit d to bit 31 - d).
uint32_t Reflect(uint32_t v) {
  uint32_t r = 0;
  for (int d = 0; d < 32; ++d) r |= ((v >> d) & 1u) << (31 - d);
  return r;
}

TEST(Crc32cConstantsTest, PlainReferenceGivesTheKnownPowers) {
  EXPECT_EQ(PlainXPowModP(31), 0x80000000u);
  EXPECT_EQ(PlainXPowModP(32), 0x1edc6f41u);  // x^32 = P - x^32
  EXPECT_EQ(Reflect(PlainXPowModP(32)), 0x82f63b78u);
  EXPECT_EQ(ExtendRawByZeros(0x80000000u, 4), Reflect(PlainXPowModP(32)));
}

// Slicing-by-8: entry [k][b] is the raw state after byte b and k zero bytes.
TEST(Crc32cConstantsTest, SlicingTablesAreByteThenZerosBitByBit) {
  for (size_t k = 0; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      ASSERT_EQ(kSlicingTables[k][b], ExtendRawByZeros(b, k + 1))
          << "table " << k << ", byte " << b;
    }
  }
}

// The three-chain join: entry [k][b] is a state holding only byte k = b,
// advanced over kChainStride zero bytes.
TEST(Crc32cConstantsTest, ChainShiftTablesAdvanceByTheStrideBitByBit) {
  ASSERT_EQ(kChainStride, 4096u);
  for (int k = 0; k < 4; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      ASSERT_EQ(kChainShiftTables[static_cast<size_t>(k)][b],
                ExtendRawByZeros(b << (8 * k), kChainStride))
          << "table " << k << ", byte " << b;
    }
  }
  EXPECT_EQ(ShiftByChainStride(0x12345678u), ExtendRawByZeros(0x12345678u, kChainStride));
}

// Each folding constant is x^(e - 1) mod P for e = 64 + distance (low) and
// e = distance (high), reflected, in the top half of a 64-bit operand.
TEST(Crc32cConstantsTest, FoldConstantsArePowersOfXInThePlainOrder) {
  const struct {
    FoldConstants k;
    int bits;
  } cases[] = {
      {kFold2048, 2048}, {kFold512, 512}, {kFold384, 384}, {kFold256, 256}, {kFold128, 128}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.bits);
    EXPECT_EQ(c.k.low, uint64_t{Reflect(PlainXPowModP(64 + c.bits - 1))} << 32);
    EXPECT_EQ(c.k.high, uint64_t{Reflect(PlainXPowModP(c.bits - 1))} << 32);
  }
}

// Combine's shift for B of n bytes is x^(8n) mod P.
TEST(Crc32cConstantsTest, CombineShiftIsAPowerOfXInThePlainOrder) {
  for (uint64_t n : {0u, 1u, 2u, 3u, 7u, 8u, 100u, 4096u, 65537u}) {
    EXPECT_EQ(CombineShift(n), Reflect(PlainXPowModP(8 * n))) << n << " bytes";
  }
}

}  // namespace
}  // namespace eager::internal::crc32c
