// The recurrent layers and MultiHeadAttention in graph mode: built inside
// Graph::AsDefault on a placeholder, a Session computes what the same layers
// compute eagerly: forward and gradients with a known batch, forward with an
// unknown one (graph gradients there need run-time shapes through
// StridedSliceGrad that ops/ does not infer yet).

#include <gtest/gtest.h>

#include <optional>
#include <span>
#include <vector>

#include "autodiff/gradient_tape.h"
#include "autodiff/graph_gradients.h"
#include "autodiff/layers/attention.h"
#include "autodiff/layers/recurrent.h"
#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "runtime/graph.h"
#include "runtime/names.h"

namespace eager::layers {
namespace {

// An LSTM over the sequence, a GRU (reset before the matmul) reading it
// backwards, a SimpleRNN and self-attention, summed into one loss.
struct Net {
  LSTM lstm{3, {.return_sequences = true, .seed = 1}};
  GRU gru{2, {.go_backwards = true, .reset_after = false, .seed = 2}};
  SimpleRNN rnn{2, {.seed = 3}};
  MultiHeadAttention mha{2, 2, {.seed = 4}};

  std::vector<Tensor> Outputs(const Tensor& x) { return {lstm(x), gru(x), rnn(x), mha(x)}; }
  std::vector<Variable*> Variables() {
    std::vector<Variable*> out;
    for (Module* m : std::vector<Module*>{&lstm, &gru, &rnn, &mha}) {
      for (Variable* v : m->TrainableVariables()) out.push_back(v);
    }
    return out;
  }
};

Tensor Loss(const std::vector<Tensor>& outputs) {
  Tensor total = ReduceSum(Mul(outputs[0], outputs[0]));
  for (size_t i = 1; i < outputs.size(); ++i) {
    total = Add(total, ReduceSum(Mul(outputs[i], Tensor::Scalar<float>(static_cast<float>(i)))));
  }
  return total;
}

void ExpectNear(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  const std::vector<float> g = got.ToVector<float>(), w = want.ToVector<float>();
  for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], 1e-5f) << "at " << i;
}

TEST(GraphRecurrentLayersTest, RunInASessionAsEagerly) {
  ResetDefaultNames();
  const Tensor x = RandomNormal(Shape{2, 4, 3}, 7);
  Net eager_net;
  const std::vector<Tensor> eager_out = eager_net.Outputs(x);
  GradientTape tape;
  const Tensor eager_loss = Loss(eager_net.Outputs(x));
  const std::vector<Variable*> eager_vars = eager_net.Variables();
  const std::vector<std::optional<Tensor>> eager_grads = tape.Gradient(
      eager_loss, std::span<const Variable* const>(eager_vars.data(), eager_vars.size()));

  ResetDefaultNames();
  Graph graph;
  Graph::AsDefault in(graph);
  Net net;  // the same seeds, so the same initial weights
  const Tensor xp = Placeholder(DType::kFloat32, Shape::Partial({2, 4, 3}), "x");
  const std::vector<Tensor> out = net.Outputs(xp);
  EXPECT_EQ(out[0].shape().ToString(), "[2,4,3]");
  EXPECT_EQ(out[1].shape().ToString(), "[2,2]");
  EXPECT_EQ(out[3].shape().ToString(), "[2,4,3]");
  EXPECT_EQ(net.lstm.kernel().name(), "lstm/lstm_cell/kernel:0");
  const std::vector<Variable*> vars = net.Variables();
  ASSERT_EQ(vars.size(), eager_vars.size());
  const std::vector<std::optional<Tensor>> grads =
      Gradients(Loss(out), std::span<Variable* const>(vars.data(), vars.size()));

  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  for (size_t i = 0; i < out.size(); ++i) {
    SCOPED_TRACE(i);
    ExpectNear(sess.Run(out[i], {{xp, x}}), eager_out[i]);
  }
  for (size_t i = 0; i < vars.size(); ++i) {
    SCOPED_TRACE(vars[i]->name());
    ASSERT_TRUE(grads[i].has_value() && eager_grads[i].has_value());
    ExpectNear(sess.Run(*grads[i], {{xp, x}}), *eager_grads[i]);
  }
}

TEST(GraphRecurrentLayersTest, ForwardRunsWithUnknownBatch) {
  ResetDefaultNames();
  const Tensor x = RandomNormal(Shape{2, 4, 3}, 8);
  Net eager_net;
  const std::vector<Tensor> eager_out = eager_net.Outputs(x);
  ResetDefaultNames();
  Graph graph;
  Graph::AsDefault in(graph);
  Net net;
  const Tensor xp = Placeholder(DType::kFloat32, Shape::Partial({-1, 4, 3}), "x");
  const std::vector<Tensor> out = net.Outputs(xp);
  EXPECT_EQ(out[0].shape().ToString(), "[?,4,3]");
  EXPECT_EQ(out[1].shape().ToString(), "[?,2]");
  EXPECT_EQ(out[3].shape().ToString(), "[?,4,3]");
  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  for (size_t i = 0; i < out.size(); ++i) {
    SCOPED_TRACE(i);
    ExpectNear(sess.Run(out[i], {{xp, x}}), eager_out[i]);
  }
}

}  // namespace
}  // namespace eager::layers
