// Every CRC-32C kernel this machine has (crc32c.h's Kernel) against the
// standard vectors, a bit-at-a-time reference written from the definition
// (FORMAT.md 1.2), and the table kernel, on every length and alignment that
// exercises the fold kernel's edges (its 256-byte minimum, its 64-byte blocks,
// the instruction-run tail) and on inputs of several MiB.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "saving/bundle/crc32c.h"

namespace eager::internal::crc32c {
namespace {

// The definition, one bit at a time: reflected polynomial 0x82F63B78,
// initial value and final XOR 0xFFFFFFFF. Shares no code with crc32c.cc.
uint32_t BitwiseReference(uint32_t crc, const uint8_t* p, size_t n) {
  uint32_t c = ~crc;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int bit = 0; bit < 8; ++bit) c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1u)));
  }
  return ~c;
}

std::vector<Kernel> AvailableKernels() {
  std::vector<Kernel> kernels;
  for (Kernel k : {Kernel::kTable, Kernel::kCrc32Instruction, Kernel::kCarrylessMultiply}) {
    if (HasKernel(k)) kernels.push_back(k);
  }
  return kernels;
}

std::string Name(Kernel k) {
  switch (k) {
    case Kernel::kTable:
      return "table";
    case Kernel::kCrc32Instruction:
      return "crc32 instruction";
    case Kernel::kCarrylessMultiply:
      return "carry-less multiply";
  }
  return "?";
}

std::vector<uint8_t> RandomBytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> data(n);
  for (uint8_t& b : data) b = static_cast<uint8_t>(rng());
  return data;
}

