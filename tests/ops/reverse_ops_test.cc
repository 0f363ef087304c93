// ReverseV2 (ops/reverse_ops.h) against hand-reversed values; bad axes are
// errors naming them. The gradient is checked by op_gradient_test.cc, the
// graph form by graph_all_ops_test.cc, TF's values by the Keras
// go_backwards RNNs of tests/tf_graphs/saved_model_tf2_test.py.

#include "ops/reverse_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace eager {
namespace {

using ::testing::HasSubstr;

TEST(ReverseOpsTest, ReversesTheGivenAxesOnly) {
  const Tensor x = Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(Reverse(x, {1}).ToVector<int32_t>(), (std::vector<int32_t>{3, 2, 1, 6, 5, 4}));
  EXPECT_EQ(Reverse(x, {0}).ToVector<int32_t>(), (std::vector<int32_t>{4, 5, 6, 1, 2, 3}));
  EXPECT_EQ(Reverse(x, {-1, 0}).ToVector<int32_t>(), (std::vector<int32_t>{6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(Reverse(x, {}).ToVector<int32_t>(), x.ToVector<int32_t>());
  EXPECT_EQ(Reverse(x, {1}).shape(), (Shape{2, 3}));
}

// Keras' go_backwards: the time axis (1) of [batch, time, features].
TEST(ReverseOpsTest, ReversesTheMiddleAxisOfASequenceBatch) {
  const Tensor x =
      Tensor::FromVector<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, Shape{2, 3, 2});
  EXPECT_EQ(Reverse(x, {1}).ToVector<float>(),
            (std::vector<float>{4, 5, 2, 3, 0, 1, 10, 11, 8, 9, 6, 7}));
  const Tensor words = Tensor::FromVector<std::string>({"a", "b", "c"}, Shape{3});
  EXPECT_EQ(Reverse(words, {0}).ToVector<std::string>(), (std::vector<std::string>{"c", "b", "a"}));
  const Tensor empty = Tensor::Zeros(Shape{0, 3});
  EXPECT_EQ(Reverse(empty, {1}).shape(), (Shape{0, 3}));
}

TEST(ReverseOpsTest, BadAxesAreErrorsNamingThem) {
  const Tensor x = Tensor::Zeros(Shape{2, 3});
  try {
    Reverse(x, {2});
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("is out of valid range [-2, 1]"));
  }
  try {
    Reverse(x, {1, -1});
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("axis 1 specified more than once"));
  }
}

}  // namespace
}  // namespace eager
