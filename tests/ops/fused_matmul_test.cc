// FusedMatMul (ops/fused_matmul.h): bit for bit the unfused MatMul, AddV2 and
// Relu, on any thread count; its errors. Its gradient against finite
// differences is in op_gradient_test.cc, against the unfused ops' gradients
// through a tape in tests/autodiff/dense_fused_test.cc.

#include "ops/fused_matmul.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/matmul.h"
#include "ops/random_generator.h"
#include "ops/session.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/threads.h"
#include "tests/testing/tensor_compare.h"

namespace eager {
namespace {

using testing::SameBits;

class FusedMatMulTest : public ::testing::Test {
 protected:
  void TearDown() override { SetNumThreads(saved_); }
  const int saved_ = GetNumThreads();
};

TEST_F(FusedMatMulTest, EqualsMatMulAddReluBitForBit) {
  struct Case {
    int64_t m, n, k;
    bool ta, tb;
  };
  // Small products (one GEMM), the MLP's layers, and products that MatMul
  // cuts into row or column blocks on two threads (ops/internal/gemm.h).
  const Case cases[] = {
      {3, 5, 4, false, false},     {2, 7, 3, true, false},        {4, 3, 6, false, true},
      {5, 6, 2, true, true},       {64, 256, 784, false, false},  {256, 128, 256, false, false},
      {64, 10, 128, false, false}, {300, 130, 200, false, false}, {520, 96, 300, true, false},
      {96, 520, 300, false, true}, {7, 9, 0, false, false}};
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (const Case& c : cases) {
      const Tensor a = RandomUniform(c.ta ? Shape{c.k, c.m} : Shape{c.m, c.k}, 1, -1, 1, dtype);
      const Tensor b = RandomUniform(c.tb ? Shape{c.n, c.k} : Shape{c.k, c.n}, 2, -1, 1, dtype);
      const Tensor bias = RandomUniform(Shape{c.n}, 3, -1, 1, dtype);
      for (bool relu : {false, true}) {
        for (int threads : {1, 2, 3}) {
          SetNumThreads(threads);
          const Tensor product = Add(MatMul(a, b, c.ta, c.tb), bias);
          const Tensor want = relu ? Relu(product) : product;
          const Tensor got = FusedMatMul(a, b, bias, relu, c.ta, c.tb);
          EXPECT_TRUE(SameBits(got, want))
              << dtype << " " << c.m << "x" << c.n << "x" << c.k << " ta=" << c.ta << " tb=" << c.tb
              << " relu=" << relu << " threads=" << threads;
        }
      }
    }
  }
}

TEST_F(FusedMatMulTest, ReluZeroesExactlyTheNegativeSums) {
  // [[1, -2], [3, 4]] @ I + [0.5, 1] = [[1.5, -1], [3.5, 5]].
  const Tensor a = Tensor::FromVector<float>({1, -2, 3, 4}, Shape{2, 2});
  const Tensor eye = Tensor::FromVector<float>({1, 0, 0, 1}, Shape{2, 2});
  const Tensor bias = Tensor::FromVector<float>({0.5f, 1}, Shape{2});
  EXPECT_EQ(FusedMatMul(a, eye, bias, false).ToVector<float>(),
            (std::vector<float>{1.5f, -1, 3.5f, 5}));
  EXPECT_EQ(FusedMatMul(a, eye, bias, true).ToVector<float>(),
            (std::vector<float>{1.5f, 0, 3.5f, 5}));
}

TEST_F(FusedMatMulTest, InAGraphAddsTheUnfusedNodes) {
  const Tensor a = RandomUniform(Shape{4, 3}, 4, -1, 1);
  const Tensor b = RandomUniform(Shape{3, 5}, 5, -1, 1);
  const Tensor bias = RandomUniform(Shape{5}, 6, -1, 1);
  Graph graph;
  Tensor y;
  {
    Graph::AsDefault in(graph);
    y = FusedMatMul(Constant(a), Constant(b), Constant(bias), true);
  }
  std::vector<std::string> ops;
  ops.reserve(static_cast<size_t>(graph.num_nodes()));
  for (int i = 0; i < graph.num_nodes(); ++i) ops.push_back(graph.node(i).op);
  EXPECT_EQ(ops, (std::vector<std::string>{"Const", "Const", "Const", "MatMul", "AddV2", "Relu"}));
  EXPECT_TRUE(SameBits(Session(graph).Run(y), FusedMatMul(a, b, bias, true)));
}

TEST_F(FusedMatMulTest, RejectsABiasThatIsNotAsLongAsTheColumns) {
  const Tensor a = Tensor::Zeros(Shape{2, 3});
  const Tensor b = Tensor::Zeros(Shape{3, 4});
  try {
    FusedMatMul(a, b, Tensor::Zeros(Shape{3}), true);
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("_FusedMatMul"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("got bias [3] for a product of shape [2,4]"));
  }
  EXPECT_THROW(FusedMatMul(a, b, Tensor::Zeros(Shape{1, 4}), true), InvalidArgumentError);
  EXPECT_THROW(FusedMatMul(a, b, Tensor::Zeros(Shape{4}, DType::kFloat64), true),
               InvalidArgumentError);
  // MatMul's own checks, and float dtypes only.
  EXPECT_THROW(FusedMatMul(a, Tensor::Zeros(Shape{2, 4}), Tensor::Zeros(Shape{4}), true),
               InvalidArgumentError);
  EXPECT_THROW(FusedMatMul(Tensor::Zeros(Shape{2, 3}, DType::kInt32),
                           Tensor::Zeros(Shape{3, 4}, DType::kInt32),
                           Tensor::Zeros(Shape{4}, DType::kInt32), false),
               InvalidArgumentError);
}

}  // namespace
}  // namespace eager
