// Split and SplitV (ops/split_ops.h), eagerly and as graph nodes a Session
// runs, with values by hand; the pieces' gradient against TF's _SplitGrad
// (Concat of the pieces' gradients, zeros for unused ones); the errors.
// op_gradient_test.cc checks _SplitOutput's gradient by central
// differences; tests/tf_graphs/layer_ops_test.py compares both with TF.

#include "ops/split_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/session.h"
#include "runtime/graph.h"
#include "tests/testing/op_errors.h"

namespace eager {
namespace {

using ::eager::testing::ErrorOf;
using ::eager::testing::IotaInt32;

using ::testing::AllOf;
using ::testing::HasSubstr;

using Ints = std::vector<int32_t>;

TEST(SplitTest, EqualPiecesAlongAnAxis) {
  const Tensor x = IotaInt32(Shape{2, 4});  // rows 0..3, 4..7
  const std::vector<Tensor> cols = Split(x, 2, 1);
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_EQ(cols[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(cols[0].ToVector<int32_t>(), (Ints{0, 1, 4, 5}));
  EXPECT_EQ(cols[1].ToVector<int32_t>(), (Ints{2, 3, 6, 7}));
  const std::vector<Tensor> rows = Split(x, 2, -2);
  EXPECT_EQ(rows[1].shape(), (Shape{1, 4}));
  EXPECT_EQ(rows[1].ToVector<int32_t>(), (Ints{4, 5, 6, 7}));
  EXPECT_EQ(Split(x, 1, 0)[0].ToVector<int32_t>(), x.ToVector<int32_t>());
  // LSTM gates: [batch, 4 * units] in 4.
  const std::vector<Tensor> gates = Split(IotaInt32(Shape{1, 8}), 4, 1);
  ASSERT_EQ(gates.size(), 4u);
  EXPECT_EQ(gates[3].ToVector<int32_t>(), (Ints{6, 7}));
}

TEST(SplitTest, SplitVSizesWithOneRest) {
  const Tensor x = IotaInt32(Shape{2, 5});
  const std::vector<Tensor> p = SplitV(x, {1, -1, 2}, 1);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].ToVector<int32_t>(), (Ints{0, 5}));
  EXPECT_EQ(p[1].shape(), (Shape{2, 2}));
  EXPECT_EQ(p[1].ToVector<int32_t>(), (Ints{1, 2, 6, 7}));
  EXPECT_EQ(p[2].ToVector<int32_t>(), (Ints{3, 4, 8, 9}));
  const std::vector<Tensor> empty = SplitV(x, {0, 5}, 1);
  EXPECT_EQ(empty[0].shape(), (Shape{2, 0}));
}

TEST(SplitTest, ErrorsSayWhatWasExpected) {
  const Tensor x = IotaInt32(Shape{2, 5});
  EXPECT_THAT(ErrorOf([&] { Split(x, 2, 1); }),
              AllOf(HasSubstr("Split"), HasSubstr("evenly divide"), HasSubstr("(size = 5)"),
                    HasSubstr("num_split 2")));
  EXPECT_THAT(ErrorOf([&] { Split(x, 2, 2); }), HasSubstr("split_dim 2 not in [-2, 2)"));
  EXPECT_THAT(ErrorOf([&] { Split(x, 0, 0); }), HasSubstr("num_split 0"));
  EXPECT_THAT(ErrorOf([&] {
                SplitV(x, {1, 2}, 1);
              }),
              AllOf(HasSubstr("SplitV"), HasSubstr("add up to 3, expected 5")));
  EXPECT_THAT(ErrorOf([&] { SplitV(x, {4, -1, 2}, 1); }), HasSubstr("expected at most 5"));
  EXPECT_THAT(ErrorOf([&] { SplitV(x, {-1, -1}, 1); }), HasSubstr("one -1"));
  EXPECT_THAT(ErrorOf([&] { SplitV(x, {}, 1); }), HasSubstr("at least one size"));
  EXPECT_THAT(ErrorOf([] { Split(Tensor(1.0f), 1, 0); }), HasSubstr("not in [0, 0)"));
}

// TF's _SplitGrad: the pieces' gradients concatenated, zeros for a piece
// nothing used. Each eager piece's gradient is its own padded into place;
// the tape sums them.
TEST(SplitTest, GradientPutsEachPiecesGradientInPlace) {
  const Tensor x = Tensor::FromVector<double>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const Attrs middle{{"axis", int64_t{1}}, {"begin", int64_t{1}}, {"size", int64_t{2}}};
  const std::vector<Tensor> pieces = SplitV(x, {1, 2}, 1);
  const OpCall call{&kSplitOutputOp, {x}, pieces[1], middle};
  const auto grads =
      kSplitOutputOp.gradient(call, Tensor::FromVector<double>({10, 20, 30, 40}, Shape{2, 2}));
  ASSERT_TRUE(grads[0].has_value());
  EXPECT_EQ(grads[0]->shape(), (Shape{2, 3}));
  EXPECT_EQ(grads[0]->ToVector<double>(), (std::vector<double>{0, 10, 20, 0, 30, 40}));
}

TEST(SplitTest, GraphNodesRunAsEagerAndCheckTheirInputs) {
  const Tensor value = IotaInt32(Shape{3, 6});
  Graph graph;
  std::vector<Tensor> eq, var;
  {
    Graph::AsDefault in(graph);
    const Tensor x = Placeholder(DType::kInt32, Shape::Partial({Shape::kUnknownDim, 6}), "x");
    eq = Split(x, 3, 1);
    var = SplitV(x, {-1, 4}, -1);
  }
  ASSERT_EQ(eq.size(), 3u);
  ASSERT_EQ(var.size(), 2u);
  const Node& split = graph.node(graph.FindNodeIndex("split"));
  EXPECT_EQ(split.op, "Split");
  EXPECT_EQ(split.Attr<int64_t>("num_split"), 3);
  EXPECT_EQ(split.output_specs[2].shape, Shape::Partial({Shape::kUnknownDim, 2}));
  EXPECT_EQ(var[1].name(), "split_1:1");
  EXPECT_EQ(graph.node(graph.FindNodeIndex("split_1")).op, "SplitV");
  Session sess(graph);
  const std::vector<Tensor> eager_eq = Split(value, 3, 1);
  const std::vector<Tensor> eager_var = SplitV(value, {2, 4}, 1);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(sess.Run(eq[i], {{"x:0", value}}).ToVector<int32_t>(),
              eager_eq[i].ToVector<int32_t>());
  }
  for (size_t i = 0; i < 2; ++i) {
    const Tensor got = sess.Run(var[i], {{"x:0", value}});
    EXPECT_EQ(got.shape(), eager_var[i].shape());
    EXPECT_EQ(got.ToVector<int32_t>(), eager_var[i].ToVector<int32_t>());
  }
  // Nodes from a file whose sizes or num_split disagree with the value.
  Graph bad;
  const auto konst = [&](const std::string& name, const Tensor& t) {
    bad.AddNode(Node{.name = name, .op = "Const", .attrs = {{"value", t}, {"dtype", t.dtype()}}});
  };
  konst("v", value);
  konst("one", Tensor(int32_t{1}));
  konst("sizes", Tensor::Vector<int32_t>({2, 3}));
  bad.AddNode(Node{.name = "s4",
                   .op = "Split",
                   .inputs = {"one", "v"},
                   .attrs = {{"T", DType::kInt32}, {"num_split", int64_t{4}}}});
  bad.AddNode(
      Node{.name = "sv",
           .op = "SplitV",
           .inputs = {"v", "sizes", "one"},
           .attrs = {{"T", DType::kInt32}, {"Tlen", DType::kInt32}, {"num_split", int64_t{2}}}});
  bad.AddNode(
      Node{.name = "sv3",
           .op = "SplitV",
           .inputs = {"v", "sizes", "one"},
           .attrs = {{"T", DType::kInt32}, {"Tlen", DType::kInt32}, {"num_split", int64_t{3}}}});
  Session bad_sess(bad);
  EXPECT_THAT(ErrorOf([&] { bad_sess.Run("s4:0"); }),
              AllOf(HasSubstr("node 's4' (Split)"), HasSubstr("(size = 6) and num_split 4")));
  EXPECT_THAT(ErrorOf([&] { bad_sess.Run("sv:0"); }),
              AllOf(HasSubstr("node 'sv' (SplitV)"), HasSubstr("add up to 5, expected 6")));
  EXPECT_THAT(ErrorOf([&] { bad_sess.Run("sv3:0"); }),
              AllOf(HasSubstr("node 'sv3'"), HasSubstr("2 entries, expected num_split = 3")));
}

}  // namespace
}  // namespace eager
