// A Session fuses Conv2D/MatMul + bias (+ activation) chains into one
// kernel call when it plans a graph (ops/internal/graph_fusion.h): the fused
// plan computes what the unfused one computes (SessionOptions::fuse_ops =
// false), fetching an intermediate or reading it twice keeps the nodes
// apart, and Session::last_run_fused_nodes says what ran fused.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/binary_ops.h"
#include "ops/conv_ops.h"
#include "ops/graph_ops.h"
#include "ops/matmul.h"
#include "ops/nn_ops.h"
#include "ops/random_generator.h"
#include "ops/session.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"

namespace eager {
namespace {

using ::testing::HasSubstr;
using Activation = std::function<Tensor(const Tensor&)>;

struct Act {
  std::string name;
  Activation apply;  // empty: no activation
};

std::vector<Act> Activations() {
  return {{"none", nullptr},
          {"Relu", [](const Tensor& t) { return Relu(t); }},
          {"Relu6", [](const Tensor& t) { return Relu6(t); }},
          {"Elu", [](const Tensor& t) { return Elu(t); }},
          {"LeakyRelu", [](const Tensor& t) { return LeakyRelu(t, 0.1); }}};
}

// The values of `fetches` from a fused and from an unfused Session, and the
// fused Session's count of fused nodes.
struct Both {
  std::vector<Tensor> fused, unfused;
  int64_t fused_nodes = 0, unfused_nodes = 0;
};

Both RunBoth(Graph& graph, const std::vector<Fetch>& fetches, const Feeds& feeds) {
  Both out;
  Session fused(graph);
  SessionOptions off;
  off.fuse_ops = false;
  Session unfused(graph, off);
  for (int run = 0; run < 2; ++run) {  // the second run reuses the plan
    out.fused.clear();
    out.unfused.clear();
    for (auto& t : fused.Run(fetches, feeds)) out.fused.push_back(*t);
    for (auto& t : unfused.Run(fetches, feeds)) out.unfused.push_back(*t);
  }
  out.fused_nodes = fused.last_run_fused_nodes();
  out.unfused_nodes = unfused.last_run_fused_nodes();
  return out;
}

template <typename T>
void ExpectClose(const Tensor& a, const Tensor& b, double tolerance, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  const auto x = a.data<T>();
  const auto y = b.data<T>();
  for (size_t i = 0; i < x.size(); ++i) {
    if (tolerance == 0) {
      using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
      ASSERT_EQ(std::bit_cast<Bits>(x[i]), std::bit_cast<Bits>(y[i]))
          << what << " element " << i << ": " << x[i] << " vs " << y[i];
    } else {
      ASSERT_NEAR(x[i], y[i], tolerance * (1 + std::abs(static_cast<double>(y[i]))))
          << what << " element " << i;
    }
  }
}

// x [2, 7, 7, 3] * filter [3, 3, 3, 5] (SAME, stride 2) + bias [5].
struct ConvGraph {
  ConvGraph(DType dtype, bool bias_add, const Activation& act) {
    Graph::AsDefault in(graph);
    x = Placeholder(dtype, Shape::Partial({-1, 7, 7, -1}), "x");
    const Tensor w = RandomUniform(Shape{3, 3, 3, 5}, 1, -0.5, 0.5, dtype);
    const Tensor b = RandomUniform(Shape{5}, 2, -1, 1, dtype);
    conv = Conv2D(x, w, {.strides = {1, 2, 2, 1}, .padding = "SAME"});
    biased = bias_add ? BiasAdd(conv, b) : Add(b, conv);
    y = act ? act(biased) : biased;
    value = RandomUniform(Shape{2, 7, 7, 3}, 3, -2, 2, dtype);
  }
  Graph graph;
  Tensor x, conv, biased, y, value;
};

// x [4, 6] @ w [6, 3] (or w^T of [3, 6]) + bias [3].
struct DenseGraph {
  DenseGraph(DType dtype, bool bias_add, const Activation& act, bool transpose_b = false) {
    Graph::AsDefault in(graph);
    x = Placeholder(dtype, Shape::Partial({-1, 6}), "x");
    const Tensor w = RandomUniform(transpose_b ? Shape{3, 6} : Shape{6, 3}, 4, -1, 1, dtype);
    const Tensor b = RandomUniform(Shape{3}, 5, -1, 1, dtype);
    product = MatMul(x, w, false, transpose_b);
    biased = bias_add ? BiasAdd(product, b) : Add(product, b);
    y = act ? act(biased) : biased;
    value = RandomUniform(Shape{4, 6}, 6, -2, 2, dtype);
  }
  Graph graph;
  Tensor x, product, biased, y, value;
};

TEST(SessionFusionTest, ConvBiasActivationRunsFusedWithTheUnfusedValues) {
  for (const DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (const bool bias_add : {true, false}) {
      for (const Act& act : Activations()) {
        const std::string what = StrCat(dtype, bias_add ? " BiasAdd " : " Add ", act.name);
        ConvGraph g(dtype, bias_add, act.apply);
        const Both r = RunBoth(g.graph, {g.y}, {{g.x, g.value}});
        EXPECT_EQ(r.fused_nodes, act.apply ? 3 : 2) << what;
        EXPECT_EQ(r.unfused_nodes, 0) << what;
        // oneDNN adds the bias inside the convolution: float32 rounding.
        if (dtype == DType::kFloat32) {
          ExpectClose<float>(r.fused[0], r.unfused[0], 1e-6, what);
        } else {
          ExpectClose<double>(r.fused[0], r.unfused[0], 1e-15, what);
        }
      }
    }
  }
}

TEST(SessionFusionTest, MatMulBiasActivationRunsFusedBitForBit) {
  for (const DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (const bool bias_add : {true, false}) {
      for (const bool transpose_b : {false, true}) {
        for (const Act& act : Activations()) {
          const std::string what = StrCat(dtype, bias_add ? " BiasAdd " : " Add ", act.name,
                                          transpose_b ? " transpose_b" : "");
          DenseGraph g(dtype, bias_add, act.apply, transpose_b);
          const Both r = RunBoth(g.graph, {g.y}, {{g.x, g.value}});
          EXPECT_EQ(r.fused_nodes, act.apply ? 3 : 2) << what;
          if (dtype == DType::kFloat32) {
            ExpectClose<float>(r.fused[0], r.unfused[0], 0, what);
          } else {
            ExpectClose<double>(r.fused[0], r.unfused[0], 0, what);
          }
        }
      }
    }
  }
}

TEST(SessionFusionTest, FetchingTheProductKeepsTheChainApart) {
  ConvGraph g(DType::kFloat32, true, [](const Tensor& t) { return Elu(t); });
  const Both r = RunBoth(g.graph, {g.conv, g.y}, {{g.x, g.value}});
  EXPECT_EQ(r.fused_nodes, 0);
  ExpectClose<float>(r.fused[0], r.unfused[0], 0, "conv");
  ExpectClose<float>(r.fused[1], r.unfused[1], 0, "y");
}

TEST(SessionFusionTest, FetchingTheBiasSumLeavesTheActivationOut) {
  DenseGraph g(DType::kFloat32, true, [](const Tensor& t) { return Relu(t); });
  const Both r = RunBoth(g.graph, {g.biased, g.y}, {{g.x, g.value}});
  EXPECT_EQ(r.fused_nodes, 2);  // MatMul + BiasAdd; Relu alone
  ExpectClose<float>(r.fused[0], r.unfused[0], 0, "biased");
  ExpectClose<float>(r.fused[1], r.unfused[1], 0, "y");
}

TEST(SessionFusionTest, AProductReadTwiceIsNotFused) {
  Graph graph;
  Tensor x, y;
  {
    Graph::AsDefault in(graph);
    x = Placeholder(DType::kFloat32, Shape{2, 2}, "x");
    const Tensor p = MatMul(x, Tensor::Matrix<float>({{1, 2}, {3, 4}}));
    y = Add(Relu(Add(p, Tensor::Vector<float>({0.5f, -8}))), p);
  }
  const Both r = RunBoth(graph, {y}, {{x, Tensor::Matrix<float>({{1, -1}, {2, 0.5f}})}});
  EXPECT_EQ(r.fused_nodes, 0);
  ExpectClose<float>(r.fused[0], r.unfused[0], 0, "y");
}

TEST(SessionFusionTest, AControlDependencyOnTheProductKeepsItApart) {
  Graph graph;
  Tensor x, y;
  {
    Graph::AsDefault in(graph);
    x = Placeholder(DType::kFloat32, Shape{1, 2}, "x");
    const Tensor p = MatMul(x, Tensor::Matrix<float>({{1, 2}, {3, 4}}));
    Tensor side;
    {
      Graph::ControlDependencies deps(graph, {graph.OperationOf(p)});
      side = Neg(x);
    }
    y = Add(Relu(BiasAdd(p, Tensor::Vector<float>({0.5f, -8}))), side);
  }
  const Both r = RunBoth(graph, {y}, {{x, Tensor::Matrix<float>({{1, -1}})}});
  EXPECT_EQ(r.fused_nodes, 0);
  ExpectClose<float>(r.fused[0], r.unfused[0], 0, "y");
}

TEST(SessionFusionTest, AnAddOfNoBiasVectorRunsTheNodesOneByOne) {
  // Add(product, [[1], [2]]) broadcasts over columns: not a bias. Shapes
  // unknown when planned, so it is found when the step runs.
  Graph graph;
  Tensor x, b, y;
  {
    Graph::AsDefault in(graph);
    x = Placeholder(DType::kFloat32, Shape{2, 2}, "x");
    b = Placeholder(DType::kFloat32, Shape::UnknownRank(), "b");
    y = Relu(Add(MatMul(x, Tensor::Matrix<float>({{1, 2}, {3, 4}})), b));
  }
  const Feeds feeds = {{x, Tensor::Matrix<float>({{1, -1}, {2, 0.5f}})},
                       {b, Tensor::Matrix<float>({{1}, {-20}})}};
  const Both r = RunBoth(graph, {y}, feeds);
  EXPECT_EQ(r.fused_nodes, 0);
  ExpectClose<float>(r.fused[0], r.unfused[0], 0, "y");
  EXPECT_EQ(r.fused[0].shape(), (Shape{2, 2}));
}

TEST(SessionFusionTest, AKernelErrorNamesTheNodeOfTheChainThatFailed) {
  // Feeding x of 4 channels to a 3-channel filter: Conv2D's error, naming it.
  ConvGraph g(DType::kFloat32, true, [](const Tensor& t) { return Relu(t); });
  Session sess(g.graph);
  const Tensor bad = RandomUniform(Shape{1, 7, 7, 4}, 7, -1, 1, DType::kFloat32);
  try {
    sess.Run(g.y, {{g.x, bad}});
    FAIL() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr(StrCat("{{node ", g.graph.OperationOf(g.conv).name(), "}}")));
  }
}

}  // namespace
}  // namespace eager
