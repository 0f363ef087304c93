// DynamicStitch / ParallelDynamicStitch (ops/index_ops.h): hand-computed
// merges, TF's duplicate rule (last wins) and zero rows, the refused inputs,
// graph mode, and the gradient by central differences.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ops/index_ops.h"
#include "ops/random_generator.h"
#include "tests/testing/numeric_gradient.h"

namespace eager {
namespace {

using ::testing::HasSubstr;

Tensor Ints(std::vector<int32_t> v, const Shape& shape) {
  return Tensor::FromVector<int32_t>(std::move(v), shape);
}

TEST(DynamicStitchTest, InterleavesRowsByIndex) {
  // tf.dynamic_stitch's documented example, with rows of 2.
  const Tensor merged =
      DynamicStitch({Tensor(6), Ints({4, 1}, Shape{2}), Ints({5, 2, 0, 3}, Shape{2, 2})},
                    {Tensor::FromVector<float>({61, 62}, Shape{2}),
                     Tensor::FromVector<float>({41, 42, 11, 12}, Shape{2, 2}),
                     Tensor::FromVector<float>({51, 52, 21, 22, 1, 2, 31, 32}, Shape{2, 2, 2})});
  EXPECT_EQ(merged.shape(), (Shape{7, 2}));
  EXPECT_EQ(merged.ToVector<float>(),
            (std::vector<float>{1, 2, 11, 12, 21, 22, 31, 32, 41, 42, 51, 52, 61, 62}));
}

TEST(DynamicStitchTest, LastWriteOfARepeatedIndexWinsAndGapsAreZero) {
  const Tensor merged = DynamicStitch({Ints({0, 1}, Shape{2}), Ints({1, 4}, Shape{2})},
                                      {Tensor::FromVector<int64_t>({7, 8}, Shape{2}),
                                       Tensor::FromVector<int64_t>({9, 10}, Shape{2})});
  EXPECT_EQ(merged.ToVector<int64_t>(), (std::vector<int64_t>{7, 9, 0, 0, 10}));
  const Tensor parallel =
      ParallelDynamicStitch({Ints({2, 0}, Shape{2})}, {Tensor::Vector<std::string>({"b", "a"})});
  EXPECT_EQ(parallel.ToVector<std::string>(), (std::vector<std::string>{"a", "", "b"}));
}

TEST(DynamicStitchTest, EmptyIndicesGiveNoRows) {
  const Tensor merged =
      DynamicStitch({Ints({}, Shape{0})}, {Tensor::FromVector<float>({}, Shape{0, 3})});
  EXPECT_EQ(merged.shape(), (Shape{0, 3}));
}

void ExpectRefused(const std::vector<Tensor>& indices, const std::vector<Tensor>& data,
                   const std::string& what) {
  try {
    DynamicStitch(indices, data);
    ADD_FAILURE() << "accepted; expected " << what;
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr(what));
    EXPECT_THAT(e.what(), HasSubstr("DynamicStitch"));
  }
}

TEST(DynamicStitchTest, BadInputsAreInvalidArgumentNamingTheTensor) {
  const Tensor f3 = Tensor::FromVector<float>({1, 2, 3}, Shape{3});
  ExpectRefused({Ints({0, -1}, Shape{2})}, {Tensor::FromVector<float>({1, 2}, Shape{2})},
                "indices[0][1] = -1 is out of range");
  ExpectRefused({Ints({0, 1}, Shape{2})}, {f3},
                "data[0].shape = [3] does not start with "
                "indices[0].shape = [2]");
  ExpectRefused({Ints({0, 1}, Shape{2}), Ints({2}, Shape{1})},
                {Tensor::FromVector<float>({1, 2, 3, 4}, Shape{2, 2}),
                 Tensor::FromVector<float>({1, 2, 3}, Shape{1, 3})},
                "Need data[0].shape[1:] = data[1].shape[1:]");
  ExpectRefused(
      {Ints({0}, Shape{1}), Ints({1}, Shape{1})},
      {Tensor::FromVector<float>({1}, Shape{1}), Tensor::FromVector<int32_t>({1}, Shape{1})},
      "data[1] is int32 but data[0] is float32");
  ExpectRefused({Tensor::FromVector<int64_t>({0}, Shape{1})},
                {Tensor::FromVector<float>({1}, Shape{1})}, "indices[0] must be int32");
  EXPECT_THROW(DynamicStitch({Ints({0}, Shape{1})}, {}), InvalidArgumentError);
}

TEST(DynamicStitchTest, GradientMatchesCentralDifferences) {
  // No repeated index: TF's gradient (gathers) is then the exact one.
  const std::vector<Tensor> inputs = {Ints({3, 0}, Shape{2}), Ints({1, 4, 2}, Shape{3}),
                                      RandomUniform(Shape{2, 3}, 5, -2.0, 2.0, DType::kFloat64),
                                      RandomUniform(Shape{3, 3}, 6, -2.0, 2.0, DType::kFloat64)};
  for (const OpDef* op : {&kDynamicStitchOp, &kParallelDynamicStitchOp}) {
    const testing::GradientCheck check =
        testing::CheckGradient(*op, inputs, Attrs{{"N", int64_t{2}}});
    EXPECT_LE(check.max_error, 1e-8) << op->type << ": " << check.worst;
    EXPECT_EQ(check.without_gradient, (std::vector<int>{0, 1})) << op->type;
  }
}

}  // namespace
}  // namespace eager
