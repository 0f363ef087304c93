// The shape and array ops of TF 2.21's graphs of common layers (issue 39):
// ExpandDims, Tile, Pack, Pad, PadV2, StridedSlice (TF's masks), Fill,
// Range, and their errors. Values by hand; tests/tf_graphs/layer_ops_test.py
// compares them with TF itself.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ops/array_ops.h"
#include "ops/execute.h"
#include "ops/graph_ops.h"
#include "ops/session.h"
#include "ops/shape_ops.h"
#include "runtime/graph.h"
#include "tests/testing/op_errors.h"

namespace eager {
namespace {

using ::eager::testing::ErrorOf;
using ::eager::testing::IotaInt32;

using ::testing::HasSubstr;

TEST(LayerShapeOpsTest, ExpandDimsTilePackPad) {
  const Tensor x = IotaInt32(Shape{2, 3});
  EXPECT_EQ(ExpandDims(x, -1).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(ExpandDims(x, 0).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(Tile(IotaInt32(Shape{2}), {3}).ToVector<int32_t>(),
            (std::vector<int32_t>{0, 1, 0, 1, 0, 1}));
  const Tensor t = Tile(x, {2, 1});
  EXPECT_EQ(t.shape(), (Shape{4, 3}));
  EXPECT_EQ(t.ToVector<int32_t>(), (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}));
  const Tensor p = Pack({IotaInt32(Shape{2}), Tile(IotaInt32(Shape{1}), {2})}, 1);
  EXPECT_EQ(p.shape(), (Shape{2, 2}));
  EXPECT_EQ(p.ToVector<int32_t>(), (std::vector<int32_t>{0, 0, 1, 0}));
  const Tensor padded = Pad(IotaInt32(Shape{1, 2}), {{1, 0}, {0, 1}});
  EXPECT_EQ(padded.shape(), (Shape{2, 3}));
  EXPECT_EQ(padded.ToVector<int32_t>(), (std::vector<int32_t>{0, 0, 0, 0, 1, 0}));
  EXPECT_EQ(PadV2(IotaInt32(Shape{2}), {{1, 1}}, Tensor(7)).ToVector<int32_t>(),
            (std::vector<int32_t>{7, 0, 1, 7}));
  EXPECT_THAT(ErrorOf([&] { ExpandDims(x, 3); }), HasSubstr("dim 3 is out of range"));
  EXPECT_THAT(ErrorOf([&] { Tile(x, {2}); }), HasSubstr("one entry per dimension"));
  EXPECT_THAT(ErrorOf([&] { Pack({x, IotaInt32(Shape{3})}); }), HasSubstr("values[1] [3]"));
  EXPECT_THAT(ErrorOf([&] { Pad(x, {{-1, 0}, {0, 0}}); }), HasSubstr("negative"));
}

// Python's x[1:, ::-2], x[..., None, 0], x[-1], clamping and an empty range.
TEST(LayerShapeOpsTest, StridedSliceFollowsTfsMasks) {
  const Tensor x = IotaInt32(Shape{3, 4});
  const Tensor a = StridedSlice(x, {1, 0}, {0, 0}, {1, -2}, {.begin = 2, .end = 3});
  EXPECT_EQ(a.shape(), (Shape{2, 2}));
  EXPECT_EQ(a.ToVector<int32_t>(), (std::vector<int32_t>{7, 5, 11, 9}));
  const Tensor b = StridedSlice(x, {0, 0, 0}, {0, 0, 1}, {1, 1, 1},
                                {.ellipsis = 1, .new_axis = 2, .shrink_axis = 4});
  EXPECT_EQ(b.shape(), (Shape{3, 1}));
  EXPECT_EQ(b.ToVector<int32_t>(), (std::vector<int32_t>{0, 4, 8}));
  const Tensor c = StridedSlice(x, {-1}, {0}, {1}, {.shrink_axis = 1});
  EXPECT_EQ(c.ToVector<int32_t>(), (std::vector<int32_t>{8, 9, 10, 11}));
  EXPECT_EQ(StridedSlice(x, {-10, 2}, {10, 100}, {1, 1}).shape(), (Shape{3, 2}));
  EXPECT_EQ(StridedSlice(x, {2}, {1}, {1}).shape(), (Shape{0, 4}));
  EXPECT_THAT(ErrorOf([&] { StridedSlice(x, {3}, {4}, {1}, {.shrink_axis = 1}); }),
              HasSubstr("slice index 3 of dimension 0 out of bounds"));
  EXPECT_THAT(ErrorOf([&] { StridedSlice(x, {0}, {1}, {0}); }),
              HasSubstr("strides[0] must be non-zero"));
  EXPECT_THAT(ErrorOf([&] {
                StridedSlice(x, {0, 0}, {1, 1}, {1, 1}, {.ellipsis = 3});
              }),
              HasSubstr("Multiple ellipses"));
  EXPECT_THAT(ErrorOf([&] {
                StridedSlice(x, {0, 0, 0}, {1, 1, 1}, {1, 1, 1});
              }),
              HasSubstr("Index out of range using input dim 2"));
}

TEST(LayerShapeOpsTest, FillAndRange) {
  const Tensor f = Execute(kFillOp, {Tensor::Vector<int64_t>({2, 1}), Tensor(1.5f)});
  EXPECT_EQ(f.shape(), (Shape{2, 1}));
  EXPECT_EQ(f.ToVector<float>(), (std::vector<float>{1.5f, 1.5f}));
  EXPECT_EQ(Range(Tensor(3), Tensor(-4), Tensor(-3)).ToVector<int32_t>(),
            (std::vector<int32_t>{3, 0, -3}));
  EXPECT_EQ(Range(Tensor(0.5), Tensor(1.0), Tensor(0.25)).ToVector<double>(),
            (std::vector<double>{0.5, 0.75}));
  EXPECT_THAT(ErrorOf([] { Range(Tensor(0), Tensor(5), Tensor(0)); }),
              HasSubstr("Requires delta != 0"));
  EXPECT_THAT(ErrorOf([] { Range(Tensor(0), Tensor(5), Tensor(-1)); }),
              HasSubstr("Requires start >= limit when delta < 0: 0/5"));
}

// In a graph, shape rules read Const index inputs; a computed one leaves
// the shape unknown, and the Session computes the value.
TEST(LayerShapeOpsTest, GraphShapesFromConstIndexInputs) {
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor x = Placeholder(DType::kInt32, Shape::Partial({Shape::kUnknownDim, 4}), "x");
  EXPECT_EQ(Tile(x, {2, 3}).shape(), Shape::Partial({Shape::kUnknownDim, 12}));
  EXPECT_EQ(StridedSlice(x, {0, 1}, {0, 3}, {1, 1}, {.begin = 1, .end = 1}).shape(),
            Shape::Partial({Shape::kUnknownDim, 2}));
  const Tensor fed_dims = Placeholder(DType::kInt32, Shape{2}, "dims");
  const Tensor f = Execute(kFillOp, {fed_dims, Constant(Tensor(2))});
  EXPECT_EQ(f.shape(), Shape::Partial({Shape::kUnknownDim, Shape::kUnknownDim}));
  Session sess(graph);
  const Tensor value = sess.Run(f, {{fed_dims, Tensor::Vector<int32_t>({1, 3})}});
  EXPECT_EQ(value.ToVector<int32_t>(), (std::vector<int32_t>{2, 2, 2}));
}

}  // namespace
}  // namespace eager
