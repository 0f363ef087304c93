// The fused LSTM cell ops (ops/fused_lstm_cell.h) against the unfused
// Sigmoid, Tanh, Mul and Add ops they replace: values and both gradients
// (the fused pass, and the ops a recording tape sees), on one and two
// threads; second derivatives through a recording tape; the graph's unfused
// nodes; bad shapes. The LSTM layer that runs them is judged by Keras in
// tests/tf_keras/keras_recurrent_test.py and against finite differences in
// tests/autodiff/recurrent_test.cc.

#include "ops/fused_lstm_cell.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "autodiff/gradient_tape.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "ops/shape_ops.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/threads.h"
#include "tests/testing/tensor_compare.h"

namespace eager {
namespace {

using testing::SameBits;
using testing::WorstError;

using Grads = std::vector<std::optional<Tensor>>;

Tensor Gate(const Tensor& z, int gate, int64_t units) {
  return Slice(z, {0, gate * units}, {-1, units});
}

// The LSTM layer's cell as it was before the fusion: Keras's formula in
// public ops.
Tensor UnfusedState(const Tensor& z, const Tensor& c_prev, int64_t units) {
  const Tensor i = Sigmoid(Gate(z, 0, units));
  const Tensor f = Sigmoid(Gate(z, 1, units));
  return Add(Mul(f, c_prev), Mul(i, Tanh(Gate(z, 2, units))));
}
Tensor UnfusedOutput(const Tensor& z, const Tensor& c, int64_t units) {
  return Mul(Sigmoid(Gate(z, 3, units)), Tanh(c));
}

struct Size {
  int64_t batch;
  int64_t units;
};

// Keras's LSTM(256) at batch 64 (split between threads), a width that is a
// whole number of vectors and one that is not.
std::vector<Size> Sizes() { return {{64, 256}, {3, 16}, {5, 7}}; }

class FusedLstmCellTest : public ::testing::Test {
 protected:
  void TearDown() override { SetNumThreads(saved_); }
  const int saved_ = GetNumThreads();
};

TEST_F(FusedLstmCellTest, EqualsTheUnfusedOpsOnAnyThreadCount) {
  uint64_t seed = 1;
  for (const Size& s : Sizes()) {
    SCOPED_TRACE(::testing::Message() << "batch " << s.batch << " units " << s.units);
    // Pre-activations wide enough to reach both tails of the sigmoid.
    const Tensor z = RandomUniform(Shape{s.batch, 4 * s.units}, seed++, -9, 9);
    const Tensor c_prev = RandomUniform(Shape{s.batch, s.units}, seed++, -2, 2);
    SetNumThreads(1);
    const Tensor c = LstmCellState(z, c_prev);
    const Tensor h = LstmCellOutput(z, c);
    const Tensor want_c = UnfusedState(z, c_prev, s.units);
    const Tensor want_h = UnfusedOutput(z, want_c, s.units);
    if (s.units % 16 == 0) {
      // Whole vectors: the same Eigen expressions give the same bits.
      EXPECT_TRUE(SameBits(c, want_c));
      EXPECT_TRUE(SameBits(h, want_h));
    }
    // Row tails take Eigen's scalar exp/tanh, within an ulp or two.
    EXPECT_LE(WorstError(c, want_c), 1e-6);
    EXPECT_LE(WorstError(h, want_h), 1e-6);
    SetNumThreads(2);
    EXPECT_TRUE(SameBits(LstmCellState(z, c_prev), c));
    EXPECT_TRUE(SameBits(LstmCellOutput(z, c), h));
  }
}

TEST_F(FusedLstmCellTest, GradientsAreTheUnfusedOpsGradients) {
  uint64_t seed = 50;
  for (const Size& s : Sizes()) {
    SCOPED_TRACE(::testing::Message() << "batch " << s.batch << " units " << s.units);
    const Tensor z = RandomUniform(Shape{s.batch, 4 * s.units}, seed++, -6, 6);
    const Tensor c_prev = RandomUniform(Shape{s.batch, s.units}, seed++, -2, 2);
    const Tensor wc = RandomUniform(Shape{s.batch, s.units}, seed++, -1, 1);
    const Tensor wh = RandomUniform(Shape{s.batch, s.units}, seed++, -1, 1);
    // loss = sum(c * wc + h * wh): both of z's paths and c's two uses.
    const auto loss = [&](bool fused) {
      const Tensor c = fused ? LstmCellState(z, c_prev) : UnfusedState(z, c_prev, s.units);
      const Tensor h = fused ? LstmCellOutput(z, c) : UnfusedOutput(z, c, s.units);
      return Add(ReduceSum(Mul(c, wc)), ReduceSum(Mul(h, wh)));
    };
    std::vector<Tensor> want;
    {
      GradientTape tape;
      tape.Watch(z);
      tape.Watch(c_prev);
      for (auto& g : tape.Gradient(loss(false), {z, c_prev})) want.push_back(*g);
    }
    for (int threads : {1, 2}) {
      SetNumThreads(threads);
      GradientTape tape;
      tape.Watch(z);
      tape.Watch(c_prev);
      const Grads got = tape.Gradient(loss(true), {z, c_prev});
      for (size_t i = 0; i < 2; ++i) {
        if (s.units % 16 == 0) {
          EXPECT_TRUE(SameBits(*got[i], want[i])) << "input " << i;
        }
        EXPECT_LE(WorstError(*got[i], want[i]), 2e-6) << "input " << i;
      }
    }
    // A tape that records its own backward pass gets the gradient as ops.
    GradientTape persistent(/*persistent=*/true);
    persistent.Watch(z);
    persistent.Watch(c_prev);
    const Grads recorded = persistent.Gradient(loss(true), {z, c_prev});
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_LE(WorstError(*recorded[i], want[i]), 2e-6) << "recorded, input " << i;
    }
  }
}

TEST_F(FusedLstmCellTest, RecordedGradientsDifferentiateAgain) {
  // d/dz of sum(dloss/dz * v), unfused against fused (whose first gradient
  // a persistent tape records as ops).
  const int64_t units = 8;
  const Tensor z = RandomUniform(Shape{2, 4 * units}, 7, -3, 3);
  const Tensor c_prev = RandomUniform(Shape{2, units}, 8, -2, 2);
  const Tensor v = RandomUniform(Shape{2, 4 * units}, 9, -1, 1);
  const auto second = [&](bool fused) {
    GradientTape tape(/*persistent=*/true);
    tape.Watch(z);
    const Tensor c = fused ? LstmCellState(z, c_prev) : UnfusedState(z, c_prev, units);
    const Tensor h = fused ? LstmCellOutput(z, c) : UnfusedOutput(z, c, units);
    const Tensor dz = *tape.Gradient(ReduceSum(Mul(h, h)), {z})[0];
    return *tape.Gradient(ReduceSum(Mul(dz, v)), {z})[0];
  };
  const Tensor want = second(false);
  EXPECT_GT(ReduceSum(Abs(want)).scalar<float>(), 0.0f);
  EXPECT_LE(WorstError(second(true), want), 1e-5);
}

TEST_F(FusedLstmCellTest, InAGraphAddsTheUnfusedNodes) {
  const Tensor z = RandomUniform(Shape{2, 12}, 4, -1, 1);
  const Tensor c_prev = RandomUniform(Shape{2, 3}, 5, -1, 1);
  Graph graph;
  Tensor h;
  {
    Graph::AsDefault in(graph);
    const Tensor zc = Constant(z);
    h = LstmCellOutput(zc, LstmCellState(zc, Constant(c_prev)));
  }
  for (int i = 0; i < graph.num_nodes(); ++i) {
    EXPECT_EQ(graph.node(i).op.find("_Lstm"), std::string::npos) << graph.node(i).op;
  }
  EXPECT_LE(WorstError(Session(graph).Run(h), LstmCellOutput(z, LstmCellState(z, c_prev))), 1e-6);
}

TEST_F(FusedLstmCellTest, Float64TakesTheUnfusedOps) {
  const Tensor z = RandomUniform(Shape{2, 12}, 4, -1, 1, DType::kFloat64);
  const Tensor c_prev = RandomUniform(Shape{2, 3}, 5, -1, 1, DType::kFloat64);
  EXPECT_TRUE(SameBits(LstmCellState(z, c_prev), UnfusedState(z, c_prev, 3)));
}

TEST_F(FusedLstmCellTest, RejectsShapesThatDoNotFit) {
  const Tensor z = RandomUniform(Shape{2, 12}, 4, -1, 1);
  for (const Tensor& state :
       {RandomUniform(Shape{2, 4}, 5, -1, 1), RandomUniform(Shape{3, 3}, 5, -1, 1),
        RandomUniform(Shape{2, 3}, 5, -1, 1, DType::kFloat64)}) {
    try {
      LstmCellState(z, state);
      ADD_FAILURE() << "accepted c_prev " << state.shape();
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("_LstmCellState: expected z [batch, 4 units]"),
                std::string::npos)
          << e.what();
    }
    EXPECT_THROW(LstmCellOutput(z, state), InvalidArgumentError);
  }
}

}  // namespace
}  // namespace eager
