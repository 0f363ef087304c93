// Floor, GreaterEqual and SelectV2 as TF's (math_ops floor, greater_equal,
// array_ops where_v2): values, NumPy broadcasting of all three SelectV2
// inputs, and graph shapes when some dimensions are unknown.

#include "ops/floor_greater_equal_select.h"

#include <gtest/gtest.h>

#include <vector>

#include "ops/graph_ops.h"
#include "runtime/errors.h"
#include "runtime/graph.h"

namespace eager {
namespace {

TEST(FloorGreaterEqualSelectTest, Values) {
  EXPECT_EQ(Floor(Tensor::Vector<float>({-1.5f, -0.5f, -0.0f, 0.3f, 1.0f, 2.7f})).ToVector<float>(),
            (std::vector<float>{-2, -1, -0.0f, 0, 1, 2}));
  EXPECT_EQ(GreaterEqual(Tensor::Vector<float>({0.2f, 0.3f, 0.4f}), Tensor(0.3f)).ToVector<bool>(),
            (std::vector<bool>{false, true, true}));
  EXPECT_EQ(GreaterEqual(Tensor::Vector<int32_t>({1, 5}), Tensor::Matrix<int32_t>({{2}, {1}}))
                .ToVector<bool>(),
            (std::vector<bool>{false, true, true, true}));
  EXPECT_THROW(GreaterEqual(Tensor(1.0f), Tensor(1.0)), InvalidArgumentError);
  EXPECT_THROW(Floor(Tensor::Vector<int32_t>({1})), InvalidArgumentError);
}

TEST(FloorGreaterEqualSelectTest, SelectV2BroadcastsAllThreeInputs) {
  // condition [2, 1], t [3], e []: [2, 3].
  const Tensor c = Tensor::FromVector<bool>({true, false}, Shape{2, 1});
  const Tensor y = SelectV2(c, Tensor::Vector<float>({1, 2, 3}), Tensor(-1.0f));
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{1, 2, 3, -1, -1, -1}));
  // condition [3] against t [2, 3] and e [2, 1]; int64 elements.
  const Tensor z = SelectV2(Tensor::Vector<bool>({true, false, true}),
                            Tensor::Matrix<int64_t>({{1, 2, 3}, {4, 5, 6}}),
                            Tensor::Matrix<int64_t>({{-7}, {-8}}));
  EXPECT_EQ(z.ToVector<int64_t>(), (std::vector<int64_t>{1, -7, 3, 4, -8, 6}));
  EXPECT_THROW(SelectV2(Tensor(1.0f), Tensor(1.0f), Tensor(2.0f)), InvalidArgumentError);
  EXPECT_THROW(
      SelectV2(Tensor::Vector<bool>({true, false}), Tensor::Vector<float>({1, 2, 3}), Tensor(0.0f)),
      InvalidArgumentError);
}

// A known dimension wins over an unknown one unless it is 1.
TEST(FloorGreaterEqualSelectTest, GraphShapesWithUnknownDimensions) {
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor c = Placeholder(DType::kBool, Shape::Partial({-1, -1}), "c");
  const Tensor t = Placeholder(DType::kFloat32, Shape{4, 3}, "t");
  EXPECT_EQ(SelectV2(c, t, Tensor(0.0f)).shape(), (Shape{4, 3}));
  const Tensor u = Placeholder(DType::kFloat32, Shape::Partial({-1, 1}), "u");
  EXPECT_EQ(SelectV2(c, u, Tensor(0.0f)).shape(), Shape::Partial({-1, -1}));
  EXPECT_EQ(GreaterEqual(u, t).shape(), (Shape{4, 3}));
  EXPECT_THROW(GreaterEqual(t, Placeholder(DType::kFloat32, Shape::Partial({-1, 5}), "v")),
               InvalidArgumentError);
}

}  // namespace
}  // namespace eager
