// Tensors of the storage dtypes (float16, bfloat16, complex, small and
// unsigned ints): construction, typed access, bytes and printing.

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <vector>

#include "runtime/tensor.h"

namespace eager {
namespace {

TEST(StorageDTypesTest, TensorsHoldAndReturnTheirElements) {
  const Tensor h = Tensor::FromVector<Half>({Half(1.5f), Half(-2.0f)}, Shape{2});
  EXPECT_EQ(h.dtype(), DType::kHalf);
  EXPECT_EQ(float(h.at<Half>({1})), -2.0f);
  EXPECT_THROW((void)h.data<BFloat16>(), InvalidArgumentError);
  const Tensor c = Tensor::Scalar(std::complex<double>(1, -2));
  EXPECT_EQ(c.dtype(), DType::kComplex128);
  EXPECT_EQ(c.scalar<std::complex<double>>(), std::complex<double>(1, -2));
  const Tensor u = Tensor::Vector<uint64_t>({std::numeric_limits<uint64_t>::max(), 0});
  EXPECT_EQ(u.dtype(), DType::kUInt64);
  EXPECT_EQ(u.data<uint64_t>()[0], std::numeric_limits<uint64_t>::max());
}

TEST(StorageDTypesTest, BytesAreTheLittleEndianElementsTensorFlowStores) {
  // 1.0 in binary16 is 0x3c00; complex64 (1, 2) is float 1 then float 2.
  const Tensor h = Tensor::Scalar(Half(1.0f));
  ASSERT_EQ(h.bytes().size(), 2u);
  EXPECT_EQ(static_cast<uint8_t>(h.bytes()[0]), 0x00);
  EXPECT_EQ(static_cast<uint8_t>(h.bytes()[1]), 0x3c);
  const Tensor c = Tensor::Scalar(std::complex<float>(1, 2));
  ASSERT_EQ(c.bytes().size(), 8u);
  EXPECT_EQ(static_cast<uint8_t>(c.bytes()[3]), 0x3f);  // 1.0f = 0x3f800000
  EXPECT_EQ(static_cast<uint8_t>(c.bytes()[7]), 0x40);  // 2.0f = 0x40000000
  const Tensor i = Tensor::Scalar<int16_t>(-2);
  EXPECT_EQ(static_cast<uint8_t>(i.bytes()[0]), 0xfe);
  EXPECT_EQ(static_cast<uint8_t>(i.bytes()[1]), 0xff);
}

TEST(StorageDTypesTest, ZerosOfEveryStorageDType) {
  for (DType d :
       {DType::kHalf, DType::kBFloat16, DType::kComplex64, DType::kComplex128, DType::kInt8,
        DType::kInt16, DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64}) {
    const Tensor z = Tensor::Zeros(Shape{3}, d);
    EXPECT_EQ(z.dtype(), d);
    EXPECT_EQ(z.bytes().size(), 3 * DTypeSize(d));
    for (std::byte b : z.bytes()) EXPECT_EQ(b, std::byte{0}) << d;
  }
}

// Expected texts are numpy's (which tf.Tensor prints): np.float16 as its
// shortest round-trip decimal, bfloat16 as ml_dtypes' "%g", complex as
// Python's complex repr.
TEST(StorageDTypesTest, PrintsAsNumpyPrintsThem) {
  EXPECT_EQ(Tensor::Vector<Half>({Half(0.1f), Half(65504.0f), Half(1.0f / 3), Half(-2.0f)})
                .ValuesString(),
            "[0.1, 65500.0, 0.3333, -2.0]");
  EXPECT_EQ(Tensor::Scalar(Half(std::ldexp(1.0f, -24))).ValuesString(), "6e-08");
  EXPECT_EQ(Tensor::Scalar(Half(std::numeric_limits<float>::infinity())).ValuesString(), "inf");
  EXPECT_EQ(
      Tensor::Vector<BFloat16>({BFloat16(1.0f / 3), BFloat16(1.0f), BFloat16(0.1f)}).ValuesString(),
      "[0.333984, 1, 0.100098]");
  EXPECT_EQ(Tensor::Vector<std::complex<float>>({{1, 2}, {0.5f, -0.25f}, {0, 3}}).ValuesString(),
            "[(1+2j), (0.5-0.25j), 3j]");
  EXPECT_EQ(Tensor::Vector<int8_t>({-128, 127}).ValuesString(), "[-128, 127]");
  EXPECT_EQ(Tensor::Vector<uint8_t>({0, 255}).ValuesString(), "[0, 255]");
  EXPECT_EQ(Tensor::Scalar(std::numeric_limits<uint64_t>::max()).ValuesString(),
            "18446744073709551615");
  EXPECT_EQ(Tensor::Vector<uint16_t>({7}).DebugString(),
            "tf.Tensor([7], shape=(1,), dtype=uint16)");
  EXPECT_EQ(Tensor::Scalar(Half(1.0f)).DebugString(), "tf.Tensor(1.0, shape=(), dtype=float16)");
}

}  // namespace
}  // namespace eager
