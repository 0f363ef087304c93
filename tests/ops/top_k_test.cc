// TopK ("TopKV2", tf.math.top_k): values and indices by hand (ties by the
// lower index first, as TF), its errors, its gradient against TF's
// _TopKGrad by hand, and the graph node a Session runs; Size and ScatterNd,
// which TF's gradient graph of TopKV2 uses. op_gradient_test.cc
// checks the gradient by central differences; tests/tf_graphs/
// layer_ops_test.py compares with TF itself.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ops/array_ops.h"
#include "ops/graph_ops.h"
#include "ops/nn_ops.h"
#include "ops/session.h"
#include "runtime/graph.h"
#include "tests/testing/op_errors.h"

namespace eager {
namespace {

using ::eager::testing::ErrorOf;

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(TopKTest, LargestPerRowTiesByLowerIndex) {
  const Tensor x = Tensor::FromVector<float>({1, 5, 3, 5, -2, /**/ 0, 0, 7, 0, 0}, Shape{2, 5});
  const TopKOutputs top = TopK(x, 3);
  EXPECT_EQ(top.values.shape(), (Shape{2, 3}));
  EXPECT_EQ(top.values.ToVector<float>(), (std::vector<float>{5, 5, 3, 7, 0, 0}));
  EXPECT_EQ(top.indices.dtype(), DType::kInt32);
  EXPECT_EQ(top.indices.ToVector<int32_t>(), (std::vector<int32_t>{1, 3, 2, 2, 0, 1}));
  // k = 0 and k = the whole row; rank 1 and 3; integers.
  EXPECT_EQ(TopK(x, 0).values.shape(), (Shape{2, 0}));
  EXPECT_EQ(TopK(x, 5).indices.ToVector<int32_t>(),
            (std::vector<int32_t>{1, 3, 2, 0, 4, 2, 0, 1, 3, 4}));
  const TopKOutputs v = TopK(Tensor::Vector<int64_t>({-4, 9, 2}), 1);
  EXPECT_EQ(v.values.ToVector<int64_t>(), (std::vector<int64_t>{9}));
  EXPECT_EQ(v.indices.ToVector<int32_t>(), (std::vector<int32_t>{1}));
  const Tensor r3 = Tensor::FromVector<double>({1, 2, 4, 3, 6, 5, 8, 7}, Shape{2, 2, 2});
  EXPECT_EQ(TopK(r3, 1, /*sorted=*/false).values.ToVector<double>(),
            (std::vector<double>{2, 4, 6, 8}));
}

TEST(TopKTest, ScalarsNegativeKAndKPastTheRowAreRefused) {
  const Tensor x = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_THAT(ErrorOf([&] { TopK(x, 4); }),
              AllOf(HasSubstr("TopKV2"), HasSubstr("at least k columns. Had 3, needed 4")));
  EXPECT_THAT(ErrorOf([&] { TopK(x, -1); }), HasSubstr("Need k >= 0, got -1"));
  EXPECT_THAT(ErrorOf([] { TopK(Tensor(1.0f), 1); }), HasSubstr("at least 1-dimensional"));
  EXPECT_THAT(ErrorOf([] { TopK(Tensor::Vector<bool>({true}), 1); }), HasSubstr("input"));
}

// TF's _TopKGrad: each value's gradient lands where the value came from.
TEST(TopKTest, ValuesGradientScattersToTheIndices) {
  const Tensor x = Tensor::FromVector<double>({1, 5, 3, 0, 4, 7}, Shape{2, 3});
  const TopKOutputs top = TopK(x, 2);
  const OpCall call{&kTopKValuesOp, {x, top.indices}, top.values, {}};
  const auto grads =
      kTopKValuesOp.gradient(call, Tensor::FromVector<double>({10, 20, 30, 40}, Shape{2, 2}));
  ASSERT_EQ(grads.size(), 2u);
  ASSERT_TRUE(grads[0].has_value());
  EXPECT_FALSE(grads[1].has_value());
  EXPECT_EQ(grads[0]->shape(), (Shape{2, 3}));
  EXPECT_EQ(grads[0]->ToVector<double>(), (std::vector<double>{0, 10, 20, 0, 40, 30}));
  EXPECT_EQ(kTopKIndicesOp.gradient, nullptr);
}

TEST(TopKTest, GraphNodeHasTwoOutputsAndKAsAnInput) {
  Graph graph;
  TopKOutputs top;
  {
    Graph::AsDefault in(graph);
    const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({Shape::kUnknownDim, 4}), "x");
    top = TopK(x, 2);
    EXPECT_THAT(ErrorOf([&] { TopK(x, 5); }),
                AllOf(HasSubstr("TopKV2"), HasSubstr("Had 4, needed 5")));
  }
  const Node& node = graph.node(graph.FindNodeIndex("TopKV2"));
  EXPECT_EQ(node.op, "TopKV2");
  EXPECT_EQ(node.inputs.size(), 2u);
  EXPECT_EQ(top.indices.name(), "TopKV2:1");
  EXPECT_EQ(node.output_specs[1].shape, Shape::Partial({Shape::kUnknownDim, 2}));
  Session sess(graph);
  const Tensor feed = Tensor::FromVector<float>({3, 1, 4, 1, 5, 9, 2, 6}, Shape{2, 4});
  EXPECT_EQ(sess.Run(top.values, {{"x:0", feed}}).ToVector<float>(),
            (std::vector<float>{4, 3, 9, 6}));
  EXPECT_EQ(sess.Run(top.indices, {{"x:0", feed}}).ToVector<int32_t>(),
            (std::vector<int32_t>{2, 0, 1, 3}));
  // k past the row when the graph runs (the rows' length was unknown).
  Graph g2;
  Tensor values;
  {
    Graph::AsDefault in(g2);
    const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({2, Shape::kUnknownDim}), "x");
    values = TopK(x, 6).values;
  }
  Session s2(g2);
  EXPECT_THAT(ErrorOf([&] {
                s2.Run(values, {{"x:0", feed}});
              }),
              AllOf(HasSubstr("'TopKV2'"), HasSubstr("Had 4, needed 6")));
}

