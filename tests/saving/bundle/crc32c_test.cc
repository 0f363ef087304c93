#include "saving/bundle/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace eager::internal::crc32c {
namespace {

std::string Bytes(int from, int to) {  // from..to inclusive, either direction
  std::string s;
  for (int b = from;; b += from < to ? 1 : -1) {
    s.push_back(static_cast<char>(b));
    if (b == to) break;
  }
  return s;
}

// FORMAT.md 1.2 (the iSCSI / RFC 3720 vectors).
TEST(Crc32cTest, StandardVectors) {
  EXPECT_EQ(Value("123456789"), 0xE3069283u);
  EXPECT_EQ(Value(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Value(std::string(32, '\xff')), 0x62A8AB43u);
  EXPECT_EQ(Value(Bytes(0, 31)), 0x46DD794Eu);
  EXPECT_EQ(Value(Bytes(31, 0)), 0x113FDB5Cu);
  EXPECT_EQ(Value(""), 0u);
}

TEST(Crc32cTest, PortableTableGivesTheSameVectors) {
  EXPECT_EQ(ExtendPortable(0, "123456789", 9), 0xE3069283u);
  const std::string zeros(32, '\0');
  EXPECT_EQ(ExtendPortable(0, zeros.data(), zeros.size()), 0x8A9136AAu);
  const std::string up = Bytes(0, 31);
  EXPECT_EQ(ExtendPortable(0, up.data(), up.size()), 0x46DD794Eu);
}

TEST(Crc32cTest, ExtendIsTheCrcOfTheConcatenation) {
  const std::string a = "hello, ", b = "world";
  EXPECT_EQ(Extend(Value(a), b.data(), b.size()), Value(a + b));
}

// The hardware path must agree with the table for every length and every
// alignment of the start (it handles unaligned heads and tails itself).
TEST(Crc32cTest, HardwareAndTableAgreeOnAllAlignmentsAndLengths) {
  std::mt19937 rng(7);
  std::vector<char> data(4096 + 64);
  for (char& c : data) c = static_cast<char>(rng());
  for (size_t start = 0; start < 16; ++start) {
    for (size_t n : {0, 1, 7, 8, 9, 31, 32, 33, 63, 100, 1000, 4096}) {
      ASSERT_EQ(Extend(0x12345678u, data.data() + start, n),
                ExtendPortable(0x12345678u, data.data() + start, n))
          << "start " << start << " length " << n;
    }
  }
}

// Inputs of three 4 KiB stretches and more run as three interleaved chains
// joined by a shift table: every length around the round size, any start.
TEST(Crc32cTest, InterleavedChainsAgreeWithTheTable) {
  std::mt19937 rng(11);
  std::vector<char> data(5 * 12288 + 64);
  for (char& c : data) c = static_cast<char>(rng());
  for (size_t start : {0, 1, 5, 8}) {
    for (size_t n : {12287, 12288, 12289, 12295, 12296, 12320, 24575, 24576, 24583, 36864 + 100,
                     5 * 12288 + 7}) {
      ASSERT_EQ(Extend(0x9abcdef0u, data.data() + start, n),
                ExtendPortable(0x9abcdef0u, data.data() + start, n))
          << "start " << start << " length " << n;
    }
  }
  const std::string zeros(1 << 16, '\0');
  EXPECT_EQ(Value(zeros), ExtendPortable(0, zeros.data(), zeros.size()));
}

TEST(Crc32cTest, UsesTheSse42InstructionWhenTheCpuHasIt) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  EXPECT_EQ(HasHardwareSupport(), __builtin_cpu_supports("sse4.2") != 0);
#else
  EXPECT_FALSE(HasHardwareSupport());
#endif
}

// FORMAT.md 1.2 worked example: TF stored 81 A5 DA 2B for the float 1.0.
TEST(Crc32cTest, MaskMatchesTheValueTensorFlowStoredForOnePointZero) {
  const char one[4] = {0x00, 0x00, static_cast<char>(0x80), 0x3F};
  EXPECT_EQ(Value(one, 4), 0xDD54C4ABu);
  EXPECT_EQ(Mask(0xDD54C4ABu), 0x2BDAA581u);
  EXPECT_EQ(Unmask(0x2BDAA581u), 0xDD54C4ABu);
  EXPECT_EQ(Mask(0), 0xA282EAD8u);  // the stored CRC of an empty tensor
}

TEST(Crc32cTest, UnmaskInvertsMask) {
  std::mt19937 rng(3);
  for (int i = 0; i < 1000; ++i) {
    const uint32_t crc = rng();
    ASSERT_EQ(Unmask(Mask(crc)), crc);
  }
}

}  // namespace
}  // namespace eager::internal::crc32c
