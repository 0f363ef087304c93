// The ops TF's gradients() writes (ops/gradient_helper_ops.h): BiasAddGrad,
// Rank and InvertPermutation eagerly with values by hand, ConcatOffset and
// ShapeN as nodes a Session runs, and their errors. op_gradient_test.cc
// checks BiasAddGrad's gradient by central differences;
// tests/tf_graphs/layer_ops_test.py runs TF's gradient graphs with them.

#include "ops/gradient_helper_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ops/session.h"
#include "runtime/graph.h"
#include "tests/testing/op_errors.h"

namespace eager {
namespace {

using ::eager::testing::ErrorOf;

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(GradientHelperOpsTest, BiasAddGradSumsAllButTheChannels) {
  const Tensor g =
      Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, Shape{2, 2, 3});
  const Tensor b = BiasAddGrad(g);
  EXPECT_EQ(b.shape(), (Shape{3}));
  EXPECT_EQ(b.ToVector<float>(), (std::vector<float>{22, 26, 30}));
  EXPECT_EQ(BiasAddGrad(Tensor::FromVector<int32_t>({1, 2, 3, 4}, Shape{2, 2})).ToVector<int32_t>(),
            (std::vector<int32_t>{4, 6}));
  EXPECT_THAT(ErrorOf([] {
                BiasAddGrad(Tensor::Vector<float>({1, 2}));
              }),
              AllOf(HasSubstr("BiasAddGrad"), HasSubstr("at least 2-D"), HasSubstr("[2]")));
  // Its gradient: the [C] gradient broadcast back over the other axes.
  const OpCall call{&kBiasAddGradOp, {g}, b, {}};
  const auto grads = kBiasAddGradOp.gradient(call, Tensor::Vector<float>({1, -1, 2}));
  ASSERT_TRUE(grads[0].has_value());
  EXPECT_EQ(grads[0]->shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(grads[0]->ToVector<float>(),
            (std::vector<float>{1, -1, 2, 1, -1, 2, 1, -1, 2, 1, -1, 2}));
}

TEST(GradientHelperOpsTest, RankAndInvertPermutation) {
  EXPECT_EQ(Rank(Tensor::Zeros(Shape{2, 0, 3}, DType::kFloat32)).ToVector<int32_t>(),
            (std::vector<int32_t>{3}));
  EXPECT_EQ(Rank(Tensor(1.0)).ToVector<int32_t>(), (std::vector<int32_t>{0}));
  EXPECT_EQ(InvertPermutation(Tensor::Vector<int32_t>({2, 0, 3, 1})).ToVector<int32_t>(),
            (std::vector<int32_t>{1, 3, 0, 2}));
  EXPECT_EQ(InvertPermutation(Tensor::Vector<int64_t>({1, 0})).ToVector<int64_t>(),
            (std::vector<int64_t>{1, 0}));
  EXPECT_THAT(ErrorOf([] {
                InvertPermutation(Tensor::Vector<int32_t>({0, 0}));
              }),
              AllOf(HasSubstr("x[1] = 0 repeats"), HasSubstr("permutation of 0 .. 1")));
  EXPECT_THAT(ErrorOf([] {
                InvertPermutation(Tensor::Vector<int32_t>({0, 2}));
              }),
              HasSubstr("x[1] = 2 is not in [0, 2)"));
  EXPECT_THAT(ErrorOf([] { InvertPermutation(Tensor::Vector<float>({0})); }), HasSubstr("x"));
}

// A graph of Consts and one node `op` over inputs `inputs`.
struct OneNode {
  Graph graph;
  void Const(const std::string& name, const Tensor& t) {
    graph.AddNode(Node{.name = name, .op = "Const", .attrs = {{"value", t}, {"dtype", t.dtype()}}});
  }
};

TEST(GradientHelperOpsTest, ConcatOffsetGivesEachInputsStart) {
  OneNode g;
  g.Const("dim", Tensor(int32_t{1}));
  g.Const("neg", Tensor(int32_t{-2}));
  g.Const("far", Tensor(int32_t{3}));
  g.Const("a", Tensor::Vector<int32_t>({2, 3, 5}));
  g.Const("b", Tensor::Vector<int32_t>({2, 4, 5}));
  g.Const("c", Tensor::Vector<int32_t>({2, 1, 5}));
  g.Const("bad", Tensor::Vector<int32_t>({3, 4, 5}));
  g.Const("l", Tensor::Vector<int64_t>({2, 3}));
  g.Const("m", Tensor::Vector<int64_t>({2, 7}));
  const Attrs n3{{"N", int64_t{3}}, {"shape_type", DType::kInt32}};
  g.graph.AddNode(
      Node{.name = "off", .op = "ConcatOffset", .inputs = {"dim", "a", "b", "c"}, .attrs = n3});
  g.graph.AddNode(
      Node{.name = "offneg", .op = "ConcatOffset", .inputs = {"neg", "a", "b", "c"}, .attrs = n3});
  g.graph.AddNode(Node{.name = "off64",
                       .op = "ConcatOffset",
                       .inputs = {"far", "l", "m"},
                       .attrs = {{"N", int64_t{2}}, {"shape_type", DType::kInt64}}});
  g.graph.AddNode(Node{
      .name = "mismatch", .op = "ConcatOffset", .inputs = {"dim", "a", "bad", "c"}, .attrs = n3});
  Session sess(g.graph);
  EXPECT_EQ(sess.Run("off:0").ToVector<int32_t>(), (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(sess.Run("off:1").ToVector<int32_t>(), (std::vector<int32_t>{0, 3, 0}));
  EXPECT_EQ(sess.Run("off:2").ToVector<int32_t>(), (std::vector<int32_t>{0, 7, 0}));
  EXPECT_EQ(sess.Run("offneg:2").ToVector<int32_t>(), (std::vector<int32_t>{0, 7, 0}));
  std::string error;
  try {
    sess.Run("off64:1");
  } catch (const InvalidArgumentError& e) {
    error = e.what();
  }
  EXPECT_THAT(error, AllOf(HasSubstr("node 'off64' (ConcatOffset)"),
                           HasSubstr("Concat dim is out of range: 3 vs. 2")));
  error.clear();
  try {
    sess.Run("mismatch:0");
  } catch (const InvalidArgumentError& e) {
    error = e.what();
  }
  EXPECT_THAT(error, AllOf(HasSubstr("node 'mismatch'"), HasSubstr("except 1 must match"),
                           HasSubstr("Input 1 has shape [3,4,5]")));
}

TEST(GradientHelperOpsTest, ShapeNGivesEachInputsShape) {
  OneNode g;
  g.Const("x", Tensor::Zeros(Shape{2, 3}, DType::kFloat32));
  g.Const("y", Tensor::Zeros(Shape{4}, DType::kFloat32));
  g.graph.AddNode(
      Node{.name = "s",
           .op = "ShapeN",
           .inputs = {"x", "y"},
           .attrs = {{"N", int64_t{2}}, {"T", DType::kFloat32}, {"out_type", DType::kInt64}}});
  Session sess(g.graph);
  EXPECT_EQ(sess.Run("s:0").ToVector<int64_t>(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(sess.Run("s:1").ToVector<int64_t>(), (std::vector<int64_t>{4}));
}

}  // namespace
}  // namespace eager
