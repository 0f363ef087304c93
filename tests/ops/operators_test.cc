#include "ops/operators.h"

#include <gtest/gtest.h>

#include <vector>

#include "ops/internal/scalar_like.h"

namespace eager {
namespace {

TEST(OperatorsTest, ArithmeticOnTensors) {
  Tensor a = Tensor::Vector<float>({6, 8});
  Tensor b = Tensor::Vector<float>({2, 4});
  EXPECT_EQ((a + b).ToVector<float>(), (std::vector<float>{8, 12}));
  EXPECT_EQ((a - b).ToVector<float>(), (std::vector<float>{4, 4}));
  EXPECT_EQ((a * b).ToVector<float>(), (std::vector<float>{12, 32}));
  EXPECT_EQ((a / b).ToVector<float>(), (std::vector<float>{3, 2}));
  EXPECT_EQ((-a).ToVector<float>(), (std::vector<float>{-6, -8}));
}

TEST(OperatorsTest, ScalarOperandsKeepTheTensorDtype) {
  Tensor d = Tensor::Vector<double>({1, 2});
  Tensor x2 = d * 2;
  EXPECT_EQ(x2.dtype(), DType::kFloat64);
  EXPECT_EQ(x2.ToVector<double>(), (std::vector<double>{2, 4}));
  EXPECT_EQ((1.0 - d).ToVector<double>(), (std::vector<double>{0, -1}));
  Tensor i = Tensor::Vector<int32_t>({7, 9});
  EXPECT_EQ((i + 1).dtype(), DType::kInt32);
  EXPECT_EQ((i / 2).ToVector<int32_t>(), (std::vector<int32_t>{3, 4}));
  Tensor f = Tensor::Vector<float>({1});
  EXPECT_EQ((f * 0.5).dtype(), DType::kFloat32);
  EXPECT_EQ((10 / Tensor::Vector<float>({4})).ToVector<float>(), (std::vector<float>{2.5f}));
}

TEST(OperatorsTest, VariableOperandsUseTheCurrentValue) {
  Variable v(Tensor::Vector<float>({1, 2}), "operators_test_v");
  Tensor t = Tensor::Vector<float>({10, 20});
  EXPECT_EQ((v + t).ToVector<float>(), (std::vector<float>{11, 22}));
  EXPECT_EQ((t - v).ToVector<float>(), (std::vector<float>{9, 18}));
  EXPECT_EQ((v * v).ToVector<float>(), (std::vector<float>{1, 4}));
  EXPECT_EQ((v / 2).ToVector<float>(), (std::vector<float>{0.5f, 1}));
  EXPECT_EQ((3 * v).ToVector<float>(), (std::vector<float>{3, 6}));
  EXPECT_EQ((-v).ToVector<float>(), (std::vector<float>{-1, -2}));
  v.Assign(Tensor::Vector<float>({5, 5}));
  EXPECT_EQ((v + t).ToVector<float>(), (std::vector<float>{15, 25}));
}

TEST(OperatorsTest, ScalarLikeRejectsNonNumericDtypes) {
  EXPECT_EQ(internal::ScalarLike(2.9, DType::kInt64).scalar<int64_t>(), 2);
  EXPECT_THROW(internal::ScalarLike(1.0, DType::kBool), InvalidArgumentError);
  EXPECT_THROW(Tensor(true) + 1, InvalidArgumentError);
}

}  // namespace
}  // namespace eager
