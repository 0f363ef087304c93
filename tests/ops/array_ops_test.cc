#include "ops/array_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ops/graph_ops.h"
#include "ops/session.h"
#include "runtime/errors.h"
#include "runtime/graph.h"

namespace eager {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

Tensor Iota(const Shape& shape) {
  std::vector<float> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return Tensor::FromVector<float>(v, shape);
}

template <typename E>
void ExpectThrowsWith(E&& expr, const std::vector<std::string>& parts) {
  try {
    expr();
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    for (const std::string& p : parts) EXPECT_THAT(e.what(), HasSubstr(p));
  }
}

TEST(ArrayOpsTest, ReshapeInfersMinusOneAndSharesTheBuffer) {
  Tensor x = Iota(Shape{2, 3});
  Tensor y = Reshape(x, {3, -1});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(y.data<float>().data(), x.data<float>().data());  // zero-copy
  EXPECT_NE(y.id(), x.id());
  EXPECT_EQ(Reshape(x, {-1}).shape(), Shape{6});
  ExpectThrowsWith([&] { Reshape(x, {4, -1}); }, {"Reshape", "6 values", "[2,3]", "[4,-1]"});
  ExpectThrowsWith([&] { Reshape(x, {5}); }, {"Reshape", "[2,3]", "[5]"});
  EXPECT_THROW(Reshape(x, {-1, -1}), InvalidArgumentError);
}

TEST(ArrayOpsTest, TransposeMatchesIndexPermutation) {
  Tensor x = Iota(Shape{2, 3, 4});
  Tensor y = Transpose(x, {2, 0, 1});
  ASSERT_EQ(y.shape(), (Shape{4, 2, 3}));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(y.at<float>({k, i, j}), x.at<float>({i, j, k}));
  Tensor m = Transpose(Iota(Shape{2, 3}));  // default reverses
  EXPECT_EQ(m.ToVector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  Tensor ints = Transpose(Tensor::Matrix<int32_t>({{1, 2}, {3, 4}}));
  EXPECT_EQ(ints.ToVector<int32_t>(), (std::vector<int32_t>{1, 3, 2, 4}));
  ExpectThrowsWith([&] { Transpose(x, {0, 0, 1}); }, {"Transpose", "[0,0,1]", "[2,3,4]"});
}

TEST(ArrayOpsTest, ConcatJoinsAlongAxis) {
  Tensor a = Tensor::Matrix<float>({{1, 2}, {3, 4}});
  Tensor b = Tensor::Matrix<float>({{5}, {6}});
  EXPECT_EQ(Concat({a, b}, 1).ToVector<float>(), (std::vector<float>{1, 2, 5, 3, 4, 6}));
  EXPECT_EQ(Concat({a, a}, 0).shape(), (Shape{4, 2}));
  EXPECT_EQ(Concat({a, b, b}, -1).shape(), (Shape{2, 4}));
  ExpectThrowsWith([&] { Concat({a, b}, 0); }, {"ConcatV2", "[2,1]", "[2,2]"});
  EXPECT_THROW(Concat({a, Tensor::Zeros(Shape{2, 2}, DType::kInt32)}, 0), InvalidArgumentError);
  EXPECT_THROW(Concat({}, 0), InvalidArgumentError);
}

TEST(ArrayOpsTest, SliceTakesSubBlocks) {
  Tensor x = Iota(Shape{3, 4});
  Tensor s = Slice(x, {1, 1}, {2, -1});
  EXPECT_EQ(s.shape(), (Shape{2, 3}));
  EXPECT_EQ(s.ToVector<float>(), (std::vector<float>{5, 6, 7, 9, 10, 11}));
  EXPECT_EQ(Slice(x, {0, 2}, {3, 1}).ToVector<float>(), (std::vector<float>{2, 6, 10}));
  ExpectThrowsWith([&] { Slice(x, {2, 0}, {2, 1}); }, {"Slice", "[3,4]"});
}

TEST(ArrayOpsTest, GatherPicksRows) {
  Tensor params = Tensor::Matrix<double>({{1, 2}, {3, 4}, {5, 6}});
  Tensor g = Gather(params, Tensor::Vector<int64_t>({2, 0, 2}));
  EXPECT_EQ(g.shape(), (Shape{3, 2}));
  EXPECT_EQ(g.ToVector<double>(), (std::vector<double>{5, 6, 1, 2, 5, 6}));
  Tensor g2 = Gather(params, Tensor::FromVector<int32_t>({1, 1, 0, 2}, Shape{2, 2}));
  EXPECT_EQ(g2.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(Gather(Tensor::Vector<int32_t>({7, 8, 9}), Tensor(int32_t{1})).scalar<int32_t>(), 8);
}

TEST(ArrayOpsTest, GatherBadIndexNamesIt) {
  Tensor params = Iota(Shape{3, 2});
  ExpectThrowsWith(
      [&] {
        Gather(params, Tensor::Vector<int32_t>({0, 3}));
      },
      {"GatherV2", "indices[1] = 3", "[0, 3)", "[3,2]"});
  EXPECT_THROW(Gather(params, Tensor::Vector<int32_t>({-1})), InvalidArgumentError);
  EXPECT_THROW(Gather(params, Tensor::Vector<float>({0})), InvalidArgumentError);
}

TEST(ArrayOpsTest, GatherGradientScatterAddsRepeatedRows) {
  Tensor params = Iota(Shape{3, 2});
  Tensor indices = Tensor::Vector<int32_t>({2, 0, 2});
  OpCall call{&kGatherOp, {params, indices}, Gather(params, indices), {}};
  auto grads = kGatherOp.gradient(call, Tensor::Matrix<float>({{1, 2}, {3, 4}, {10, 20}}));
  EXPECT_EQ(grads[0]->ToVector<float>(), (std::vector<float>{3, 4, 0, 0, 11, 22}));
  EXPECT_FALSE(grads[1].has_value());
}

TEST(ArrayOpsTest, OneHotEncodesAndLeavesOutOfRangeRowsOff) {
  Tensor h = OneHot(Tensor::Vector<int32_t>({0, 2, 5, -1}), 3);
  EXPECT_EQ(h.shape(), (Shape{4, 3}));
  EXPECT_EQ(h.ToVector<float>(), (std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}));
  Tensor d = OneHot(Tensor::Vector<int64_t>({1}), 2, 5.0, -1.0, DType::kFloat64);
  EXPECT_EQ(d.ToVector<double>(), (std::vector<double>{-1, 5}));
  EXPECT_THROW(OneHot(Tensor::Vector<float>({1}), 2), InvalidArgumentError);
}

TEST(ArrayOpsTest, CastTruncatesTowardZeroAndMakesBools) {
  Tensor x = Tensor::Vector<float>({-1.7f, 0.0f, 2.9f});
  EXPECT_EQ(Cast(x, DType::kInt32).ToVector<int32_t>(), (std::vector<int32_t>{-1, 0, 2}));
  EXPECT_EQ(Cast(x, DType::kBool).ToVector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(Cast(Tensor::Vector<bool>({true, false}), DType::kFloat64).ToVector<double>(),
            (std::vector<double>{1, 0}));
  EXPECT_EQ(Cast(Tensor::Vector<int64_t>({3}), DType::kFloat32).dtype(), DType::kFloat32);
  EXPECT_THROW(Cast(Tensor(std::string("a")), DType::kFloat32), InvalidArgumentError);
}

TEST(ArrayOpsTest, CastGradientOnlyBetweenFloats) {
  Tensor i = Tensor::Vector<int32_t>({1});
  OpCall call{&kCastOp, {i}, Cast(i, DType::kFloat32), {{"DstT", DType::kFloat32}}};
  EXPECT_FALSE(kCastOp.gradient(call, Tensor::Vector<float>({1}))[0].has_value());
}

TEST(ArrayOpsTest, BroadcastToRepeats) {
  EXPECT_EQ(BroadcastTo(Tensor::Vector<float>({1, 2}), Shape{2, 2}).ToVector<float>(),
            (std::vector<float>{1, 2, 1, 2}));
  EXPECT_EQ(
      BroadcastTo(Tensor::FromVector<float>({1, 2}, Shape{2, 1}), Shape{2, 3}).ToVector<float>(),
      (std::vector<float>{1, 1, 1, 2, 2, 2}));
  ExpectThrowsWith(
      [&] {
        BroadcastTo(Iota(Shape{3}), Shape{2, 2});
      },
      {"BroadcastTo", "[3]", "[2,2]"});
}

TEST(ArrayOpsTest, UnsortedSegmentSumAddsRows) {
  Tensor s = UnsortedSegmentSum(Tensor::Matrix<double>({{1, 2}, {3, 4}, {5, 6}}),
                                Tensor::Vector<int32_t>({1, 1, 0}), 3);
  EXPECT_EQ(s.ToVector<double>(), (std::vector<double>{5, 6, 4, 6, 0, 0}));
  EXPECT_THROW(UnsortedSegmentSum(Iota(Shape{2}), Tensor::Vector<int32_t>({0, 3}), 3),
               InvalidArgumentError);
}

TEST(ArrayOpsTest, ConstantsHaveShapeDtypeAndValue) {
  EXPECT_EQ(Zeros(Shape{2}, DType::kInt64).ToVector<int64_t>(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(Ones(Shape{3}).ToVector<float>(), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(Fill(Shape{2, 1}, Tensor(2.5)).ToVector<double>(), (std::vector<double>{2.5, 2.5}));
  EXPECT_EQ(ZerosLike(Iota(Shape{2})).ToVector<float>(), (std::vector<float>{0, 0}));
  Tensor o = OnesLike(Tensor::Vector<int32_t>({5, 6}));
  EXPECT_EQ(o.dtype(), DType::kInt32);
  EXPECT_EQ(o.ToVector<int32_t>(), (std::vector<int32_t>{1, 1}));
  EXPECT_THROW(Fill(Shape{2}, Tensor::Vector<float>({1, 2})), InvalidArgumentError);
  EXPECT_THROW(Ones(Shape{1}, DType::kString), InvalidArgumentError);
}

}  // namespace
}  // namespace eager

namespace eager {
namespace {

// ZerosLike / OnesLike of a graph tensor whose batch is unknown until the
// Session runs are graph nodes; before, they built an eager tensor of shape
// [?, 3] and memset -1 elements (a segfault).
TEST(ZerosLikeGraphTest, UnknownBatchIsANodeSizedWhenTheSessionRuns) {
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1, 3}), "x");
  const Tensor zeros = ZerosLike(x);
  const Tensor ones = OnesLike(x);
  ASSERT_TRUE(zeros.is_symbolic());
  EXPECT_EQ(zeros.shape(), Shape::Partial({-1, 3}));
  Session sess(graph);
  const Tensor batch = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const auto out = sess.Run({zeros, ones}, {{x, batch}});
  EXPECT_EQ(out[0]->ToVector<float>(), std::vector<float>(6, 0.0f));
  EXPECT_EQ(out[1]->ToVector<float>(), std::vector<float>(6, 1.0f));
  EXPECT_EQ(out[0]->shape(), (Shape{2, 3}));
}

TEST(ZerosLikeGraphTest, ATensorOfAPartiallyKnownShapeIsRefused) {
  try {
    Tensor::Zeros(Shape::Partial({-1, 3}));
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("must be fully defined"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace eager
