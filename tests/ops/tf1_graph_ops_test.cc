// Ops of TF's own TF1 graphs that the op-coverage report listed (issue 39):
// Reciprocal, Log1p, DivNoNan, L2Loss, All/Any against hand-computed values
// and bad inputs; Assert and IsVariableInitialized in a Session.
// TF 2.21 judges them too (tests/tf_graphs/layer_ops_test.py).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ops/binary_ops.h"
#include "ops/execute.h"
#include "ops/index_ops.h"
#include "ops/logging_ops.h"
#include "ops/nn_ops.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"

namespace eager {
namespace {

using ::testing::HasSubstr;

TEST(Tf1GraphOpsTest, ReciprocalLog1pDivNoNan) {
  EXPECT_EQ(Reciprocal(Tensor::Vector<float>({2, -4, 0.5f})).ToVector<float>(),
            (std::vector<float>{0.5f, -0.25f, 2}));
  EXPECT_EQ(ReciprocalGrad(Tensor::Vector<double>({2, -3}), Tensor::Vector<double>({1, 2}))
                .ToVector<double>(),
            (std::vector<double>{-4, -18}));  // -dy * y * y
  const auto l = Log1p(Tensor::Vector<double>({0, M_E - 1, 1e-20})).ToVector<double>();
  EXPECT_EQ(l[0], 0.0);
  EXPECT_NEAR(l[1], 1.0, 1e-15);
  EXPECT_EQ(l[2], 1e-20);  // log1p keeps what log(1 + x) would round to 0
  const float nan = std::nanf("");
  EXPECT_EQ(DivNoNan(Tensor::Vector<float>({1, nan, 3, 5}), Tensor::Vector<float>({0, 0, 2, -0.0f}))
                .ToVector<float>(),
            (std::vector<float>{0, 0, 1.5f, 0}));
  // Broadcasting, as the other binary ops.
  EXPECT_EQ(DivNoNan(Tensor::Matrix<float>({{2, 4}, {6, 8}}), Tensor::Vector<float>({2, 0}))
                .ToVector<float>(),
            (std::vector<float>{1, 0, 3, 0}));
}

TEST(Tf1GraphOpsTest, L2LossIsHalfTheSumOfSquares) {
  const Tensor loss = L2Loss(Tensor::Matrix<double>({{1, -2}, {3, 0.5}}));
  EXPECT_EQ(loss.rank(), 0);
  EXPECT_EQ(loss.scalar<double>(), (1 + 4 + 9 + 0.25) / 2);
  EXPECT_EQ(L2Loss(Tensor::Zeros(Shape{0, 3})).scalar<float>(), 0.0f);
}

TEST(Tf1GraphOpsTest, AllAndAnyOverAxes) {
  const Tensor b = Tensor::FromVector<bool>({true, false, true, true, true, true}, Shape{2, 3});
  EXPECT_EQ(ReduceAll(b, {1}).ToVector<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ(ReduceAll(b, {0}).ToVector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(ReduceAny(b, {0}).ToVector<bool>(), (std::vector<bool>{true, true, true}));
  EXPECT_FALSE(ReduceAll(b).scalar<bool>());
  EXPECT_TRUE(ReduceAny(b).scalar<bool>());
  const Tensor f = Tensor::FromVector<bool>({false, false, false, false}, Shape{2, 2});
  EXPECT_FALSE(ReduceAny(f, {-1}, true).ToVector<bool>()[1]);
  EXPECT_EQ(ReduceAny(f, {-1}, true).shape(), (Shape{2, 1}));
  // An empty group: All is true, Any false (the byte identities must not leak).
  const Tensor empty = Tensor::Zeros(Shape{0, 2}, DType::kBool);
  EXPECT_EQ(ReduceAll(empty, {0}).ToVector<bool>(), (std::vector<bool>{true, true}));
  EXPECT_EQ(ReduceAny(empty, {0}).ToVector<bool>(), (std::vector<bool>{false, false}));
  const Tensor all = ReduceAll(empty, {0});
  for (std::byte byte : all.bytes()) EXPECT_EQ(byte, std::byte{1});
}

TEST(Tf1GraphOpsTest, LegacyGatherTakesRowsOfAxisZero) {
  const Tensor params = Tensor::Matrix<float>({{1, 2}, {3, 4}, {5, 6}});
  const Tensor got = Execute(kLegacyGatherOp, {params, Tensor::Vector<int32_t>({2, 0, 2})});
  EXPECT_EQ(got.ToVector<float>(), (std::vector<float>{5, 6, 1, 2, 5, 6}));
  EXPECT_THROW(Execute(kLegacyGatherOp, {params, Tensor::Vector<int32_t>({3})}),
               InvalidArgumentError);
  EXPECT_THROW(Execute(kLegacyGatherOp, {params, Tensor::Vector<int32_t>({-1})}),
               InvalidArgumentError);
  EXPECT_THROW(Execute(kLegacyGatherOp, {params, Tensor::Vector<float>({0})}),
               InvalidArgumentError);
}

TEST(Tf1GraphOpsTest, BadInputsAreRefused) {
  const Tensor ints = Tensor::Vector<int32_t>({1, 2});
  EXPECT_THROW(Reciprocal(ints), InvalidArgumentError);
  EXPECT_THROW(Log1p(ints), InvalidArgumentError);
  EXPECT_THROW(L2Loss(ints), InvalidArgumentError);
  EXPECT_THROW(DivNoNan(ints, ints), InvalidArgumentError);
  EXPECT_THROW(DivNoNan(Tensor::Vector<float>({1, 2}), Tensor::Vector<double>({1, 2})),
               InvalidArgumentError);
  EXPECT_THROW(DivNoNan(Tensor::Vector<float>({1, 2}), Tensor::Vector<float>({1, 2, 3})),
               InvalidArgumentError);
  EXPECT_THROW(ReduceAll(Tensor::Vector<float>({1, 2})), InvalidArgumentError);
  EXPECT_THROW(ReduceAny(Tensor::Vector<bool>({true}), {1}), InvalidArgumentError);
  EXPECT_THROW(ReduceAll(Tensor::Vector<bool>({true}), {0, 0}), InvalidArgumentError);
}

// ---- Graph-only: Assert, IsVariableInitialized ------------------------------------------

void Add(Graph& g, std::string name, std::string op, std::vector<std::string> inputs,
         Attrs attrs = {}) {
  Node node{.name = std::move(name), .op = std::move(op), .inputs = std::move(inputs)};
  node.attrs = std::move(attrs);
  g.AddNode(std::move(node));
}

void Const(Graph& g, std::string name, const Tensor& value) {
  Add(g, std::move(name), "Const", {}, Attrs().Set("dtype", value.dtype()).Set("value", value));
}

// assert: Assert(cond, [a string, ints [2, 3], a float scalar]) with summarize 4.
void AssertGraph(Graph& g, const Tensor& cond) {
  Const(g, "cond", cond);
  Const(g, "what", Tensor(std::string("x\t> \"0\"")));
  Const(g, "ints", Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, Shape{2, 3}));
  Const(g, "half", Tensor(0.1f));
  Add(g, "assert", "Assert", {"cond", "what", "ints", "half"},
      Attrs()
          .Set("T", std::vector<DType>{DType::kString, DType::kInt32, DType::kFloat32})
          .Set("summarize", int64_t{4}));
  Const(g, "out", Tensor(1.0f));
  Add(g, "after", "Identity", {"out", "^assert"}, Attrs().Set("T", DType::kFloat32));
}

TEST(Tf1GraphOpsTest, AssertPassesOnTrue) {
  Graph g;
  AssertGraph(g, Tensor(true));
  Session sess(g);
  EXPECT_EQ(sess.Run("after:0").scalar<float>(), 1.0f);
}

TEST(Tf1GraphOpsTest, AssertFailsWithTfsText) {
  Graph g;
  AssertGraph(g, Tensor::Vector<bool>({false}));  // TF's legacy scalar: a vector of one
  Session sess(g);
  try {
    sess.Run("after:0");
    FAIL() << "expected the assertion to fail";
  } catch (const InvalidArgumentError& e) {
    // TF's Tensor::SummarizeValue: rows in brackets, "..." past summarize.
    EXPECT_THAT(e.what(),
                HasSubstr("assertion failed: [x\\t> \\\"0\\\"] [[1 2 3][4...]...] [0.1]"));
    EXPECT_THAT(e.what(), HasSubstr("node assert"));
  }
}

TEST(Tf1GraphOpsTest, AssertRefusesANonScalarOrNonBoolCondition) {
  for (const Tensor& cond :
       {Tensor::Vector<bool>({true, true}), Tensor(1.0f), Tensor::Zeros(Shape{0}, DType::kBool)}) {
    Graph g;
    AssertGraph(g, cond);
    Session sess(g);
    try {
      sess.Run("after:0");
      FAIL() << "expected a refused condition " << cond;
    } catch (const InvalidArgumentError& e) {
      // A float is refused by Assert's signature before its kernel runs.
      EXPECT_THAT(e.what(), HasSubstr(cond.dtype() == DType::kBool
                                          ? "'assert' (Assert): In[0] should be a scalar bool"
                                          : "op Assert expects bool"));
    }
  }
}

TEST(Tf1GraphOpsTest, SummarizeValueAsTf) {
  EXPECT_EQ(SummarizeValue(Tensor::FromVector<int64_t>({1, 2, 3, 4, 5}), 3), "1 2 3...");
  EXPECT_EQ(SummarizeValue(Tensor::FromVector<int64_t>({1, 2}), -1), "1 2");
  EXPECT_EQ(SummarizeValue(Tensor::Vector<bool>({true, false}), 3), "1 0");
  EXPECT_EQ(SummarizeValue(Tensor::Vector<double>({0.1, 1.0 / 3}), 3), "0.1 0.333333333333333315");
  EXPECT_EQ(SummarizeValue(Tensor::Zeros(Shape{2, 0}), 3), "");  // TF 2.21 prints [] for it
  EXPECT_EQ(SummarizeValue(Tensor::FromVector<int32_t>({1, 2, 3, 4}, Shape{2, 2}), 3),
            "[1 2][3...]...");
}

// TF1's FusedBatchNorm: V3 without reserve_space_3. x [2, 1, 1, 1] = {1, 3}:
// batch mean 2, variance 1 (the output's batch_variance is Bessel's, 2).
TEST(Tf1GraphOpsTest, FusedBatchNormV1HasFiveOutputs) {
  Graph g;
  Const(g, "x", Tensor::FromVector<float>({1, 3}, Shape{2, 1, 1, 1}));
  Const(g, "scale", Tensor::Vector<float>({2}));
  Const(g, "offset", Tensor::Vector<float>({1}));
  Const(g, "empty", Tensor::Zeros(Shape{0}));
  Add(g, "bn", "FusedBatchNorm", {"x", "scale", "offset", "empty", "empty"},
      Attrs().Set("T", DType::kFloat32).Set("epsilon", 0.0).Set("is_training", true));
  Session sess(g);
  const auto out = sess.Run(std::vector<Fetch>{"bn:0", "bn:1", "bn:2", "bn:4"});
  EXPECT_EQ(out[0]->ToVector<float>(), (std::vector<float>{-1, 3}));
  EXPECT_EQ(out[1]->ToVector<float>(), (std::vector<float>{2}));
  EXPECT_EQ(out[2]->ToVector<float>(), (std::vector<float>{2}));
  EXPECT_EQ(out[3]->ToVector<float>(), (std::vector<float>{1}));
  EXPECT_ANY_THROW(sess.Run("bn:5"));  // no reserve_space_3
}

TEST(Tf1GraphOpsTest, FusedBatchNormV1RefusesMismatchedChannels) {
  Graph g;
  Const(g, "x", Tensor::Zeros(Shape{2, 1, 1, 3}));
  Const(g, "c", Tensor::Vector<float>({1, 1}));
  Add(g, "bn", "FusedBatchNorm", {"x", "c", "c", "c", "c"},
      Attrs().Set("T", DType::kFloat32).Set("is_training", false));
  Session sess(g);
  EXPECT_THROW(sess.Run("bn:0"), InvalidArgumentError);
}

// Where: row-major coordinates of the nonzero elements (NaN is nonzero,
// -0.0 is zero).
TEST(Tf1GraphOpsTest, WhereGivesCoordinatesOfNonzeros) {
  Graph g;
  Const(g, "x", Tensor::FromVector<float>({0, 1, -0.0f, std::nanf(""), 0, 2}, Shape{2, 3}));
  Add(g, "w", "Where", {"x"}, Attrs().Set("T", DType::kFloat32));
  Const(g, "none", Tensor::Zeros(Shape{4}, DType::kBool));
  Add(g, "w_none", "Where", {"none"}, Attrs().Set("T", DType::kBool));
  Const(g, "scalar", Tensor(true));
  Add(g, "w_scalar", "Where", {"scalar"}, Attrs().Set("T", DType::kBool));
  Session sess(g);
  const Tensor w = sess.Run("w:0");
  EXPECT_EQ(w.shape(), (Shape{3, 2}));
  EXPECT_EQ(w.ToVector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 0, 1, 2}));
  EXPECT_EQ(sess.Run("w_none:0").shape(), (Shape{0, 1}));
  EXPECT_THROW(sess.Run("w_scalar:0"), InvalidArgumentError);
}

// Two equal logits: loss log 2 for a one-hot label, backprop softmax - labels.
TEST(Tf1GraphOpsTest, SoftmaxCrossEntropyWithLogits) {
  Graph g;
  Const(g, "x", Tensor::Matrix<double>({{0, 0}, {std::log(3.0), 0}}));
  Const(g, "labels", Tensor::Matrix<double>({{1, 0}}));  // broadcast over the batch
  Add(g, "xent", "SoftmaxCrossEntropyWithLogits", {"x", "labels"},
      Attrs().Set("T", DType::kFloat64));
  Const(g, "vec", Tensor::Vector<double>({1, 2}));
  Add(g, "bad_rank", "SoftmaxCrossEntropyWithLogits", {"vec", "vec"},
      Attrs().Set("T", DType::kFloat64));
  Const(g, "three", Tensor::Matrix<double>({{1, 0, 0}}));
  Add(g, "bad_classes", "SoftmaxCrossEntropyWithLogits", {"x", "three"},
      Attrs().Set("T", DType::kFloat64));
  Session sess(g);
  const auto out = sess.Run(std::vector<Fetch>{"xent:0", "xent:1"});
  const auto loss = out[0]->ToVector<double>();
  EXPECT_NEAR(loss[0], std::log(2.0), 1e-15);
  EXPECT_NEAR(loss[1], std::log(4.0 / 3.0), 1e-15);  // -log(3/4)
  const auto backprop = out[1]->ToVector<double>();
  const std::vector<double> want = {-0.5, 0.5, -0.25, 0.25};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(backprop[i], want[i], 1e-15) << i;
  EXPECT_THROW(sess.Run("bad_rank:0"), InvalidArgumentError);
  EXPECT_THROW(sess.Run("bad_classes:0"), InvalidArgumentError);
}

TEST(Tf1GraphOpsTest, IsVariableInitializedWantsAReference) {
  Graph g;
  Const(g, "c", Tensor(1.0f));
  Add(g, "init", "IsVariableInitialized", {"c"}, Attrs().Set("dtype", DType::kFloat32));
  EXPECT_ANY_THROW({
    Session sess(g);
    sess.Run("init:0");
  });
}

}  // namespace
}  // namespace eager
