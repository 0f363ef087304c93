// Cast to and from the storage dtypes (float16, bfloat16, complex, small and
// unsigned ints), against values worked out by hand from each format.

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include "ops/array_ops.h"

namespace eager {
namespace {

TEST(CastStorageDTypesTest, Float32ToFloat16RoundsToNearestEvenAndBack) {
  const Tensor x = Tensor::Vector<float>({0.1f, 65504.0f, 70000.0f, -1.0f});
  const Tensor h = Cast(x, DType::kHalf);
  ASSERT_EQ(h.dtype(), DType::kHalf);
  const auto bits = h.data<Half>();
  EXPECT_EQ(bits[0].bits, 0x2e66);
  EXPECT_EQ(bits[1].bits, 0x7bff);
  EXPECT_EQ(bits[2].bits, 0x7c00);  // beyond the range: inf
  EXPECT_EQ(bits[3].bits, 0xbc00);
  const auto back = Cast(h, DType::kFloat32).ToVector<float>();
  EXPECT_EQ(back[0], 0.0999755859375f);
  EXPECT_EQ(back[1], 65504.0f);
  EXPECT_TRUE(std::isinf(back[2]));
}

TEST(CastStorageDTypesTest, BFloat16ThroughFloat32) {
  const Tensor b = Cast(Tensor::Vector<float>({0.1f, 3.0f}), DType::kBFloat16);
  EXPECT_EQ(b.data<BFloat16>()[0].bits, 0x3dcd);
  EXPECT_EQ(Cast(b, DType::kFloat64).ToVector<double>(), (std::vector<double>{0.10009765625, 3}));
  // Half -> bfloat16 goes through float32: 1/3 in half, then rounded to 8 bits.
  const Tensor hb = Cast(Tensor::Scalar(Half(1.0f / 3)), DType::kBFloat16);
  EXPECT_EQ(float(hb.scalar<BFloat16>()), 0.333984375f);
}

TEST(CastStorageDTypesTest, ComplexKeepsTheRealPartAndRealGetsZeroImaginary) {
  const Tensor c = Tensor::Vector<std::complex<float>>({{1.5f, -2}, {-3, 4}});
  EXPECT_EQ(Cast(c, DType::kFloat32).ToVector<float>(), (std::vector<float>{1.5f, -3}));
  EXPECT_EQ(Cast(c, DType::kComplex128).ToVector<std::complex<double>>(),
            (std::vector<std::complex<double>>{{1.5, -2}, {-3, 4}}));
  EXPECT_EQ(Cast(Tensor::Vector<int32_t>({7}), DType::kComplex64).ToVector<std::complex<float>>(),
            (std::vector<std::complex<float>>{{7, 0}}));
}

TEST(CastStorageDTypesTest, IntegersConvertAsCppDoes) {
  EXPECT_EQ(Cast(Tensor::Vector<int32_t>({-1, 300}), DType::kUInt8).ToVector<uint8_t>(),
            (std::vector<uint8_t>{255, 44}));  // modulo 2^8, as TF's Cast
  EXPECT_EQ(Cast(Tensor::Vector<uint16_t>({65535}), DType::kInt64).ToVector<int64_t>(),
            (std::vector<int64_t>{65535}));
  EXPECT_EQ(Cast(Tensor::Vector<int8_t>({-5, 0}), DType::kBool).ToVector<bool>(),
            (std::vector<bool>{true, false}));
  EXPECT_EQ(Cast(Tensor::Vector<float>({2.9f}), DType::kUInt32).ToVector<uint32_t>(),
            (std::vector<uint32_t>{2}));
}

TEST(CastStorageDTypesTest, StringsAreStillRejected) {
  EXPECT_THROW(Cast(Tensor(std::string("a")), DType::kHalf), InvalidArgumentError);
  EXPECT_THROW(Cast(Tensor::Scalar(Half(1.0f)), DType::kString), InvalidArgumentError);
}

}  // namespace
}  // namespace eager