TEST(SizeTest, CountsTheElements) {
  const Tensor x = Tensor::Zeros(Shape{2, 3, 4}, DType::kFloat32);
  EXPECT_EQ(Size(x).dtype(), DType::kInt32);
  EXPECT_EQ(Size(x).ToVector<int32_t>(), (std::vector<int32_t>{24}));
  EXPECT_EQ(Size(Tensor(1.0f), DType::kInt64).ToVector<int64_t>(), (std::vector<int64_t>{1}));
  EXPECT_EQ(Size(Tensor::Zeros(Shape{3, 0}, DType::kInt32)).ToVector<int32_t>(),
            (std::vector<int32_t>{0}));
  EXPECT_THAT(ErrorOf([&] { Size(x, DType::kFloat32); }), HasSubstr("out_type"));
}

TEST(ScatterNdTest, AddsUpdatesIntoZerosAtTheIndexedSlices) {
  // Rows: [4, 2] output, indices [3, 1] naming rows; row 2 twice sums.
  const Tensor rows = ScatterNd(Tensor::FromVector<int32_t>({2, 0, 2}, Shape{3, 1}),
                                Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{3, 2}),
                                Tensor::Vector<int32_t>({4, 2}));
  EXPECT_EQ(rows.shape(), (Shape{4, 2}));
  EXPECT_EQ(rows.ToVector<float>(), (std::vector<float>{3, 4, 0, 0, 6, 8, 0, 0}));
  // Elements: indices [2, 2] into [2, 3]; int64 indices.
  const Tensor elems = ScatterNd(Tensor::FromVector<int64_t>({1, 2, 0, 1}, Shape{2, 2}),
                                 Tensor::Vector<double>({-1, 7}), Tensor::Vector<int64_t>({2, 3}));
  EXPECT_EQ(elems.ToVector<double>(), (std::vector<double>{0, 7, 0, 0, 0, -1}));
  EXPECT_THAT(ErrorOf([] {
                ScatterNd(Tensor::FromVector<int32_t>({4}, Shape{1, 1}), Tensor::Vector<float>({1}),
                          Tensor::Vector<int32_t>({4}));
              }),
              AllOf(HasSubstr("ScatterNd"), HasSubstr("indices[0] = [4]"),
                    HasSubstr("does not index into shape [4]")));
  EXPECT_THAT(ErrorOf([] {
                ScatterNd(Tensor::FromVector<int32_t>({1}, Shape{1, 1}),
                          Tensor::Vector<float>({1, 2}), Tensor::Vector<int32_t>({4}));
              }),
              HasSubstr("do not match indices"));
}

