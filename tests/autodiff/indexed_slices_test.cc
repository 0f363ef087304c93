// Sparse gradients: GradientTape::GradientKeepingSlices gives IndexedSlices
// for a variable read only through row lookups, and the optimizers take them
// as TF's lines do: Keras 3 squares each looked-up row (ops.square of the
// slices), everyone else sums repeated rows first. The references are the
// update formulas of keras/src/optimizers/{adam,rmsprop,adagrad}.py
// recomputed here in float32, one row summed in index order as
// UnsortedSegmentSum does; TF 2.21 judges the same on real Keras models
// (tests/tf_keras/keras_zoo_test.py, ids that repeat).
#if defined(__clang__)
#pragma clang fp contract(off)
#else
#pragma GCC optimize("fp-contract=off")
#endif

#include "autodiff/indexed_slices.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "autodiff/adagrad.h"
#include "autodiff/adam.h"
#include "autodiff/gradient_tape.h"
#include "autodiff/layers/embedding.h"
#include "autodiff/nadam.h"
#include "autodiff/rmsprop.h"
#include "autodiff/sgd.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/index_ops.h"
#include "ops/reduction_ops.h"
#include "runtime/errors.h"
#include "runtime/names.h"

namespace eager {
namespace {

class IndexedSlicesTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetDefaultNames(); }
};

// A [5, 3] table whose row r is r + 0.5 * column.
Tensor Table() {
  std::vector<float> v;
  for (int r = 0; r < 5; ++r) {
    for (int c = 0; c < 3; ++c) v.push_back(static_cast<float>(r) + 0.5f * static_cast<float>(c));
  }
  return Tensor::FromVector<float>(std::move(v), Shape{5, 3});
}

// Row weights for the three lookups of kIds: the loss is
// sum(Gather(table, ids) * Weights()), so lookup j's gradient row is row j.
Tensor Weights() { return Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, Shape{1, 3, 3}); }
const Tensor kIds = Tensor::FromVector<int32_t>({1, 1, 2}, Shape{1, 3});

// Options with learning rate 0.1, the rest Keras's defaults.
template <typename Options>
Options WithRate() {
  Options o;
  o.learning_rate = 0.1;
  return o;
}
AdamOptions AdamWithRate(bool amsgrad = false, std::optional<double> weight_decay = std::nullopt) {
  AdamOptions o = WithRate<AdamOptions>();
  o.amsgrad = amsgrad;
  o.weight_decay = weight_decay;
  return o;
}

Tensor LookupLoss(const Variable& table, const Tensor& ids) {
  return ReduceSum(Mul(Gather(table.value(), ids), Weights()));
}

