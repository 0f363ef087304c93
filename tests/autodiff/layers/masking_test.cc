// Keras's masks (autodiff/layer.h): recurrent layers skip masked steps,
// Sequential carries Embedding(mask_zero)'s mask, MultiHeadAttention's
// attention, query, value and causal masks. The references are independent
// of the mask code: the same layer run without a mask on only the valid
// steps (or keys), and central differences for the gradients.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autodiff/dense.h"
#include "autodiff/gradient_tape.h"
#include "autodiff/layers/attention.h"
#include "autodiff/layers/embedding.h"
#include "autodiff/layers/recurrent.h"
#include "autodiff/sequential.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "runtime/errors.h"

namespace eager {
namespace {

using layers::AttentionMasks;
using layers::GRU;
using layers::LSTM;
using layers::MultiHeadAttention;
using layers::Recurrent;
using layers::RecurrentConfig;
using layers::SimpleRNN;

std::unique_ptr<Recurrent> Make(const std::string& kind, const RecurrentConfig& cfg) {
  if (kind == "simple") return std::make_unique<SimpleRNN>(3, cfg);
  if (kind == "lstm") return std::make_unique<LSTM>(3, cfg);
  return std::make_unique<GRU>(3, cfg);
}

// Steps `steps` of example b of x [batch, time, features], as [1, n, features].
Tensor Pick(const Tensor& x, int64_t b, const std::vector<int64_t>& steps) {
  const int64_t f = x.shape().dim(2), time = x.shape().dim(1);
  const std::vector<double> all = x.ToVector<double>();
  std::vector<double> out;
  for (int64_t t : steps) {
    for (int64_t k = 0; k < f; ++k) out.push_back(all[(b * time + t) * f + k]);
  }
  return Tensor::FromVector<double>(std::move(out),
                                    Shape{1, static_cast<int64_t>(steps.size()), f});
}

// Row b of a [batch, n] tensor, or [batch, time, n]'s step t.
std::vector<double> Row(const Tensor& m, int64_t b, int64_t t = -1) {
  const std::vector<double> all = m.ToVector<double>();
  const int64_t n = m.shape().dim(m.shape().rank() - 1);
  const int64_t offset = t < 0 ? b * n : (b * m.shape().dim(1) + t) * n;
  return {all.begin() + offset, all.begin() + offset + n};
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << i;
}

// With a mask, each example's output sequence is the unmasked layer's on its
// valid steps alone, each masked step repeating the last valid output (zeros
// before the first), and the final states are that run's final states.
TEST(RecurrentMaskTest, MaskedStepsAreSkipped) {
  const Tensor x = RandomNormal(Shape{3, 5, 2}, 4, 0.0, 1.0, DType::kFloat64);
  // Right-padded, a gap in the middle, and masked from the start.
  const std::vector<std::vector<bool>> valid = {{true, true, true, false, false},
                                                {true, false, true, true, false},
                                                {false, false, true, true, true}};
  std::vector<int32_t> flat;
  for (const auto& row : valid) {
    for (bool v : row) flat.push_back(v ? 1 : 0);
  }
  const Tensor mask =
      NotEqual(Tensor::FromVector<int32_t>(flat, Shape{3, 5}), Tensor::Scalar<int32_t>(0));
  for (const std::string kind : {"simple", "lstm", "gru"}) {
    for (bool backwards : {false, true}) {
      SCOPED_TRACE(kind + (backwards ? " go_backwards" : ""));
      auto layer = Make(kind, {.return_sequences = true, .go_backwards = backwards, .seed = 5});
      const layers::RecurrentOutput got = layer->CallWithState(x, {}, mask);
      for (int64_t b = 0; b < 3; ++b) {
        // The reading order, and the valid steps in the input's order (the
        // layer reads them backwards itself when go_backwards).
        std::vector<int64_t> order, kept;
        for (int64_t i = 0; i < 5; ++i) order.push_back(backwards ? 4 - i : i);
        for (int64_t t = 0; t < 5; ++t) {
          if (valid[b][t]) kept.push_back(t);
        }
        const layers::RecurrentOutput ref = layer->CallWithState(Pick(x, b, kept));
        std::vector<double> last(3, 0.0);
        int64_t seen = 0;
        for (int64_t i = 0; i < 5; ++i) {
          if (valid[b][order[i]]) last = Row(ref.output, 0, seen++);
          ExpectNear(Row(got.output, b, i), last, 1e-12);
        }
        for (size_t s = 0; s < got.states.size(); ++s) {
          ExpectNear(Row(got.states[s], b), Row(ref.states[s], 0), 1e-12);
        }
      }
      // Without return_sequences the output is the last valid step's.
      auto last_only = Make(kind, {.go_backwards = backwards, .seed = 5});
      const Tensor final_output = last_only->CallWithState(x, {}, mask).output;
      for (int64_t b = 0; b < 3; ++b) {
        ExpectNear(Row(final_output, b), Row(got.output, b, 4), 1e-12);
      }
    }
  }
}

// Central differences of sum(lstm(x, mask) * w) with respect to x and the
// recurrent kernel; masked steps' inputs get exactly no gradient.
TEST(RecurrentMaskTest, GradientsMatchFiniteDifferences) {
  const Tensor x = RandomNormal(Shape{2, 4, 2}, 8, 0.0, 1.0, DType::kFloat64);
  const Tensor mask = Tensor::FromVector<int32_t>({1, 1, 0, 1, 0, 1, 1, 0}, Shape{2, 4});
  for (const std::string kind : {"lstm", "gru"}) {
    SCOPED_TRACE(kind);
    auto layer = Make(kind, {.return_sequences = true, .seed = 9});
    const Tensor w = RandomNormal(Shape{2, 4, 3}, 10, 0.0, 1.0, DType::kFloat64);
    auto loss_of = [&](const Tensor& input) {
      return ReduceSum(Mul(layer->CallWithState(input, {}, mask).output, w));
    };
    loss_of(x);  // builds
    Variable& rk = layer->recurrent_kernel();
    GradientTape tape;
    tape.Watch(x);
    const Tensor loss = loss_of(x);
    const std::vector<std::optional<Tensor>> grads = tape.Gradient(loss, {x});
    GradientTape tape_rk;
    const std::vector<std::optional<Tensor>> grad_rk =
        tape_rk.Gradient(loss_of(x), std::vector<const Variable*>{&rk});
    ASSERT_TRUE(grads[0] && grad_rk[0]);
    const double h = 1e-6;
    const std::vector<double> xs = x.ToVector<double>(), gx = grads[0]->ToVector<double>();
    const std::vector<int32_t> m = mask.ToVector<int32_t>();
    for (size_t i = 0; i < xs.size(); ++i) {
      std::vector<double> p = xs, q = xs;
      p[i] += h;
      q[i] -= h;
      const double fd = (loss_of(Tensor::FromVector<double>(p, x.shape())).ToVector<double>()[0] -
                         loss_of(Tensor::FromVector<double>(q, x.shape())).ToVector<double>()[0]) /
                        (2 * h);
      EXPECT_NEAR(gx[i], fd, 1e-6 * (1 + std::abs(fd))) << "d/dx at " << i;
      if (m[i / 2] == 0) {
        EXPECT_EQ(gx[i], 0.0) << "a masked step's input at " << i;
      }
    }
    const std::vector<double> base = rk.value().ToVector<double>();
    const std::vector<double> got = grad_rk[0]->ToVector<double>();
    for (size_t j = 0; j < base.size(); ++j) {
      std::vector<double> p = base, q = base;
      p[j] += h;
      q[j] -= h;
      rk.Assign(Tensor::FromVector<double>(p, rk.shape()));
      const double lp = loss_of(x).ToVector<double>()[0];
      rk.Assign(Tensor::FromVector<double>(q, rk.shape()));
      const double lm = loss_of(x).ToVector<double>()[0];
      rk.Assign(Tensor::FromVector<double>(base, rk.shape()));
      EXPECT_NEAR(got[j], (lp - lm) / (2 * h), 1e-6 * (1 + std::abs(lp - lm) / (2 * h)))
          << "d/d recurrent_kernel at " << j;
    }
  }
}

// Embedding(mask_zero) in a Sequential: ids padded with zeros give what the
// unpadded ids give, through a return_sequences LSTM (which passes the mask
// on) into a second LSTM and a Dense.
TEST(RecurrentMaskTest, SequentialCarriesEmbeddingsMask) {
  Sequential model;
  model.Add(std::make_unique<layers::Embedding>(10, 4, /*mask_zero=*/true, /*seed=*/1));
  model.Add(std::make_unique<LSTM>(3, RecurrentConfig{.return_sequences = true, .seed = 2}));
  model.Add(std::make_unique<GRU>(3, RecurrentConfig{.seed = 3}));
  model.Add(std::make_unique<Dense>(2));
  const std::vector<float> padded =
      model(Tensor::FromVector<int32_t>({4, 7, 2, 0, 0, 3, 9, 1, 5, 8}, Shape{2, 5}))
          .ToVector<float>();
  const std::vector<float> first =
      model(Tensor::FromVector<int32_t>({4, 7, 2}, Shape{1, 3})).ToVector<float>();
  const std::vector<float> second =
      model(Tensor::FromVector<int32_t>({3, 9, 1, 5, 8}, Shape{1, 5})).ToVector<float>();
  for (int k = 0; k < 2; ++k) {
    EXPECT_NEAR(padded[k], first[k], 1e-6) << k;
    EXPECT_NEAR(padded[2 + k], second[k], 1e-6) << k;
  }
  // Without mask_zero the padding is read as id 0: a different output.
  Sequential plain;
  plain.Add(std::make_unique<layers::Embedding>(10, 4, /*mask_zero=*/false, /*seed=*/1));
  plain.Add(std::make_unique<GRU>(3, RecurrentConfig{.seed = 3}));
  const Tensor unmasked = plain(Tensor::FromVector<int32_t>({4, 7, 2, 0, 0}, Shape{1, 5}));
  const Tensor cut = plain(Tensor::FromVector<int32_t>({4, 7, 2}, Shape{1, 3}));
  EXPECT_NE(unmasked.ToVector<float>(), cut.ToVector<float>());
}

TEST(RecurrentMaskTest, BadMasksNameTheLayer) {
  LSTM lstm(3, {.name = "encoder"});
  const Tensor x = RandomNormal(Shape{2, 4, 3}, 1);
  try {
    lstm.CallWithState(x, {}, Tensor::Zeros(Shape{2, 3}, DType::kBool));
    FAIL() << "a mask of the wrong length was taken";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("LSTM 'encoder'"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("expected a mask [2, 4]"));
  }
}

// Self-attention x [B, T, D] in float64 with random weights.
struct AttentionCase {
  MultiHeadAttention mha{2, 3, {.seed = 11}};
  Tensor x = RandomNormal(Shape{2, 4, 5}, 12, 0.0, 1.0, DType::kFloat64);
  AttentionCase() { mha(x); }
};

// Steps [begin, end) of x [B, T, D] for example b, as [1, end - begin, D].
Tensor Steps(const Tensor& x, int64_t b, int64_t begin, int64_t end) {
  std::vector<int64_t> steps;
  for (int64_t t = begin; t < end; ++t) steps.push_back(t);
  return Pick(x, b, steps);
}

// The causal mask: query i attends to keys 0..i, which is attention of the
// single query i over the prefix, unmasked.
TEST(AttentionMaskTest, CausalMaskAttendsToThePrefix) {
  AttentionCase c;
  const Tensor y = c.mha.Attend(c.x, c.x, std::nullopt, {.use_causal_mask = true});
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t i = 0; i < 4; ++i) {
      const Tensor ref = c.mha.Attend(Steps(c.x, b, i, i + 1), Steps(c.x, b, 0, i + 1));
      ExpectNear(Row(y, b, i), Row(ref, 0, 0), 1e-12);
    }
  }
  // Unmasked, the first query sees every key: a different output.
  EXPECT_GT(std::abs(Row(c.mha(c.x), 0, 0)[0] - Row(y, 0, 0)[0]), 1e-6);
}