TEST(GatherNdTest, GathersTheIndexedSlices) {
  const Tensor params = Tensor::FromVector<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
                                                  Shape{3, 2, 2});  // [i][j][k] = 4i + 2j + k
  // Elements (D = 3), rows (D = 1), a whole-params slice per index (D = 0).
  const Tensor elems =
      GatherNd(params, Tensor::FromVector<int32_t>({2, 1, 0, 0, 1, 1}, Shape{2, 3}));
  EXPECT_EQ(elems.shape(), (Shape{2}));
  EXPECT_EQ(elems.ToVector<float>(), (std::vector<float>{10, 3}));
  const Tensor rows = GatherNd(params, Tensor::FromVector<int64_t>({2, 0, 2}, Shape{3, 1}));
  EXPECT_EQ(rows.shape(), (Shape{3, 2, 2}));
  EXPECT_EQ(rows.ToVector<float>(), (std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
  const Tensor pairs = GatherNd(params, Tensor::FromVector<int32_t>({1, 1}, Shape{1, 1, 2}));
  EXPECT_EQ(pairs.shape(), (Shape{1, 1, 2}));
  EXPECT_EQ(pairs.ToVector<float>(), (std::vector<float>{6, 7}));
  EXPECT_THAT(ErrorOf([&] {
                GatherNd(params, Tensor::FromVector<int32_t>({0, 2}, Shape{1, 2}));
              }),
              AllOf(HasSubstr("GatherNd"), HasSubstr("indices[0] = [0,2]"),
                    HasSubstr("does not index into param shape [3,2,2]")));
  EXPECT_THAT(ErrorOf([&] {
                GatherNd(params, Tensor::Zeros(Shape{1, 4}, DType::kInt32));
              }),
              HasSubstr("expected indices.shape[-1] <= rank of params"));
}

// TF's _GatherNdGrad and _ScatterNdGrad by hand: each is the other op.
TEST(GatherNdTest, GatherNdAndScatterNdAreEachOthersGradient) {
  const Tensor params = Tensor::Zeros(Shape{3, 2}, DType::kFloat64);
  const Tensor indices = Tensor::FromVector<int32_t>({2, 0, 2}, Shape{3, 1});
  const Tensor grad = Tensor::FromVector<double>({1, 2, 3, 4, 5, 6}, Shape{3, 2});
  const OpCall gather{&kGatherNdOp, {params, indices}, GatherNd(params, indices), {}};
  const auto g = kGatherNdOp.gradient(gather, grad);
  ASSERT_TRUE(g[0].has_value());
  EXPECT_FALSE(g[1].has_value());
  EXPECT_EQ(g[0]->shape(), (Shape{3, 2}));
  EXPECT_EQ(g[0]->ToVector<double>(), (std::vector<double>{3, 4, 0, 0, 6, 8}));  // row 2 twice
  const Tensor shape = Tensor::Vector<int32_t>({3, 2});
  const OpCall scatter{&kScatterNdOp, {indices, grad, shape}, ScatterNd(indices, grad, shape), {}};
  const Tensor up = Tensor::FromVector<double>({10, 20, 30, 40, 50, 60}, Shape{3, 2});
  const auto s = kScatterNdOp.gradient(scatter, up);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_FALSE(s[0].has_value());
  EXPECT_FALSE(s[2].has_value());
  ASSERT_TRUE(s[1].has_value());
  EXPECT_EQ(s[1]->ToVector<double>(), (std::vector<double>{50, 60, 10, 20, 50, 60}));
}

}  // namespace
}  // namespace eager
