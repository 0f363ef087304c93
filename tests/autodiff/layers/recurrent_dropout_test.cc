// dropout and recurrent_dropout of SimpleRNN, LSTM and GRU
// (autodiff/layers/recurrent.h): inference is the plain layer, training is
// the plain layer on inputs times Keras's mask, the draws are counted as
// Keras 3 counts them. TF's own masks and gradients (per-gate masks of
// LSTM and GRU with recurrent_dropout included) are compared in
// tests/tf_keras/keras_masks_test.py.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/layers/recurrent.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/random_generator.h"
#include "ops/random_ops.h"
#include "ops/shape_ops.h"
#include "runtime/errors.h"

namespace eager {
namespace {

using layers::GRU;
using layers::LSTM;
using layers::Recurrent;
using layers::RecurrentConfig;
using layers::SimpleRNN;

std::unique_ptr<Recurrent> Make(const std::string& kind, const RecurrentConfig& cfg) {
  if (kind == "simple") return std::make_unique<SimpleRNN>(3, cfg);
  if (kind == "lstm") return std::make_unique<LSTM>(3, cfg);
  return std::make_unique<GRU>(3, cfg);
}

// The layer's weights copied into `to` (both built).
void CopyWeights(Recurrent& from, Recurrent& to) {
  const std::vector<Variable*> a = from.Variables(), b = to.Variables();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) b[i]->Assign(a[i]->value());
}

TEST(RecurrentDropoutTest, InferenceIsThePlainLayerAndCountsTheDraws) {
  const Tensor x = RandomNormal(Shape{2, 4, 5}, 3);
  for (const std::string kind : {"simple", "lstm", "gru"}) {
    SCOPED_TRACE(kind);
    auto dropped = Make(kind, {.dropout = 0.4, .recurrent_dropout = 0.3, .seed = 1});
    auto plain = Make(kind, {.seed = 1});
    const Tensor got = (*dropped)(x);
    (*plain)(x);
    CopyWeights(*dropped, *plain);
    EXPECT_EQ(got.ToVector<float>(), (*plain)(x).ToVector<float>());
    // Keras draws (here: counts) the input and the state masks on every
    // call: one each, or with recurrent_dropout one per gate for LSTM (4)
    // and GRU (3), Keras's implementation 1.
    const int64_t per_call = kind == "simple" ? 2 : kind == "lstm" ? 8 : 6;
    EXPECT_EQ(dropped->dropout_step(), per_call);
    (*dropped)(x, false);
    EXPECT_EQ(dropped->dropout_step(), 2 * per_call);
    auto inputs_only = Make(kind, {.dropout = 0.4, .seed = 1});
    (*inputs_only)(x);
    EXPECT_EQ(inputs_only->dropout_step(), 1);
  }
}

// In training with dropout alone (Keras's implementation 2) the layer is the
// plain layer on x times the inputs' mask [batch, 1, features] (kept:
// 1 / (1 - rate), TF's stateless uniform of [seed, step] >= rate).
TEST(RecurrentDropoutTest, TrainingMultipliesTheInputsByKerassMask) {
  const Tensor x = RandomNormal(Shape{3, 4, 5}, 4, 0.0, 1.0, DType::kFloat64);
  for (const std::string kind : {"lstm", "gru"}) {
    SCOPED_TRACE(kind);
    auto dropped = Make(kind, {.dropout = 0.5, .seed = 9});
    auto plain = Make(kind, {.seed = 9});
    (*dropped)(x);
    (*plain)(x);
    CopyWeights(*dropped, *plain);
    dropped->set_dropout_step(6);
    const std::vector<double> got = (*dropped)(x, true).ToVector<double>();
    EXPECT_EQ(dropped->dropout_step(), 7);
    const std::vector<double> u =
        StatelessRandomUniform(Shape{3, 5}, 9, 6, DType::kFloat64).ToVector<double>();
    std::vector<double> keep;
    int dropped_count = 0;
    for (double v : u) {
      keep.push_back(v >= 0.5 ? 2.0 : 0.0);
      dropped_count += v < 0.5;
    }
    EXPECT_GT(dropped_count, 0);
    const Tensor mask = Tensor::FromVector<double>(keep, Shape{3, 1, 5});
    const std::vector<double> want = (*plain)(Mul(x, mask)).ToVector<double>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
  }
}

// SimpleRNN also drops the previous output before its matmul: with the
// recurrent kernel zeroed the state mask has nothing to act on, and the
// output is the plain layer's on the dropped inputs; with it, it differs.
TEST(RecurrentDropoutTest, SimpleRnnDropsTheStateToo) {
  const Tensor x = RandomNormal(Shape{3, 4, 5}, 5, 0.0, 1.0, DType::kFloat64);
  SimpleRNN both(3, {.dropout = 0.5, .recurrent_dropout = 0.5, .seed = 2});
  SimpleRNN inputs_only(3, {.dropout = 0.5, .seed = 2});
  both(x);
  inputs_only(x);
  CopyWeights(both, inputs_only);
  both.set_dropout_step(0);
  inputs_only.set_dropout_step(0);
  // Same input mask (draw 0); the state mask (draw 1) changes the result.
  EXPECT_NE(both(x, true).ToVector<double>(), inputs_only(x, true).ToVector<double>());
  both.recurrent_kernel().Assign(Tensor::Zeros(both.recurrent_kernel().shape(), DType::kFloat64));
  inputs_only.recurrent_kernel().Assign(
      Tensor::Zeros(inputs_only.recurrent_kernel().shape(), DType::kFloat64));
  both.set_dropout_step(0);
  inputs_only.set_dropout_step(0);
  EXPECT_EQ(both(x, true).ToVector<double>(), inputs_only(x, true).ToVector<double>());
}

TEST(RecurrentDropoutTest, BadRatesNameTheLayer) {
  try {
    LSTM lstm(3, {.dropout = 1.0, .name = "encoder"});
    FAIL() << "dropout 1 was taken";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("LSTM 'encoder'"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("dropout and recurrent_dropout must be in [0, 1)"));
  }
  EXPECT_THROW(GRU(3, {.recurrent_dropout = -0.1}), InvalidArgumentError);
  LSTM lstm(3);
  EXPECT_THROW(lstm.set_dropout_step(-1), InvalidArgumentError);
}

}  // namespace
}  // namespace eager
