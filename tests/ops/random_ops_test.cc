// The RandomUniform graph op as TF's (random_ops.cc "RandomUniform",
// kernels/random_op.cc PhiloxRandomOp): TF's numbers for seeded nodes, a
// generator per node and Session (successive runs differ, a new Session
// starts again) and TF's op-seed rule for seeds (0, 0). Dropout graphs built
// on it: tests/autodiff/dropout_graph_test.cc.

#include "ops/random_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ops/array_ops.h"
#include "ops/graph_ops.h"
#include "ops/internal/philox.h"
#include "ops/session.h"
#include "ops/shape_ops.h"
#include "runtime/errors.h"
#include "runtime/graph.h"
#include "runtime/half.h"

namespace eager {
namespace {

using internal::Philox4x32;

// Random123's known-answer tests for Philox4x32-10 (kat_vectors: zeros,
// all ones, digits of pi).
TEST(PhiloxTest, MatchesThePublishedKnownAnswers) {
  EXPECT_EQ(Philox4x32({0, 0, 0, 0}, {0, 0}).Next(),
            (Philox4x32::Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(Philox4x32({~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}).Next(),
            (Philox4x32::Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(
      Philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}).Next(),
      (Philox4x32::Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(PhiloxTest, SkipIsAsManyNextCallsWithCarryIntoTheHighWords) {
  Philox4x32 stepped(3, 4);
  for (int i = 0; i < 5; ++i) stepped.Next();
  Philox4x32 skipped(3, 4);
  skipped.Skip(5);
  EXPECT_EQ(stepped.Next(), skipped.Next());
  // Counter words 0-1 at their maximum: one step carries into word 2.
  Philox4x32 at_max({~0u, ~0u, 7, 0}, {1, 2});
  at_max.Skip(1);
  EXPECT_EQ(at_max.Next(), Philox4x32({0, 0, 8, 0}, {1, 2}).Next());
}

TEST(PhiloxTest, FloatConversionIsOneMantissaMinusOne) {
  EXPECT_EQ(internal::UniformFloat(0), 0.0f);
  EXPECT_EQ(internal::UniformFloat(0xffffffffu), 1.0f - 0x1.0p-23f);  // the largest, below 1
  EXPECT_EQ(internal::UniformFloat(0x00400000u), 0.5f);               // only the top bit used
  EXPECT_EQ(internal::UniformFloat(0xff800000u), 0.0f);               // high 9 bits ignored
  EXPECT_EQ(internal::UniformDouble(0xfff00000u, 0), 0.0);
  EXPECT_EQ(internal::UniformDouble(0x80000u, 1), 0.5 + 0x1.0p-52);
}

// A graph with x: [?] and RandomUniform(Shape(x)) of `dtype` and seeds.
struct UniformGraph {
  UniformGraph(DType dtype, int64_t seed, int64_t seed2) {
    Graph::AsDefault in(graph);
    x = Placeholder(DType::kFloat32, Shape::Partial({-1}), "x");
    u = RandomUniformNode(ShapeOf(x), dtype, seed, seed2);
  }
  Tensor Run(Session& sess, int64_t n) { return sess.Run(u, {{x, Tensor::Zeros(Shape{n})}}); }
  Graph graph;
  Tensor x, u;
};

std::vector<uint32_t> Bits(const Tensor& t) {
  std::vector<uint32_t> bits;
  for (float v : t.data<float>()) bits.push_back(std::bit_cast<uint32_t>(v));
  return bits;
}

// What TF 2.21 gives (tf.raw_ops.RandomUniform in a tf.compat.v1.Session,
// run on shape [6], then [3] in the same session; printed by TF, not by
// eager); tests/tf_graphs/dropout_test.py compares whole dropout graphs.
TEST(RandomUniformTest, GivesTensorFlowsNumbersForSeededNodes) {
  UniformGraph f(DType::kFloat32, 87654321, 5);
  Session sess(f.graph);
  EXPECT_EQ(Bits(f.Run(sess, 6)), (std::vector<uint32_t>{0x3ec6d0bc, 0x3f29e71e, 0x3e448440,
                                                         0x3f34bfde, 0x3f769330, 0x3ea70e98}));
  EXPECT_EQ(Bits(f.Run(sess, 3)), (std::vector<uint32_t>{0x3ec9af1c, 0x3e330208, 0x3d32d580}));

  UniformGraph d(DType::kFloat64, 1, 0);
  Session dsess(d.graph);
  EXPECT_EQ(d.Run(dsess, 6).ToVector<double>(),
            (std::vector<double>{0.5015725085112726, 0.13348456503684658, 0.5049093953246451,
                                 0.029853492835205442, 0.3564305844309168, 0.9791402068980495}));
  EXPECT_EQ(d.Run(dsess, 3).ToVector<double>(),
            (std::vector<double>{0.8243439072603433, 0.10677384492931319, 0.19054763348636272}));

  // float16: TF printed 0.966, 0.3135, ...: the halves 989/1024, 321/1024, ...
  UniformGraph h(DType::kHalf, 0, 7);
  Session hsess(h.graph);
  std::vector<float> halves;
  const Tensor drawn = h.Run(hsess, 6);  // kept alive: a range-for would drop the temporary
  for (Half v : drawn.data<Half>()) halves.push_back(static_cast<float>(v) * 1024);
  EXPECT_EQ(halves, (std::vector<float>{989, 321, 499, 177, 333, 913}));
}

TEST(RandomUniformTest, ValuesLieInZeroOneAndAverageOneHalf) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kHalf, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    UniformGraph g(dtype, 11, 12);
    Session sess(g.graph);
    const Tensor u = Cast(g.Run(sess, 100003), DType::kFloat64);  // not a multiple of 4
    ASSERT_EQ(u.shape(), Shape{100003});
    double sum = 0;
    for (double v : u.data<double>()) {
      ASSERT_GE(v, 0.0);
      ASSERT_LT(v, 1.0);
      sum += v;
    }
    // Standard error of the mean: sqrt(1/12 / n) ~ 0.0009; 5 of them.
    EXPECT_NEAR(sum / 100003, 0.5, 0.0045);
  }
}

TEST(RandomUniformTest, EachRunGivesNewNumbersAndANewSessionStartsAgain) {
  UniformGraph g(DType::kFloat32, 3, 9);
  Session first(g.graph);
  const Tensor a = g.Run(first, 1000);
  const Tensor b = g.Run(first, 1000);
  EXPECT_NE(Bits(a), Bits(b));
  Session second(g.graph);
  EXPECT_EQ(Bits(g.Run(second, 1000)), Bits(a));
  EXPECT_EQ(Bits(g.Run(second, 1000)), Bits(b));
  // Another seed pair, another sequence.
  UniformGraph other(DType::kFloat32, 3, 10);
  Session third(other.graph);
  EXPECT_NE(Bits(other.Run(third, 1000)), Bits(a));
}

// TF's op-seed rule: seed = seed2 = 0 means fresh random seeds per kernel
// (per Session), so two Sessions disagree (all 1000 values equal by chance:
// probability 2^-23000).
TEST(RandomUniformTest, ZeroSeedsAreNondeterministicPerSession) {
  UniformGraph g(DType::kFloat32, 0, 0);
  Session first(g.graph);
  Session second(g.graph);
  const std::vector<uint32_t> a = Bits(g.Run(first, 1000));
  const std::vector<uint32_t> b = Bits(g.Run(second, 1000));
  EXPECT_NE(a, b);
  int same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += a[i] == b[i] ? 1 : 0;
  EXPECT_LT(same, 10);
}

TEST(RandomUniformTest, NodeAndShapes) {
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1, 4}), "x");
  const Tensor u = RandomUniformNode(ShapeOf(x), DType::kFloat32, 1, 2);
  EXPECT_EQ(u.shape(), Shape::Partial({-1, -1}));
  EXPECT_EQ(u.dtype(), DType::kFloat32);
  const Node& node = graph.node(graph.OperationOf(u).index());
  EXPECT_EQ(node.op, "RandomUniform");
  EXPECT_EQ(node.Attr<int64_t>("seed"), 1);
  EXPECT_EQ(node.Attr<int64_t>("seed2"), 2);
  EXPECT_EQ(node.Attr<DType>("T"), DType::kInt32);
  // A value as the shape: a Const input, and the static shape is known.
  const Tensor fixed = RandomUniformNode(Tensor::Vector<int64_t>({2, 3}), DType::kFloat64);
  EXPECT_EQ(fixed.shape(), (Shape{2, 3}));
  Session sess(graph);
  EXPECT_EQ(sess.Run(fixed).shape(), (Shape{2, 3}));
  EXPECT_EQ(sess.Run(u, {{x, Tensor::Zeros(Shape{5, 4})}}).shape(), (Shape{5, 4}));
  // Bad shapes and dtypes, named.
  EXPECT_THROW(RandomUniformNode(Tensor::Vector<float>({2})), InvalidArgumentError);
  EXPECT_THROW(RandomUniformNode(Tensor::Vector<int32_t>({-1, 2})), InvalidArgumentError);
  EXPECT_THROW(RandomUniformNode(Tensor::Vector<int32_t>({2}), DType::kInt32),
               InvalidArgumentError);
  const Tensor shape_in = Placeholder(DType::kInt32, Shape::Partial({-1}), "shape_in");
  const Tensor from_fed = RandomUniformNode(shape_in);
  try {
    sess.Run(from_fed, {{shape_in, Tensor::Vector<int32_t>({3, -2})}});
    FAIL() << "a negative dimension ran";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("Dimension -2 must be >= 0"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("[[{{node RandomUniform_2}}]]"));
  }
}

TEST(RandomUniformTest, IsGraphOnly) {
  EXPECT_THROW(RandomUniformNode(Tensor::Vector<int32_t>({2})), FailedPreconditionError);
}

// TF 2.21 printed these (float.hex of tf.random.stateless_uniform([6],
// seed=[1, 2]) and of ([3], seed=[7, 0], dtype=tf.float64)).
TEST(StatelessRandomUniformTest, GivesTensorFlowsStatelessNumbers) {
  EXPECT_EQ(StatelessRandomUniform(Shape{6}, 1, 2).ToVector<float>(),
            (std::vector<float>{0x1.b028b0p-1f, 0x1.894f10p-3f, 0x1.fe10f8p-1f, 0x1.487930p-3f,
                                0x1.168498p-2f, 0x1.4c7714p-1f}));
  EXPECT_EQ(StatelessRandomUniform(Shape{3}, 7, 0, DType::kFloat64).ToVector<double>(),
            (std::vector<double>{0x1.f408e1bac14p-1, 0x1.d954a1349d65p-2, 0x1.1ffbebeab0c32p-1}));
}

TEST(StatelessRandomUniformTest, IsAPureFunctionOfShapeAndSeeds) {
  const std::vector<float> a = StatelessRandomUniform(Shape{2, 5}, 3, 4).ToVector<float>();
  EXPECT_EQ(StatelessRandomUniform(Shape{2, 5}, 3, 4).ToVector<float>(), a);
  EXPECT_NE(StatelessRandomUniform(Shape{2, 5}, 3, 5).ToVector<float>(), a);
  EXPECT_NE(StatelessRandomUniform(Shape{2, 5}, 4, 4).ToVector<float>(), a);
  // Outside a graph only as a value; bad dtypes and shapes are named.
  EXPECT_THROW(StatelessRandomUniform(Shape{2}, 1, 2, DType::kInt32), InvalidArgumentError);
  EXPECT_THROW(StatelessRandomUniform(Shape::Partial({-1, 2}), 1, 2), InvalidArgumentError);
}

}  // namespace
}  // namespace eager
