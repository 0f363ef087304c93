#include "runtime/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace eager {
namespace {

// Reference encodings from IEEE 754 binary16's definition (1 sign, 5 exponent
// bits with bias 15, 10 mantissa bits).
TEST(HalfTest, KnownValuesEncodeAsIeeeBinary16) {
  EXPECT_EQ(Half(0.0f).bits, 0x0000);
  EXPECT_EQ(Half(-0.0f).bits, 0x8000);
  EXPECT_EQ(Half(1.0f).bits, 0x3c00);
  EXPECT_EQ(Half(-2.0f).bits, 0xc000);
  EXPECT_EQ(Half(0.5f).bits, 0x3800);
  EXPECT_EQ(Half(65504.0f).bits, 0x7bff);               // the largest half
  EXPECT_EQ(Half(std::ldexp(1.0f, -14)).bits, 0x0400);  // the smallest normal
  EXPECT_EQ(Half(std::ldexp(1.0f, -24)).bits, 0x0001);  // the smallest subnormal
  EXPECT_EQ(Half(0.1f).bits, 0x2e66);                   // 0.0999755859375
  EXPECT_EQ(Half(1.0f / 3).bits, 0x3555);
  EXPECT_EQ(Half(std::numeric_limits<float>::infinity()).bits, 0x7c00);
  EXPECT_EQ(Half(-std::numeric_limits<float>::infinity()).bits, 0xfc00);
  EXPECT_TRUE(std::isnan(float(Half(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(HalfTest, RoundsToNearestEvenIncludingOverflowAndUnderflow) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties go to the even 1.
  EXPECT_EQ(Half(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00);
  // 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 (odd) and 1 + 2^-9: up.
  EXPECT_EQ(Half(1.0f + 3 * std::ldexp(1.0f, -11)).bits, 0x3c02);
  EXPECT_EQ(Half(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)).bits, 0x3c01);
  // 65520 is halfway between 65504 and 65536 (not representable): to infinity.
  EXPECT_EQ(Half(65519.0f).bits, 0x7bff);
  EXPECT_EQ(Half(65520.0f).bits, 0x7c00);
  EXPECT_EQ(Half(1e6f).bits, 0x7c00);
  // 2^-25 is halfway between 0 and the smallest subnormal: to the even 0.
  EXPECT_EQ(Half(std::ldexp(1.0f, -25)).bits, 0x0000);
  EXPECT_EQ(Half(std::ldexp(1.5f, -25)).bits, 0x0001);
  EXPECT_EQ(Half(-std::ldexp(1.0f, -30)).bits, 0x8000);
  // 3 * 2^-25 is halfway between subnormals 1 and 2 units: to the even 2.
  EXPECT_EQ(Half(3 * std::ldexp(1.0f, -25)).bits, 0x0002);
  // Just below the smallest normal rounds up into it.
  EXPECT_EQ(Half(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -26)).bits, 0x0400);
}

// Every one of the 65536 halves: to float and back is the identity (NaNs stay
// NaN), and the float value matches binary16's formula computed in double.
TEST(HalfTest, EveryHalfRoundTripsThroughFloatExactly) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const Half h = Half::FromBits(static_cast<uint16_t>(b));
    const float f = float(h);
    const uint32_t exponent = (b >> 10) & 0x1f, mantissa = b & 0x3ff;
    const double sign = (b & 0x8000) ? -1.0 : 1.0;
    if (exponent == 0x1f) {
      EXPECT_TRUE(mantissa == 0 ? std::isinf(f) : std::isnan(f)) << b;
      if (mantissa != 0) continue;
    } else {
      const double expected = exponent == 0
                                  ? sign * std::ldexp(static_cast<double>(mantissa), -24)
                                  : sign * std::ldexp(1.0 + mantissa / 1024.0, exponent - 15);
      ASSERT_EQ(static_cast<double>(f), expected) << "bits " << b;
    }
    ASSERT_EQ(Half(f).bits, b) << "bits " << b;
  }
}

TEST(BFloat16Test, IsTheUpperHalfOfTheFloatRoundedToNearestEven) {
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(BFloat16(-2.0f).bits, 0xc000);
  EXPECT_EQ(BFloat16(0.1f).bits, 0x3dcd);  // 0x3dcccccd rounds up
  EXPECT_EQ(float(BFloat16(0.1f)), 0.10009765625f);
  EXPECT_EQ(float(BFloat16(1.0f / 3)), 0.333984375f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even.
  EXPECT_EQ(BFloat16(1.0f + std::ldexp(1.0f, -8)).bits, 0x3f80);
  EXPECT_EQ(BFloat16(1.0f + 3 * std::ldexp(1.0f, -8)).bits, 0x3f82);
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::max()).bits, 0x7f80);  // rounds to inf
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::infinity()).bits, 0x7f80);
  EXPECT_TRUE(std::isnan(float(BFloat16(std::numeric_limits<float>::quiet_NaN()))));
  // A NaN whose payload sits only in the low bits must not become infinity.
  EXPECT_TRUE(std::isnan(float(BFloat16(std::bit_cast<float>(0x7f800001u)))));
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const BFloat16 x = BFloat16::FromBits(static_cast<uint16_t>(b));
    if (std::isnan(float(x))) continue;
    ASSERT_EQ(BFloat16(float(x)).bits, b) << b;
  }
}

TEST(HalfTest, EqualityIsIeee) {
  EXPECT_EQ(Half(0.0f), Half(-0.0f));
  const Half nan(std::numeric_limits<float>::quiet_NaN());
  EXPECT_FALSE(nan == nan);
  EXPECT_FALSE(Half(1.0f) == Half(2.0f));
}

}  // namespace
}  // namespace eager
