// Floor, GreaterEqual and SelectV2 as TF's (math_ops floor, greater_equal,
// array_ops where_v2): values, NumPy broadcasting of all three SelectV2
// inputs, and graph shapes when some dimensions are unknown.

#include <gtest/gtest.h>

#include <vector>

#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/op_def.h"
#include "ops/session.h"
#include "ops/unary_ops.h"
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

// SelectV2's gradients where condition [2,1,1], t [1,3,1] and e [1,1,4]
// each broadcast along other axes: t's gradient is the upstream gradient
// where the condition holds, summed over axes 0 and 2 (by hand); in a graph
// whose placeholders have unknown dimensions (a batch of 1 or 2 at run
// time), the broadcast axes come from BroadcastGradientArgs when the graph
// runs and the results equal the eager ones (TF's _SelectGradV2).
TEST(FloorGreaterEqualSelectTest, SelectV2GradientsOfThreeWayBroadcast) {
  const Tensor c = Tensor::FromVector<bool>({true, false}, Shape{2, 1, 1});
  const Tensor t = Tensor::FromVector<float>({1, 2, 3}, Shape{1, 3, 1});
  const Tensor e = Tensor::FromVector<float>({-1, -2, -3, -4}, Shape{1, 1, 4});
  std::vector<float> u(24);
  for (size_t i = 0; i < u.size(); ++i) u[i] = static_cast<float>(i);
  const Tensor grad = Tensor::FromVector<float>(u, Shape{2, 3, 4});
  const auto gradients = [](const Tensor& c, const Tensor& t, const Tensor& e, const Tensor& g) {
    const Tensor y = SelectV2(c, t, e);
    return kSelectV2Op.gradient(
        OpCall{.op = &kSelectV2Op, .inputs = {c, t, e}, .output = y, .attrs = {}}, g);
  };
  const auto eager = gradients(c, t, e, grad);
  EXPECT_FALSE(eager[0].has_value());
  // t: rows of batch 0 (condition true), each row's 4 values summed.
  EXPECT_EQ(eager[1]->shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(eager[1]->ToVector<float>(),
            (std::vector<float>{0 + 1 + 2 + 3, 4 + 5 + 6 + 7, 8 + 9 + 10 + 11}));
  // e: batch 1 (condition false), each column's 3 values summed.
  EXPECT_EQ(eager[2]->shape(), (Shape{1, 1, 4}));
  EXPECT_EQ(eager[2]->ToVector<float>(),
            (std::vector<float>{12 + 16 + 20, 13 + 17 + 21, 14 + 18 + 22, 15 + 19 + 23}));

  // Batch of 1 for the condition, 2 for t: then t is not broadcast on axis 0.
  const Tensor c2 = Tensor::FromVector<bool>({true, false, true}, Shape{1, 3, 1});
  const Tensor t2 = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3, 1});
  const std::vector<std::vector<Tensor>> feeds_values = {{c, t, e, grad}, {c2, t2, e, grad}};
  std::vector<std::vector<std::optional<Tensor>>> wants;
  wants.reserve(feeds_values.size());
  for (const auto& v : feeds_values) wants.push_back(gradients(v[0], v[1], v[2], v[3]));

  Graph graph;
  Graph::AsDefault in(graph);
  const Shape unknown = Shape::Partial({-1, -1, -1});
  const Tensor pc = Placeholder(DType::kBool, unknown, "c");
  const Tensor pt = Placeholder(DType::kFloat32, unknown, "t");
  const Tensor pe = Placeholder(DType::kFloat32, unknown, "e");
  const Tensor pg = Placeholder(DType::kFloat32, unknown, "g");
  const auto symbolic = gradients(pc, pt, pe, pg);
  Session sess(graph);
  for (size_t k = 0; k < feeds_values.size(); ++k) {
    const auto& v = feeds_values[k];
    const Feeds feeds = {{pc, v[0]}, {pt, v[1]}, {pe, v[2]}, {pg, v[3]}};
    for (const size_t i : {1u, 2u}) {
      const Tensor got = sess.Run(*symbolic[i], feeds);
      EXPECT_EQ(got.shape(), wants[k][i]->shape()) << "feed " << k << ", input " << i;
      EXPECT_EQ(got.ToVector<float>(), wants[k][i]->ToVector<float>()) << "feed " << k;
    }
  }
}

}  // namespace
}  // namespace eager
