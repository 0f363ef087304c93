// The tape asks each gradient function only for the input gradients that
// lead to a source (OpCall::skip_gradient): a Dense layer's input gets none.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "autodiff/gradient_tape.h"
#include "ops/binary_ops.h"
#include "ops/matmul.h"
#include "ops/random_generator.h"
#include "ops/recorder.h"
#include "ops/reduction_ops.h"
#include "ops/unary_ops.h"

namespace eager {
namespace {

// Counts MatMuls run while registered (the tape's backward ops included: it
// pauses only itself), recording nothing.
class MatMulCounter : public OpRecorder {
 public:
  MatMulCounter() : scope_(this) {}
  bool ShouldRecord(const OpDef& op, std::span<const Tensor>) override {
    if (op.type == "MatMul") ++count;
    return false;
  }
  void Record(const OpCall&) override {}
  int count = 0;

 private:
  ScopedRecording scope_;
};

struct Layer {
  Tensor x = RandomUniform(Shape{16, 8}, 1, -1.0, 1.0, DType::kFloat32);
  Variable w{RandomUniform(Shape{8, 4}, 2, -1.0, 1.0, DType::kFloat32), "w"};
  Variable b{RandomUniform(Shape{4}, 3, -1.0, 1.0, DType::kFloat32), "b"};
  Tensor Loss() { return ReduceSum(Square(Relu(Add(MatMul(x, w.value()), b.value())))); }
};

TEST(GradientTapeSkipTest, InputOfFirstLayerGetsNoProduct) {
  Layer layer;
  GradientTape tape;
  Tensor loss = layer.Loss();
  MatMulCounter counter;
  std::vector<std::optional<Tensor>> grads = tape.Gradient(loss, {&layer.w, &layer.b});
  ASSERT_TRUE(grads[0].has_value() && grads[1].has_value());
  EXPECT_EQ(counter.count, 1) << "only dW = x^T dy; dx = dy W^T is not wanted";
}

TEST(GradientTapeSkipTest, SameGradientsAsWhenTheInputIsAlsoASource) {
  Layer layer;
  GradientTape tape;
  Tensor loss = layer.Loss();
  std::vector<std::optional<Tensor>> some = tape.Gradient(loss, {&layer.w, &layer.b});

  GradientTape full_tape;
  full_tape.Watch(layer.x);
  Tensor full_loss = layer.Loss();
  MatMulCounter counter;
  std::vector<std::optional<Tensor>> all =
      full_tape.Gradient(full_loss, std::vector<Tensor>{layer.x, layer.w.value(), layer.b.value()});
  EXPECT_EQ(counter.count, 2) << "dx is wanted now";
  ASSERT_TRUE(all[0].has_value() && all[1].has_value() && all[2].has_value());
  EXPECT_EQ(some[0]->ToVector<float>(), all[1]->ToVector<float>());
  EXPECT_EQ(some[1]->ToVector<float>(), all[2]->ToVector<float>());
}

TEST(GradientTapeSkipTest, PersistentTapeAsksAgainForEachGradientCall) {
  Layer layer;
  GradientTape tape(/*persistent=*/true);
  tape.Watch(layer.x);
  Tensor loss = layer.Loss();
  {
    MatMulCounter counter;
    std::optional<Tensor> dw = tape.Gradient(loss, layer.w);
    EXPECT_TRUE(dw.has_value());
    EXPECT_EQ(counter.count, 1);
  }
  {
    MatMulCounter counter;
    std::optional<Tensor> dx = tape.Gradient(loss, std::vector<Tensor>{layer.x})[0];
    ASSERT_TRUE(dx.has_value());
    EXPECT_EQ(dx->shape(), layer.x.shape());
    EXPECT_EQ(counter.count, 1);
  }
}

}  // namespace
}  // namespace eager
