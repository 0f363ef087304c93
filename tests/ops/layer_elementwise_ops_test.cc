// The elementwise ops of TF 2.21's graphs of common layers (issue 39): Abs,
// Sign, Relu6, LeakyRelu, the comparisons and logical ops, FloorDiv and
// FloorMod (TF's semantics for negative operands), AddN. Values by hand;
// tests/tf_graphs/layer_ops_test.py compares them with TF itself.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "ops/binary_ops.h"
#include "ops/unary_ops.h"

namespace eager {
namespace {

using ::testing::HasSubstr;

TEST(LayerElementwiseOpsTest, AbsSignRelu6LeakyRelu) {
  const Tensor x = Tensor::Vector<float>({-7.0f, -0.5f, 0.0f, 2.0f, 6.0f, 8.0f});
  EXPECT_EQ(Abs(x).ToVector<float>(), (std::vector<float>{7, 0.5f, 0, 2, 6, 8}));
  EXPECT_EQ(Sign(x).ToVector<float>(), (std::vector<float>{-1, -1, 0, 1, 1, 1}));
  EXPECT_EQ(Sign(Tensor::Vector<int32_t>({-3, 0, 9})).ToVector<int32_t>(),
            (std::vector<int32_t>{-1, 0, 1}));
  EXPECT_EQ(Relu6(x).ToVector<float>(), (std::vector<float>{0, 0, 0, 2, 6, 6}));
  EXPECT_EQ(LeakyRelu(x, 0.5).ToVector<float>(), (std::vector<float>{-3.5f, -0.25f, 0, 2, 6, 8}));
  // TF's default alpha is the float 0.2.
  EXPECT_EQ(LeakyRelu(Tensor::Vector<float>({-1.0f})).ToVector<float>()[0], -0.2f);
  const Tensor g = Tensor::Vector<float>({1, 1, 1, 1, 1, 1});
  EXPECT_EQ(Relu6Grad(g, x).ToVector<float>(), (std::vector<float>{0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(LeakyReluGrad(g, x, 0.5).ToVector<float>(),
            (std::vector<float>{0.5f, 0.5f, 0.5f, 1, 1, 1}));
}

TEST(LayerElementwiseOpsTest, ComparisonsAndLogicalOpsBroadcast) {
  const Tensor x = Tensor::FromVector<int32_t>({1, 2, 3, 4}, Shape{2, 2});
  const Tensor y = Tensor::Vector<int32_t>({2, 3});
  EXPECT_EQ(Greater(x, y).ToVector<bool>(), (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(Less(x, y).ToVector<bool>(), (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(LessEqual(x, y).ToVector<bool>(), (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(NotEqual(x, Tensor(3)).ToVector<bool>(), (std::vector<bool>{true, true, false, true}));
  const Tensor p = Tensor::Vector<bool>({true, true, false, false});
  const Tensor q = Tensor::Vector<bool>({true, false, true, false});
  EXPECT_EQ(LogicalAnd(p, q).ToVector<bool>(), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(LogicalOr(p, q).ToVector<bool>(), (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(LogicalNot(p).ToVector<bool>(), (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(Greater(x, y).dtype(), DType::kBool);
}

TEST(LayerElementwiseOpsTest, LogicalOpsRefuseNonBoolNamingTheDtype) {
  const Tensor f = Tensor::Vector<float>({1.0f});
  try {
    LogicalAnd(f, f);
    FAIL() << "LogicalAnd of floats";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("LogicalAnd: x has dtype float32"));
    EXPECT_THAT(e.what(), HasSubstr("expected bool"));
  }
  EXPECT_THROW(LogicalNot(f), InvalidArgumentError);
  EXPECT_THROW(Greater(Tensor::Vector<bool>({true}), Tensor::Vector<bool>({true})),
               InvalidArgumentError);
}

// Python's // and %: the quotient rounds toward -infinity, the remainder
// takes the divisor's sign.
TEST(LayerElementwiseOpsTest, FloorDivAndFloorModRoundTowardMinusInfinity) {
  const Tensor x = Tensor::Vector<int32_t>({7, -7, 7, -7, 0, 6});
  const Tensor y = Tensor::Vector<int32_t>({2, 2, -2, -2, 3, -3});
  EXPECT_EQ(FloorDiv(x, y).ToVector<int32_t>(), (std::vector<int32_t>{3, -4, -4, 3, 0, -2}));
  EXPECT_EQ(FloorMod(x, y).ToVector<int32_t>(), (std::vector<int32_t>{1, 1, -1, -1, 0, 0}));
  const Tensor xf = Tensor::Vector<double>({7.5, -7.5, 7.5, -7.5});
  const Tensor yf = Tensor::Vector<double>({2.0, 2.0, -2.0, -2.0});
  EXPECT_EQ(FloorDiv(xf, yf).ToVector<double>(), (std::vector<double>{3, -4, -4, 3}));
  EXPECT_EQ(FloorMod(xf, yf).ToVector<double>(), (std::vector<double>{1.5, 0.5, -0.5, -1.5}));
  // The most negative integer over -1 wraps as TF's kernel does, without UB.
  const int64_t min = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(FloorDiv(Tensor::Vector<int64_t>({min}), Tensor::Vector<int64_t>({-1}))
                .ToVector<int64_t>()[0],
            min);
  EXPECT_EQ(FloorMod(Tensor::Vector<int64_t>({min}), Tensor::Vector<int64_t>({-1}))
                .ToVector<int64_t>()[0],
            0);
}

TEST(LayerElementwiseOpsTest, IntegerFloorDivisionByZeroNamesTheOp) {
  const Tensor x = Tensor::Vector<int32_t>({1, 2});
  const Tensor zero = Tensor::Vector<int32_t>({1, 0});
  EXPECT_THROW(
      {
        try {
          FloorDiv(x, zero);
        } catch (const InvalidArgumentError& e) {
          EXPECT_THAT(e.what(), HasSubstr("FloorDiv: Integer division by zero"));
          throw;
        }
      },
      InvalidArgumentError);
  EXPECT_THROW(FloorMod(x, zero), InvalidArgumentError);
}

TEST(LayerElementwiseOpsTest, AddNSumsInTfsOrder) {
  std::vector<Tensor> inputs;
  inputs.reserve(11);
  for (int i = 0; i < 11; ++i) inputs.push_back(Tensor::Vector<float>({1.0f * i, 1e8f}));
  // Element 1: 1e8 summed 11 times; float rounding makes the grouping visible:
  // first 3 left to right, then the group of 8 summed and added.
  float first = 1e8f;
  for (int i = 1; i < 3; ++i) first += 1e8f;
  float group = 1e8f;
  for (int i = 1; i < 8; ++i) group += 1e8f;
  const std::vector<float> sum = AddN(inputs).ToVector<float>();
  EXPECT_EQ(sum[0], 55.0f);
  EXPECT_EQ(sum[1], first + group);
  EXPECT_EQ(AddN({inputs[3]}).ToVector<float>()[0], 3.0f);
  try {
    AddN({inputs[0], Tensor::Vector<float>({1.0f})});
    FAIL() << "AddN of shapes [2] and [1]";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("inputs[1] [1]"));
  }
}

}  // namespace
}  // namespace eager