// attention_mask and value_mask hide keys: the result is attention over the
// allowed keys alone; query_mask x value_mask is their outer product.
TEST(AttentionMaskTest, MasksHideKeys) {
  AttentionCase c;
  // Example 0 may see keys 0, 1; example 1 keys 1, 2, 3 (every query alike).
  const std::vector<std::vector<int64_t>> allowed = {{0, 1}, {1, 2, 3}};
  std::vector<int32_t> value_mask(8, 0), attention(2 * 4 * 4, 0);
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t j : allowed[b]) {
      value_mask[b * 4 + j] = 1;
      for (int64_t i = 0; i < 4; ++i) attention[(b * 4 + i) * 4 + j] = 1;
    }
  }
  const Tensor by_value = c.mha.Attend(
      c.x, c.x, std::nullopt, {.value_mask = Tensor::FromVector<int32_t>(value_mask, Shape{2, 4})});
  const Tensor by_attention =
      c.mha.Attend(c.x, c.x, std::nullopt,
                   {.attention_mask = Tensor::FromVector<int32_t>(attention, Shape{2, 4, 4})});
  for (int64_t b = 0; b < 2; ++b) {
    const Tensor ref = c.mha.Attend(Pick(c.x, b, {0, 1, 2, 3}), Pick(c.x, b, allowed[b]));
    for (int64_t i = 0; i < 4; ++i) {
      ExpectNear(Row(by_value, b, i), Row(ref, 0, i), 1e-12);
      ExpectNear(Row(by_attention, b, i), Row(ref, 0, i), 1e-12);
    }
  }
  // query_mask [B, T] and value_mask [B, S] combine as their outer product.
  const std::vector<int32_t> q = {1, 0, 1, 1, 1, 1, 0, 1}, v = {1, 1, 0, 1, 0, 1, 1, 1};
  std::vector<int32_t> outer(2 * 4 * 4);
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t j = 0; j < 4; ++j) outer[(b * 4 + i) * 4 + j] = q[b * 4 + i] * v[b * 4 + j];
    }
  }
  const Tensor both = c.mha.Attend(c.x, c.x, std::nullopt,
                                   {.query_mask = Tensor::FromVector<int32_t>(q, Shape{2, 4}),
                                    .value_mask = Tensor::FromVector<int32_t>(v, Shape{2, 4})});
  const Tensor as_one =
      c.mha.Attend(c.x, c.x, std::nullopt,
                   {.attention_mask = Tensor::FromVector<int32_t>(outer, Shape{2, 4, 4})});
  ExpectNear(both.ToVector<double>(), as_one.ToVector<double>(), 0.0);
  try {
    c.mha.Attend(c.x, c.x, std::nullopt, {.attention_mask = Tensor::Zeros(Shape{2, 4, 3})});
    FAIL() << "an attention_mask of the wrong shape was taken";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("attention_mask of shape [2,4,4]"));
  }
}

}  // namespace
}  // namespace eager
