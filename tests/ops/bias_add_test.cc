#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ops/nn_ops.h"

namespace eager {
namespace {

TEST(BiasAddTest, AddsTheBiasAlongTheLastAxis) {
  const Tensor value = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const Tensor bias = Tensor::FromVector<float>({10, 20, 30}, Shape{3});
  const Tensor y = BiasAdd(value, bias);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  const Tensor rank3 = BiasAdd(Tensor::FromVector<int64_t>({1, 2, 3, 4}, Shape{2, 1, 2}),
                               Tensor::FromVector<int64_t>({100, 200}, Shape{2}));
  EXPECT_EQ(rank3.ToVector<int64_t>(), (std::vector<int64_t>{101, 202, 103, 204}));
}

TEST(BiasAddTest, RejectsABiasThatIsNotTheLastDimension) {
  const Tensor value = Tensor::Zeros(Shape{2, 3});
  try {
    BiasAdd(value, Tensor::Zeros(Shape{2}));
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("got value [2,3] and bias [2]"));
  }
  EXPECT_THROW(BiasAdd(Tensor::Zeros(Shape{3}), Tensor::Zeros(Shape{3})), InvalidArgumentError);
  EXPECT_THROW(BiasAdd(value, Tensor::Zeros(Shape{3}, DType::kFloat64)), InvalidArgumentError);
}

}  // namespace
}  // namespace eager
