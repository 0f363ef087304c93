#include "runtime/tensor.h"

#include <gtest/gtest.h>

#include <memory>
#include <type_traits>

#include "runtime/tensor_access.h"
#include "runtime/variable.h"

namespace eager {
namespace {

TEST(TensorTest, DefaultIsFloatScalarZero) {
  Tensor t;
  EXPECT_EQ(t.dtype(), DType::kFloat32);
  EXPECT_EQ(t.rank(), 0);
  EXPECT_EQ(t.scalar<float>(), 0.0f);
}

TEST(TensorTest, ScalarConstructorsTakeTheDTypeOfTheCppValue) {
  EXPECT_EQ(Tensor(1.5f).dtype(), DType::kFloat32);
  EXPECT_EQ(Tensor(1.5).dtype(), DType::kFloat64);
  EXPECT_EQ(Tensor(3).dtype(), DType::kInt32);
  EXPECT_EQ(Tensor(int64_t{3}).dtype(), DType::kInt64);
  EXPECT_EQ(Tensor(true).dtype(), DType::kBool);
  EXPECT_EQ(Tensor(std::string("ab")).scalar<std::string>(), "ab");
}

// Only bool itself becomes a bool scalar: a pointer (a Variable*, a string
// literal) or nullptr used to convert silently through bool.
static_assert(std::is_convertible_v<bool, Tensor>);
static_assert(!std::is_convertible_v<Variable*, Tensor>);
static_assert(!std::is_constructible_v<Tensor, const Variable*>);
static_assert(!std::is_convertible_v<const char*, Tensor>);  // Tensor(std::string) is explicit
static_assert(!std::is_convertible_v<std::nullptr_t, Tensor>);
// No public way to build a Tensor around a buffer: writing goes through
// runtime/tensor_access.h.
static_assert(!std::is_constructible_v<Tensor, std::shared_ptr<const internal::Buffer>, Shape,
                                       DType, TensorId>);

TEST(TensorTest, BoolScalarHoldsItsValue) {
  const bool value = true;
  Tensor t = value;
  EXPECT_EQ(t.dtype(), DType::kBool);
  EXPECT_EQ(t.scalar<bool>(), true);
  EXPECT_EQ(Tensor(false).scalar<bool>(), false);
}

TEST(TensorTest, MatrixIsRowMajor) {
  Tensor m = Tensor::Matrix<float>({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(m.shape(), (Shape{2, 3}));
  EXPECT_EQ(m.ToVector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(m.at<float>({1, 0}), 4.0f);
  EXPECT_THROW(m.at<float>({2, 0}), OutOfRangeError);
  EXPECT_THROW(m.at<float>({1}), InvalidArgumentError);
}

TEST(TensorTest, RaggedMatrixIsRejected) {
  EXPECT_THROW(Tensor::Matrix<float>({{1, 2}, {3}}), InvalidArgumentError);
}

TEST(TensorTest, FromVectorChecksElementCount) {
  try {
    Tensor::FromVector<int32_t>({1, 2, 3}, Shape{2, 2});
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("[2,2]"), std::string::npos) << e.what();
  }
}

TEST(TensorTest, TypedAccessChecksDType) {
  Tensor t = Tensor::Vector<double>({1, 2});
  EXPECT_THROW(t.data<float>(), InvalidArgumentError);
  EXPECT_EQ(t.data<double>()[1], 2.0);
}

TEST(TensorTest, CopiesShareBufferAndIdentity) {
  Tensor a = Tensor::Vector<float>({1, 2, 3});
  Tensor b = a;  // NOLINT(performance-unnecessary-copy-initialization): the copy is under test
  EXPECT_EQ(a.id(), b.id());
  EXPECT_EQ(a.data<float>().data(), b.data<float>().data());
  Tensor c = Tensor::Vector<float>({1, 2, 3});
  EXPECT_NE(a.id(), c.id());
}

TEST(TensorTest, ZerosOfEveryDType) {
  EXPECT_EQ(Tensor::Zeros(Shape{2}, DType::kInt64).ToVector<int64_t>(),
            (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(Tensor::Zeros(Shape{1}, DType::kBool).data<bool>()[0], false);
  EXPECT_EQ(Tensor::Zeros(Shape{2}, DType::kString).data<std::string>()[1], "");
  // Large enough to live on the heap, not inline.
  Tensor big = Tensor::Zeros(Shape{1000}, DType::kFloat64);
  for (double x : big.data<double>()) ASSERT_EQ(x, 0.0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(internal::RawData(big)) % 64, 0u);
}

TEST(TensorTest, BytesAreTheRawElements) {
  Tensor t(1.0f);
  auto bytes = t.bytes();
  ASSERT_EQ(bytes.size(), 4u);
  // 1.0f little-endian is 00 00 80 3F (FORMAT.md 1.2 worked example).
  EXPECT_EQ(static_cast<int>(bytes[2]), 0x80);
  EXPECT_EQ(static_cast<int>(bytes[3]), 0x3F);
  EXPECT_THROW(Tensor(std::string("x")).bytes(), InvalidArgumentError);
}

TEST(TensorTest, PrintsShortestRoundTripFloatsLikeTensorFlow) {
  Tensor t = Tensor::Vector<float>({10.0f, 0.10989987f});
  EXPECT_EQ(t.ValuesString(), "[10.0, 0.10989987]");
  EXPECT_EQ(t.DebugString(), "tf.Tensor([10.0, 0.10989987], shape=(2,), dtype=float32)");
  EXPECT_EQ(Tensor::Matrix<int32_t>({{1, 2}, {3, 4}}).DebugString(),
            "tf.Tensor([[1, 2], [3, 4]], shape=(2, 2), dtype=int32)");
  EXPECT_EQ(Tensor(3.0).ValuesString(), "3.0");
  EXPECT_EQ(Tensor(true).ValuesString(), "True");
}

TEST(TensorTest, DebugStringTruncatesLongTensors) {
  Tensor t = Tensor::Zeros(Shape{100}, DType::kInt32);
  EXPECT_NE(t.DebugString(3).find("..."), std::string::npos);
}

TEST(TensorTest, WithShapeSharesElementsUnderANewId) {
  Tensor a = Tensor::Vector<float>({1, 2, 3, 4});
  Tensor b = internal::WithShape(a, Shape{2, 2});
  EXPECT_EQ(b.shape(), (Shape{2, 2}));
  EXPECT_NE(a.id(), b.id());
  EXPECT_EQ(a.data<float>().data(), b.data<float>().data());
  EXPECT_THROW(internal::WithShape(a, Shape{3}), InvalidArgumentError);
}

}  // namespace
}  // namespace eager
