// Dense runs eagerly as one FusedMatMul (autodiff/dense.h): its outputs and
// every gradient a tape takes through it are the bits of MatMul, AddV2 and
// Relu on the same variables, on any thread count; activations other than
// ReLU, and layers without a bias, still run unfused.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "autodiff/dense.h"
#include "autodiff/gradient_tape.h"
#include "ops/binary_ops.h"
#include "ops/matmul.h"
#include "ops/nn_ops.h"
#include "ops/random_generator.h"
#include "ops/recorder.h"
#include "ops/reduction_ops.h"
#include "ops/unary_ops.h"
#include "runtime/threads.h"
#include "tests/testing/tensor_compare.h"

namespace eager {
namespace {

using testing::SameBits;

// The op types run while registered, recording nothing.
class OpTypes : public OpRecorder {
 public:
  OpTypes() : scope_(this) {}
  bool ShouldRecord(const OpDef& op, std::span<const Tensor>) override {
    types.emplace_back(op.type);
    return false;
  }
  void Record(const OpCall&) override {}
  std::vector<std::string> types;

 private:
  ScopedRecording scope_;
};

// The main job's shape of model: 784-256-10, ReLU, mean sparse softmax
// cross entropy.
struct TwoLayers {
  Dense hidden{256, Relu, true, uint64_t{1}};
  Dense logits{10, nullptr, true, uint64_t{2}};
  Tensor x = RandomUniform(Shape{64, 784}, 3, 0.0, 1.0);
  Tensor labels;
  TwoLayers() {
    std::vector<int32_t> y(64);
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<int32_t>((i * 7) % 10);
    labels = Tensor::FromVector<int32_t>(y, Shape{64});
    hidden.Build(784);
    logits.Build(256);
    // Nonzero biases, so that the bias really enters every sum.
    hidden.bias()->Assign(RandomUniform(Shape{256}, 4, -0.1, 0.1));
    logits.bias()->Assign(RandomUniform(Shape{10}, 5, -0.1, 0.1));
  }
  std::vector<Variable*> Variables() {
    return {&hidden.kernel(), hidden.bias(), &logits.kernel(), logits.bias()};
  }
  Tensor Loss(const Tensor& logits_out) {
    return ReduceMean(SparseSoftmaxCrossEntropyWithLogits(labels, logits_out));
  }
  Tensor Fused(const Tensor& input) { return logits(hidden(input)); }
  Tensor Unfused(const Tensor& input) {
    Tensor h = Relu(Add(MatMul(input, hidden.kernel().value()), hidden.bias()->value()));
    return Add(MatMul(h, logits.kernel().value()), logits.bias()->value());
  }
};

class DenseFusedTest : public ::testing::Test {
 protected:
  void TearDown() override { SetNumThreads(saved_); }
  const int saved_ = GetNumThreads();
};

TEST_F(DenseFusedTest, EagerLayersRunOneFusedOpEach) {
  TwoLayers model;
  OpTypes ops;
  model.Fused(model.x);
  EXPECT_EQ(ops.types, (std::vector<std::string>{"_FusedMatMul", "_FusedMatMul"}));
}

TEST_F(DenseFusedTest, LossAndGradientsEqualTheUnfusedOpsBitForBit) {
  TwoLayers model;
  for (int threads : {1, 2}) {
    SetNumThreads(threads);
    GradientTape fused_tape;
    const Tensor fused_loss = model.Loss(model.Fused(model.x));
    const std::vector<std::optional<Tensor>> fused =
        fused_tape.Gradient(fused_loss, model.Variables());
    GradientTape tape;
    const Tensor loss = model.Loss(model.Unfused(model.x));
    const std::vector<std::optional<Tensor>> unfused = tape.Gradient(loss, model.Variables());
    EXPECT_TRUE(SameBits(fused_loss, loss)) << threads << " threads";
    ASSERT_EQ(fused.size(), 4u);
    for (size_t i = 0; i < fused.size(); ++i) {
      ASSERT_TRUE(fused[i].has_value() && unfused[i].has_value()) << i;
      EXPECT_TRUE(SameBits(*fused[i], *unfused[i]))
          << model.Variables()[i]->name() << " on " << threads << " threads";
    }
  }
}

TEST_F(DenseFusedTest, FirstLayerInputGetsNoProduct) {
  TwoLayers model;
  GradientTape tape;
  const Tensor loss = model.Loss(model.Fused(model.x));
  OpTypes ops;
  tape.Gradient(loss, model.Variables());
  // dW2, dh (the hidden layer's output is not a source but leads to one),
  // dW1; dx = dh1 W1^T is not wanted.
  EXPECT_EQ(std::count(ops.types.begin(), ops.types.end(), "MatMul"), 3);
}

TEST_F(DenseFusedTest, InputGradientEqualsTheUnfusedOpsBitForBit) {
  TwoLayers model;
  GradientTape fused_tape;
  fused_tape.Watch(model.x);
  const Tensor fused_loss = model.Loss(model.Fused(model.x));
  const std::optional<Tensor> fused = fused_tape.Gradient(fused_loss, {model.x})[0];
  GradientTape tape;
  tape.Watch(model.x);
  const Tensor loss = model.Loss(model.Unfused(model.x));
  const std::optional<Tensor> unfused = tape.Gradient(loss, {model.x})[0];
  ASSERT_TRUE(fused.has_value() && unfused.has_value());
  EXPECT_TRUE(SameBits(*fused, *unfused));
}

TEST_F(DenseFusedTest, OtherActivationsAndNoBiasRunUnfused) {
  const Tensor x = RandomUniform(Shape{4, 3}, 6, -1.0, 1.0);
  Dense tanh_layer(5, Tanh, true, uint64_t{7});
  Dense no_bias(5, Relu, false, uint64_t{8});
  OpTypes ops;
  const Tensor y = tanh_layer(x);
  const Tensor z = no_bias(x);
  EXPECT_EQ(ops.types, (std::vector<std::string>{"MatMul", "AddV2", "Tanh", "MatMul", "Relu"}));
  EXPECT_TRUE(
      SameBits(y, Tanh(Add(MatMul(x, tanh_layer.kernel().value()), tanh_layer.bias()->value()))));
  EXPECT_TRUE(SameBits(z, Relu(MatMul(x, no_bias.kernel().value()))));
}

}  // namespace
}  // namespace eager
