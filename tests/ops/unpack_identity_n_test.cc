// Unpack (tf.unstack) and IdentityN (tf.identity_n), eagerly and as graph
// nodes a Session runs, with values by hand; Unpack's gradient against
// TF's _UnpackGrad (Pack of the outputs' gradients, zeros for the missing
// ones). op_gradient_test.cc checks the gradient by central differences;
// tests/tf_graphs/layer_ops_test.py compares both ops with TF itself.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
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

using ::testing::AllOf;
using ::testing::HasSubstr;

using Ints = std::vector<int32_t>;

TEST(UnpackTest, SlicesAlongEachAxis) {
  const Tensor x = IotaInt32(Shape{2, 3, 2});  // x[i][j][k] = 6i + 2j + k
  std::vector<Tensor> a0 = Unpack(x, 0);
  ASSERT_EQ(a0.size(), 2u);
  EXPECT_EQ(a0[1].shape(), (Shape{3, 2}));
  EXPECT_EQ(a0[1].ToVector<int32_t>(), (Ints{6, 7, 8, 9, 10, 11}));
  std::vector<Tensor> a1 = Unpack(x, 1);
  ASSERT_EQ(a1.size(), 3u);
  EXPECT_EQ(a1[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(a1[0].ToVector<int32_t>(), (Ints{0, 1, 6, 7}));
  EXPECT_EQ(a1[2].ToVector<int32_t>(), (Ints{4, 5, 10, 11}));
  std::vector<Tensor> last = Unpack(x, -1);
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last[1].shape(), (Shape{2, 3}));
  EXPECT_EQ(last[1].ToVector<int32_t>(), (Ints{1, 3, 5, 7, 9, 11}));
  // A vector unpacks to scalars; an empty dimension to no outputs.
  std::vector<Tensor> scalars = Unpack(Tensor::Vector<float>({1.5f, -2.0f}));
  ASSERT_EQ(scalars.size(), 2u);
  EXPECT_EQ(scalars[1].shape(), Shape{});
  EXPECT_EQ(scalars[1].ToVector<float>(), (std::vector<float>{-2.0f}));
  EXPECT_TRUE(Unpack(Tensor::Zeros(Shape{0, 3}, DType::kFloat32)).empty());
  // Every dtype, strings too.
  const Tensor s = Tensor::FromVector<std::string>({"a", "b", "c", "d"}, Shape{2, 2});
  EXPECT_EQ(Unpack(s, 1)[1].ToVector<std::string>(), (std::vector<std::string>{"b", "d"}));
}

TEST(UnpackTest, ScalarsAndAxesOutOfRangeAreRefused) {
  EXPECT_THAT(ErrorOf([] { Unpack(Tensor(1.0f)); }),
              AllOf(HasSubstr("Unpack"), HasSubstr("scalar")));
  EXPECT_THAT(ErrorOf([] {
                Unpack(IotaInt32(Shape{2, 3}), 2);
              }),
              AllOf(HasSubstr("Unpack"), HasSubstr("axis = 2 not in [-2, 2)")));
  EXPECT_THAT(ErrorOf([] { Unpack(IotaInt32(Shape{2, 3}), -3); }), HasSubstr("axis = -3 not in"));
}

// TF's _UnpackGrad: Pack of the outputs' gradients, zeros for outputs
// nothing used. Each eager output's gradient is its share of that Pack; the
// tape sums them.
TEST(UnpackTest, GradientPacksTheOutputsGradientsWithZerosForMissingOnes) {
  const Tensor x = Tensor::FromVector<double>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const Attrs axis1{{"axis", int64_t{1}}, {"index", int64_t{0}}};
  const Tensor g0 = Tensor::Vector<double>({10, 20});
  const Tensor g2 = Tensor::Vector<double>({-1, -2});
  OpCall call0{&kUnpackOutputOp, {x}, Unpack(x, 1)[0], axis1};
  OpCall call2 = call0;
  call2.attrs.Set("index", int64_t{2});
  const std::optional<Tensor> d0 = kUnpackOutputOp.gradient(call0, g0)[0];
  const std::optional<Tensor> d2 = kUnpackOutputOp.gradient(call2, g2)[0];
  ASSERT_TRUE(d0.has_value() && d2.has_value());
  const Tensor sum = Add(*d0, *d2);
  EXPECT_EQ(sum.shape(), (Shape{2, 3}));
  EXPECT_EQ(sum.ToVector<double>(), (std::vector<double>{10, 0, -1, 20, 0, -2}));
}

TEST(UnpackTest, GraphNodeHasAnOutputPerSliceAndRunsAsEager) {
  const Tensor value = IotaInt32(Shape{2, 3, 2});
  Graph graph;
  std::vector<Tensor> outs;
  {
    Graph::AsDefault in(graph);
    const Tensor x = Placeholder(DType::kInt32, Shape::Partial({Shape::kUnknownDim, 3, 2}), "x");
    outs = Unpack(x, -2);
  }
  ASSERT_EQ(outs.size(), 3u);
  EXPECT_EQ(outs[2].name(), "unstack:2");
  const Node& node = graph.node(graph.FindNodeIndex("unstack"));
  EXPECT_EQ(node.op, "Unpack");
  EXPECT_EQ(node.Attr<int64_t>("num"), 3);
  EXPECT_EQ(node.Attr<int64_t>("axis"), -2);
  EXPECT_EQ(node.output_specs[0].shape, Shape::Partial({Shape::kUnknownDim, 2}));
  Session sess(graph);
  const std::vector<Tensor> eager = Unpack(value, 1);
  for (int i = 0; i < 3; ++i) {
    const Tensor got = sess.Run(outs[static_cast<size_t>(i)], {{"x:0", value}});
    EXPECT_EQ(got.shape(), eager[static_cast<size_t>(i)].shape());
    EXPECT_EQ(got.ToVector<int32_t>(), eager[static_cast<size_t>(i)].ToVector<int32_t>()) << i;
  }
}

TEST(UnpackTest, GraphNeedsTheSizeAlongAxisAndANodeMustMatchItsNum) {
  Graph graph;
  {
    Graph::AsDefault in(graph);
    const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({Shape::kUnknownDim, 3}), "x");
    EXPECT_THAT(ErrorOf([&] { Unpack(x, 0); }),
                AllOf(HasSubstr("Unpack"), HasSubstr("number of outputs")));
    EXPECT_THAT(ErrorOf([&] { Unpack(x, 5); }), HasSubstr("axis = 5 not in [-2, 2)"));
  }
  // A node from a file whose num disagrees with its input.
  graph.AddNode(Node{.name = "c",
                     .op = "Const",
                     .attrs = {{"value", IotaInt32(Shape{2, 3})}, {"dtype", DType::kInt32}}});
  graph.AddNode(Node{.name = "u",
                     .op = "Unpack",
                     .inputs = {"c"},
                     .attrs = {{"T", DType::kInt32}, {"num", int64_t{3}}, {"axis", int64_t{0}}}});
  Session sess(graph);
  std::string error;
  try {
    sess.Run("u:1");
  } catch (const InvalidArgumentError& e) {
    error = e.what();
  }
  EXPECT_THAT(error, AllOf(HasSubstr("'u'"), HasSubstr("axis 0 must equal 3"), HasSubstr("[2,3]")));
}