TEST_F(IndexedSlicesTest, KeepsEachLookedUpRowUnsummed) {
  Variable table(Table(), "table");
  GradientTape tape;
  const Tensor loss = LookupLoss(table, kIds);
  std::vector<std::optional<GradientValue>> grads = tape.GradientKeepingSlices(loss, {&table});
  ASSERT_TRUE(grads[0].has_value());
  const auto* slices = std::get_if<IndexedSlices>(&*grads[0]);
  ASSERT_NE(slices, nullptr) << "a variable read only by a Gather gets IndexedSlices";
  EXPECT_EQ(slices->values.shape(), Shape({3, 3}));
  EXPECT_EQ(slices->values.ToVector<float>(), Weights().ToVector<float>());
  EXPECT_EQ(slices->indices.ToVector<int32_t>(), std::vector<int32_t>({1, 1, 2}));
  EXPECT_EQ(slices->dense_shape, Shape({5, 3}));

  // Summed, they are the dense gradient Gradient() gives.
  GradientTape dense_tape;
  const Tensor dense = *dense_tape.Gradient(LookupLoss(table, kIds), table);
  EXPECT_EQ(slices->ToDense().ToVector<float>(), dense.ToVector<float>());
  EXPECT_EQ(dense.ToVector<float>(),
            std::vector<float>({0, 0, 0, 5, 7, 9, 7, 8, 9, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(slices->SquaresToDense().ToVector<float>(),
            std::vector<float>({0, 0, 0, 17, 29, 45, 49, 64, 81, 0, 0, 0, 0, 0, 0}));
}

TEST_F(IndexedSlicesTest, TwoLookupsConcatenateWithWiderIndices) {
  Variable table(Table(), "table");
  GradientTape tape;
  const Tensor ids64 = Tensor::FromVector<int64_t>({4}, Shape{1});
  const Tensor loss = Add(LookupLoss(table, kIds), ReduceSum(Gather(table.value(), ids64)));
  const auto grads = tape.GradientKeepingSlices(loss, {&table});
  const auto& slices = std::get<IndexedSlices>(*grads[0]);
  // Both lookups' rows, in the order the tape reached them; int64 indices
  // as soon as one lookup used them.
  ASSERT_EQ(slices.indices.dtype(), DType::kInt64);
  std::vector<int64_t> indices = slices.indices.ToVector<int64_t>();
  std::sort(indices.begin(), indices.end());
  EXPECT_EQ(indices, std::vector<int64_t>({1, 1, 2, 4}));
  EXPECT_EQ(slices.values.shape(), Shape({4, 3}));
  GradientTape dense_tape;
  const Tensor dense = *dense_tape.Gradient(
      Add(LookupLoss(table, kIds), ReduceSum(Gather(table.value(), ids64))), table);
  EXPECT_EQ(slices.ToDense().ToVector<float>(), dense.ToVector<float>());
}

TEST_F(IndexedSlicesTest, AVariableAlsoReadDenselyGetsTheDenseSum) {
  Variable table(Table(), "table");
  Variable other(Tensor::FromVector<float>({2}, Shape{1}), "other");
  GradientTape tape;
  const Tensor loss = Add(LookupLoss(table, kIds), ReduceSum(Mul(table.value(), table.value())));
  const auto grads = tape.GradientKeepingSlices(loss, {&table, &other});
  ASSERT_TRUE(std::holds_alternative<Tensor>(*grads[0]));
  GradientTape dense_tape;
  const Tensor loss2 = Add(LookupLoss(table, kIds), ReduceSum(Mul(table.value(), table.value())));
  EXPECT_EQ(std::get<Tensor>(*grads[0]).ToVector<float>(),
            dense_tape.Gradient(loss2, table)->ToVector<float>());
  EXPECT_FALSE(grads[1].has_value()) << "an unconnected variable gets none";
}

TEST_F(IndexedSlicesTest, ATapeRecordingItsOwnBackwardPassStaysDense) {
  // A persistent tape records its backward pass, so a second derivative can
  // follow it: the Gather's gradient must be the dense op it records.
  Variable table(Table(), "table");
  GradientTape tape(/*persistent=*/true);
  const Tensor loss = LookupLoss(table, kIds);
  const auto grads = tape.GradientKeepingSlices(loss, {&table});
  ASSERT_TRUE(std::holds_alternative<Tensor>(*grads[0]));
  EXPECT_EQ(std::get<Tensor>(*grads[0]).ToVector<float>(),
            std::vector<float>({0, 0, 0, 5, 7, 9, 7, 8, 9, 0, 0, 0, 0, 0, 0}));
}

// One Keras 3 Adam step on the table, by Keras's formula, where `g` and `s`
// are the summed rows and the summed squared rows.
std::vector<float> Keras3AdamStep(const std::vector<float>& x0, const std::vector<float>& g,
                                  const std::vector<float>& s, std::vector<float>* v_out) {
  const float lr = 0.1f, eps = 1e-7f;
  const auto one_minus_b1 = static_cast<float>(1.0 - 0.9);
  const auto one_minus_b2 = static_cast<float>(1.0 - 0.999);
  const float alpha = lr * std::sqrt(1.0f - 0.999f) / (1.0f - 0.9f);
  std::vector<float> x = x0;
  v_out->assign(x.size(), 0.0f);
  for (size_t i = 0; i < x.size(); ++i) {
    const float m = 0.0f + (g[i] - 0.0f) * one_minus_b1;
    const float v = 0.0f + (s[i] - 0.0f) * one_minus_b2;
    (*v_out)[i] = v;
    x[i] = x[i] - (m * alpha) / (std::sqrt(v) + eps);
  }
  return x;
}

TEST_F(IndexedSlicesTest, Keras3AdamSquaresEachLookedUpRow) {
  Variable table(Table(), "table");
  Adam adam(AdamWithRate());
  adam.UseKerasLayout(KerasLayout::kKeras3);
  GradientTape tape;
  const auto grads = tape.GradientKeepingSlices(LookupLoss(table, kIds), {&table});
  std::vector<Variable*> vars = {&table};
  adam.ApplyGradients(grads, vars);

  const auto& slices = std::get<IndexedSlices>(*grads[0]);
  std::vector<float> v;
  const std::vector<float> want =
      Keras3AdamStep(Table().ToVector<float>(), slices.ToDense().ToVector<float>(),
                     slices.SquaresToDense().ToVector<float>(), &v);
  EXPECT_EQ(table.value().ToVector<float>(), want);
  EXPECT_EQ(adam.GetSlot(table, "v")->value().ToVector<float>(), v);
  // Row 1, looked up twice: v = 0.001 * (1 + 16, 4 + 25, 9 + 36), not the
  // square of the sum (25, 49, 81); Keras 3 moves it to 0.8787 (TF 2.21).
  EXPECT_NEAR(table.value().ToVector<float>()[3], 0.8787331f, 1e-6f);
  EXPECT_EQ(adam.iterations(), 1);
}

// Runs one step of `make()`'s optimizer in `layout` twice, on twins of the
// table: from IndexedSlices and from their dense sum. Returns both tables.
template <typename MakeOptimizer>
std::pair<std::vector<float>, std::vector<float>> SparseAndDenseStep(MakeOptimizer make,
                                                                     KerasLayout layout,
                                                                     const Tensor& ids) {
  Variable sparse_table(Table(), "table");
  Variable dense_table(Table(), "table");
  std::unique_ptr<Optimizer> sparse_opt = make();
  std::unique_ptr<Optimizer> dense_opt = make();
  sparse_opt->UseKerasLayout(layout);
  dense_opt->UseKerasLayout(layout);
  std::vector<Variable*> sparse_vars = {&sparse_table};
  std::vector<Variable*> dense_vars = {&dense_table};
  GradientTape tape;
  sparse_opt->ApplyGradients(
      tape.GradientKeepingSlices(LookupLoss(sparse_table, ids), {&sparse_table}), sparse_vars);
  GradientTape dense_tape;
  dense_opt->ApplyGradients(dense_tape.Gradient(LookupLoss(dense_table, ids), dense_vars),
                            dense_vars);
  return {sparse_table.value().ToVector<float>(), dense_table.value().ToVector<float>()};
}

std::vector<std::pair<std::string, std::function<std::unique_ptr<Optimizer>()>>> Squarers() {
  return {
      {"Adam", [] { return std::make_unique<Adam>(AdamWithRate()); }},
      {"AdamW", [] { return std::make_unique<Adam>(AdamWithRate(false, 0.004)); }},
      {"amsgrad Adam", [] { return std::make_unique<Adam>(AdamWithRate(true)); }},
      {"Nadam", [] { return std::make_unique<Nadam>(WithRate<NadamOptions>()); }},
      {"RMSprop", [] { return std::make_unique<RMSprop>(WithRate<RMSpropOptions>()); }},
      {"Adagrad", [] { return std::make_unique<Adagrad>(WithRate<AdagradOptions>()); }},
  };
}

TEST_F(IndexedSlicesTest, Keras3SquaringOptimizersDifferOnlyWhereIdsRepeat) {
  const Tensor distinct = Tensor::FromVector<int32_t>({1, 3, 2}, Shape{1, 3});
  for (const auto& [name, make] : Squarers()) {
    SCOPED_TRACE(name);
    // Repeated ids: Keras 3's update is not the dense one...
    auto [sparse, dense] = SparseAndDenseStep(make, KerasLayout::kKeras3, kIds);
    EXPECT_NE(sparse[3], dense[3]) << "row 1 was looked up twice";
    EXPECT_EQ(sparse[0], dense[0]) << "row 0 was not looked up";
    // ... and with distinct ids (each row's square is the square of its
    // sum) it is the dense update bit for bit.
    auto [sparse_distinct, dense_distinct] =
        SparseAndDenseStep(make, KerasLayout::kKeras3, distinct);
    EXPECT_EQ(sparse_distinct, dense_distinct);
  }
}

TEST_F(IndexedSlicesTest, OtherLayoutsSumRepeatedRowsFirst) {
  // tf_keras 2.11+ deduplicates sparse gradients, OptimizerV2 and TF1 sum
  // duplicate indices before _apply_sparse: the dense update.
  for (const auto& [name, make] : Squarers()) {
    SCOPED_TRACE(name);
    auto [sparse, dense] = SparseAndDenseStep(make, KerasLayout::kKeras2, kIds);
    EXPECT_EQ(sparse, dense);
  }
  auto adam = [] { return std::make_unique<Adam>(AdamWithRate()); };
  auto [sparse, dense] = SparseAndDenseStep(adam, KerasLayout::kKeras2Legacy, kIds);
  EXPECT_EQ(sparse, dense);
}

TEST_F(IndexedSlicesTest, Keras3AdagradAndRMSpropFollowKerasFormula) {
  const std::vector<float> x0 = Table().ToVector<float>();
  const std::vector<float> g = {0, 0, 0, 5, 7, 9, 7, 8, 9, 0, 0, 0, 0, 0, 0};
  const std::vector<float> s = {0, 0, 0, 17, 29, 45, 49, 64, 81, 0, 0, 0, 0, 0, 0};
  const float lr = 0.1f, eps = 1e-7f;
  std::vector<float> adagrad = x0, rmsprop = x0;
  const float rho = 0.9f, one_minus_rho = static_cast<float>(1.0 - 0.9);
  for (size_t i = 0; i < x0.size(); ++i) {
    const float accumulator = 0.1f + s[i];  // initial_accumulator_value 0.1
    adagrad[i] = adagrad[i] - (lr * g[i]) / std::sqrt(accumulator + eps);
    const float velocity = rho * 0.0f + one_minus_rho * s[i];
    rmsprop[i] = rmsprop[i] - (lr * g[i]) / std::sqrt(velocity + eps);
  }
  const auto squarers = Squarers();
  EXPECT_EQ(SparseAndDenseStep(squarers[5].second, KerasLayout::kKeras3, kIds).first, adagrad);
  EXPECT_EQ(SparseAndDenseStep(squarers[4].second, KerasLayout::kKeras3, kIds).first, rmsprop);
}

TEST_F(IndexedSlicesTest, MinimizeKeepsAnEmbeddingsSlices) {
  layers::Embedding embedding(5, 3);
  embedding.Build();
  embedding.embeddings().Assign(Table());
  Adam adam(AdamWithRate());
  adam.UseKerasLayout(KerasLayout::kKeras3);
  adam.Minimize([&] { return ReduceSum(Mul(embedding(kIds), Weights())); },
                {&embedding.embeddings()});
  std::vector<float> v;
  const std::vector<float> want =
      Keras3AdamStep(Table().ToVector<float>(), {0, 0, 0, 5, 7, 9, 7, 8, 9, 0, 0, 0, 0, 0, 0},
                     {0, 0, 0, 17, 29, 45, 49, 64, 81, 0, 0, 0, 0, 0, 0}, &v);
  EXPECT_EQ(embedding.embeddings().value().ToVector<float>(), want);
}

TEST_F(IndexedSlicesTest, SlicesThatDoNotFitChangeNothing) {
  Variable table(Table(), "table");
  Variable w(Tensor::FromVector<float>({1, 2}, Shape{2}), "w");
  Adam adam(AdamWithRate());
  adam.UseKerasLayout(KerasLayout::kKeras3);
  std::vector<Variable*> vars = {&w, &table};
  const Tensor w_grad = Tensor::FromVector<float>({1, 1}, Shape{2});
  const Tensor rows = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const Tensor ids = Tensor::FromVector<int32_t>({1, 2}, Shape{2});
  const auto expect_refused = [&](const IndexedSlices& slices, const std::string& words) {
    std::vector<std::optional<GradientValue>> grads = {GradientValue(w_grad),
                                                       GradientValue(slices)};
    try {
      adam.ApplyGradients(grads, vars);
      ADD_FAILURE() << "accepted slices: " << words;
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
    EXPECT_EQ(table.value().ToVector<float>(), Table().ToVector<float>());
    EXPECT_EQ(w.value().ToVector<float>(), std::vector<float>({1, 2}));
    EXPECT_EQ(adam.iterations(), 0);
  };
  expect_refused({rows, ids, Shape{4, 3}}, "variable 'table'");
  expect_refused({rows, ids, Shape{4, 3}}, "dense shape [4,3]");
  expect_refused({Tensor::FromVector<float>({1, 2, 3, 4}, Shape{2, 2}), ids, Shape{5, 3}},
                 "values float32 of shape [2,2]");
  expect_refused({rows, Tensor::FromVector<int32_t>({1}, Shape{1}), Shape{5, 3}},
                 "indices int32 of shape [1]");
  expect_refused({rows, Tensor::FromVector<float>({1, 2}, Shape{2}), Shape{5, 3}},
                 "int32/int64 index");
  expect_refused({rows, Tensor::FromVector<int32_t>({1, 7}, Shape{2}), Shape{5, 3}}, "7");
}

}  // namespace
}  // namespace eager