TEST(Crc32cKernelsTest, BitwiseReferenceGivesTheStandardVectors) {
  const std::string digits = "123456789";
  EXPECT_EQ(BitwiseReference(0, reinterpret_cast<const uint8_t*>(digits.data()), 9), 0xE3069283u);
  const std::vector<uint8_t> zeros(32, 0), ones(32, 0xff);
  EXPECT_EQ(BitwiseReference(0, zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(BitwiseReference(0, ones.data(), 32), 0x62A8AB43u);
}

TEST(Crc32cKernelsTest, FastestKernelIsWhatTheCpuHas) {
  EXPECT_TRUE(HasKernel(Kernel::kTable));
  EXPECT_TRUE(HasKernel(FastestKernel()));
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool fold = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                    __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("pclmul") &&
                    __builtin_cpu_supports("sse4.2");
  EXPECT_EQ(HasKernel(Kernel::kCarrylessMultiply), fold);
  EXPECT_EQ(HasKernel(Kernel::kCrc32Instruction), __builtin_cpu_supports("sse4.2") != 0);
  EXPECT_EQ(FastestKernel(),
            fold ? Kernel::kCarrylessMultiply
                 : (__builtin_cpu_supports("sse4.2") ? Kernel::kCrc32Instruction : Kernel::kTable));
#endif
}

TEST(Crc32cKernelsTest, EveryKernelGivesTheStandardVectors) {
  std::string up, down;
  for (int b = 0; b < 32; ++b) up.push_back(static_cast<char>(b));
  for (int b = 31; b >= 0; --b) down.push_back(static_cast<char>(b));
  for (Kernel k : AvailableKernels()) {
    SCOPED_TRACE(Name(k));
    EXPECT_EQ(ExtendWith(k, 0, "123456789", 9), 0xE3069283u);
    EXPECT_EQ(ExtendWith(k, 0, std::string(32, '\0').data(), 32), 0x8A9136AAu);
    EXPECT_EQ(ExtendWith(k, 0, std::string(32, '\xff').data(), 32), 0x62A8AB43u);
    EXPECT_EQ(ExtendWith(k, 0, up.data(), 32), 0x46DD794Eu);
    EXPECT_EQ(ExtendWith(k, 0, down.data(), 32), 0x113FDB5Cu);
    EXPECT_EQ(ExtendWith(k, 0, "", 0), 0u);
    EXPECT_EQ(ExtendWith(k, 0x12345678u, nullptr, 0), 0x12345678u);
  }
}

// Every length from 0 to 1100 (below, at and across the fold's 256-byte
// minimum and 64-byte steps, with every tail) at every start offset within
// a cache line, from a nonzero running CRC.
TEST(Crc32cKernelsTest, EveryKernelMatchesTheTableOnEveryShortLengthAndAlignment) {
  const std::vector<uint8_t> data = RandomBytes(1100 + 64, 1);
  for (Kernel k : AvailableKernels()) {
    for (size_t start = 0; start < 64; ++start) {
      for (size_t n = 0; n <= 1100; ++n) {
        const uint32_t init = static_cast<uint32_t>(n * 2654435761u + start);
        ASSERT_EQ(ExtendWith(k, init, data.data() + start, n),
                  ExtendPortable(init, data.data() + start, n))
            << Name(k) << ", start " << start << ", length " << n;
      }
    }
  }
}

TEST(Crc32cKernelsTest, EveryKernelMatchesTheBitwiseReferenceOnLongInputs) {
  const std::vector<uint8_t> data = RandomBytes((2 << 20) + 64, 2);
  for (size_t start : {0, 1, 13, 63}) {
    for (size_t n : {size_t{4095}, size_t{4096}, size_t{12288}, size_t{65536 + 17},
                     size_t{(1 << 20) + 255}, size_t{2 << 20}}) {
      const uint32_t expected = BitwiseReference(0xdeadbeefu, data.data() + start, n);
      for (Kernel k : AvailableKernels()) {
        ASSERT_EQ(ExtendWith(k, 0xdeadbeefu, data.data() + start, n), expected)
            << Name(k) << ", start " << start << ", length " << n;
      }
    }
  }
}

// Degenerate contents: all zeros (the folded state must carry the initial
// CRC alone) and all ones.
TEST(Crc32cKernelsTest, EveryKernelMatchesTheReferenceOnConstantBytes) {
  for (uint8_t fill : {uint8_t{0}, uint8_t{0xff}}) {
    const std::vector<uint8_t> data(100000, fill);
    for (Kernel k : AvailableKernels()) {
      for (uint32_t init : {0u, 0xffffffffu, 0x80000001u}) {
        ASSERT_EQ(ExtendWith(k, init, data.data(), data.size()),
                  BitwiseReference(init, data.data(), data.size()))
            << Name(k) << ", fill " << int{fill} << ", init " << init;
      }
    }
  }
}

// Extending piece by piece, cut anywhere, gives the CRC of the whole.
TEST(Crc32cKernelsTest, EveryKernelExtendsAcrossArbitraryCuts) {
  const std::vector<uint8_t> data = RandomBytes(200000, 3);
  const uint32_t whole = ExtendPortable(0, data.data(), data.size());
  std::mt19937 rng(4);
  for (Kernel k : AvailableKernels()) {
    for (int round = 0; round < 20; ++round) {
      uint32_t crc = 0;
      for (size_t done = 0; done < data.size();) {
        const size_t n = std::min<size_t>(data.size() - done, rng() % 5000);
        crc = ExtendWith(k, crc, data.data() + done, n);
        done += n;
      }
      ASSERT_EQ(crc, whole) << Name(k) << ", round " << round;
    }
  }
}

TEST(Crc32cKernelsTest, ExtendUsesTheFastestKernel) {
  const std::vector<uint8_t> data = RandomBytes(70000, 5);
  EXPECT_EQ(Extend(7, data.data(), data.size()),
            ExtendWith(FastestKernel(), 7, data.data(), data.size()));
  EXPECT_EQ(Extend(7, data.data(), data.size()), ExtendPortable(7, data.data(), data.size()));
}

// Combine joins the CRCs of two parts into the CRC of the whole: at every
// cut of a buffer (empty parts included) and for a long second part.
TEST(Crc32cCombineTest, JoinsTheCrcsOfTwoPartsAtAnyCut) {
  const std::vector<uint8_t> data = RandomBytes(3000, 6);
  const uint32_t whole = ExtendPortable(0, data.data(), data.size());
  for (size_t cut = 0; cut <= data.size(); ++cut) {
    const uint32_t a = ExtendPortable(0, data.data(), cut);
    const uint32_t b = ExtendPortable(0, data.data() + cut, data.size() - cut);
    ASSERT_EQ(Combine(a, b, data.size() - cut), whole) << "cut " << cut;
  }
  const std::vector<uint8_t> big = RandomBytes((10 << 20) + 3, 7);
  const size_t cut = (5 << 20) + 1;
  EXPECT_EQ(
      Combine(Value(big.data(), cut), Value(big.data() + cut, big.size() - cut), big.size() - cut),
      Value(big.data(), big.size()));
  const uint32_t shift = CombineShift(big.size() - cut);
  EXPECT_EQ(
      CombineWithShift(Value(big.data(), cut), Value(big.data() + cut, big.size() - cut), shift),
      Value(big.data(), big.size()));
  EXPECT_EQ(Combine(0x12345678u, 0, 0), 0x12345678u);  // an empty second part changes nothing
  EXPECT_EQ(Combine(0, 0xe3069283u, 9), 0xe3069283u);  // nor an empty first part
}

}  // namespace
}  // namespace eager::internal::crc32c