TEST(IdentityNTest, PassesEachTensorThrough) {
  const std::vector<Tensor> in = {Tensor::Vector<float>({1.5f, 2}), IotaInt32(Shape{2, 2})};
  const std::vector<Tensor> out = IdentityN(in);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].ToVector<float>(), (std::vector<float>{1.5f, 2}));
  EXPECT_EQ(out[1].shape(), (Shape{2, 2}));
  EXPECT_EQ(out[1].ToVector<int32_t>(), (Ints{0, 1, 2, 3}));
  EXPECT_THAT(ErrorOf([] { IdentityN({}); }), HasSubstr("IdentityN"));
  // Eagerly each is an Identity, whose gradient passes through.
  EXPECT_EQ(
      kIdentityOp.gradient(OpCall{&kIdentityOp, {in[0]}, out[0], {}}, in[0])[0]->ToVector<float>(),
      (std::vector<float>{1.5f, 2}));
}

TEST(IdentityNTest, GraphNodeHasAnOutputPerInput) {
  Graph graph;
  std::vector<Tensor> outs;
  {
    Graph::AsDefault in(graph);
    const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({Shape::kUnknownDim}), "x");
    outs = IdentityN({x, Constant(IotaInt32(Shape{3}))});
  }
  ASSERT_EQ(outs.size(), 2u);
  const Node& node = graph.node(graph.FindNodeIndex("IdentityN"));
  EXPECT_EQ(node.op, "IdentityN");
  EXPECT_EQ(node.Attr<std::vector<DType>>("T"),
            (std::vector<DType>{DType::kFloat32, DType::kInt32}));
  EXPECT_EQ(outs[1].name(), "IdentityN:1");
  Session sess(graph);
  const Tensor feed = Tensor::Vector<float>({3, -4});
  EXPECT_EQ(sess.Run(outs[0], {{"x:0", feed}}).ToVector<float>(), (std::vector<float>{3, -4}));
  EXPECT_EQ(sess.Run(outs[1], {{"x:0", feed}}).ToVector<int32_t>(), (Ints{0, 1, 2}));
}

}  // namespace
}  // namespace eager
