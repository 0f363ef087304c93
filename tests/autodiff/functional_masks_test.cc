// Keras's masks in functional Models and Keras 3's numbering of the mask
// operations it records (autodiff/layer.h, autodiff/functional.h,
// autodiff/internal/keras_operations.h). The operation lists are those TF
// 2.21's Keras 3.15 showed for the same models (model.operations, or
// model._functional.operations for a Sequential; tests/tf_keras/
// keras_masks_test.py compares them live); the values are checked against
// the same layers run on only the valid steps, or computed by hand.

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "autodiff/dense.h"
#include "autodiff/functional.h"
#include "autodiff/input_layer.h"
#include "autodiff/layers/attention.h"
#include "autodiff/layers/conv.h"
#include "autodiff/layers/embedding.h"
#include "autodiff/layers/masking.h"
#include "autodiff/layers/merging.h"
#include "autodiff/layers/normalization.h"
#include "autodiff/layers/pooling.h"
#include "autodiff/layers/recurrent.h"
#include "autodiff/layers/regularization.h"
#include "autodiff/sequential.h"
#include "ops/array_ops.h"
#include "ops/random_generator.h"
#include "ops/shape_ops.h"
#include "runtime/errors.h"

namespace eager {
namespace {

using layers::Embedding;
using layers::GRU;
using layers::LSTM;
using layers::RecurrentConfig;

// Keras 3's model.operations as class-like names: "Input", "Layer" or the
// mask op's class.
std::vector<std::string> Kinds(const Model& model) {
  std::vector<std::string> kinds;
  for (const KerasOperation& op : model.keras3_operations()) {
    if (op.layer == nullptr) {
      kinds.emplace_back(op.mask_op);
    } else {
      kinds.emplace_back(dynamic_cast<InputLayer*>(op.layer) != nullptr ? "Input"
                                                                        : op.layer->name());
    }
  }
  return kinds;
}

// The "_operations" edges of a Keras 3 Sequential, by name.
std::vector<std::string> SequentialEdges(Sequential& model) {
  SetKerasLayout(model, KerasLayout::kKeras3);
  std::vector<std::string> edges;
  Trackable* functional = nullptr;
  for (const Trackable::Child& c : model.Children()) {
    if (c.name == "_functional") functional = c.object;
  }
  Trackable* operations = functional->Children().at(0).object;
  for (const Trackable::Child& c : operations->Children()) {
    Layer* layer = dynamic_cast<Layer*>(c.object);
    edges.push_back(c.name + ":" + (layer != nullptr ? layer->name() : "input"));
  }
  return edges;
}

Tensor Ids(const std::vector<int32_t>& ids, int64_t batch) {
  return Tensor::FromVector<int32_t>(ids, Shape{batch, static_cast<int64_t>(ids.size()) / batch});
}

void ExpectNear(const Tensor& got, const Tensor& want, double tol) {
  ASSERT_EQ(got.shape(), want.shape());
  const std::vector<double> g = Cast(got, DType::kFloat64).ToVector<double>();
  const std::vector<double> w = Cast(want, DType::kFloat64).ToVector<double>();
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], tol) << i;
}

// Embedding(mask_zero) -> LSTM -> Dense: the NotEqual of the ids comes
// between the Embedding and the LSTM that takes it as its mask, and the
// prediction of padded ids is that of the ids without their padding.
TEST(FunctionalMaskTest, EmbeddingMaskReachesTheRecurrentLayer) {
  Embedding embedding(10, 4, /*mask_zero=*/true, /*seed=*/1, DType::kFloat32, "embedding");
  LSTM lstm(3, RecurrentConfig{.seed = 2, .name = "lstm"});
  Dense dense(2, nullptr, true, std::nullopt, "dense");
  const KerasTensor ids = Input({-1}, DType::kInt32, "ids");
  Model model({ids}, {dense(lstm(embedding(ids)))});
  EXPECT_EQ(Kinds(model),
            (std::vector<std::string>{"Input", "embedding", "NotEqual", "lstm", "dense"}));
  // The layers alone (config.json's and .weights.h5's order), and tf_keras's
  // order, have no mask op.
  ASSERT_EQ(model.operations().size(), 4u);
  EXPECT_EQ(model.tf_keras_layers(), model.operations());
  const Tensor padded = model(Ids({4, 7, 2, 0, 0, 3, 9, 1, 5, 8}, 2));
  ExpectNear(Slice(padded, {0, 0}, {1, 2}), model(Ids({4, 7, 2}, 1)), 1e-6);
  ExpectNear(Slice(padded, {1, 0}, {1, 2}), model(Ids({3, 9, 1, 5, 8}, 1)), 1e-6);
  // Keras 3's checkpoint indices skip the NotEqual.
  SetKerasLayout(model, KerasLayout::kKeras3);
  std::vector<std::string> edges;
  for (const Trackable::Child& c : model.Children()) {
    if (c.name != "_operations") continue;
    for (const Trackable::Child& op : c.object->Children()) edges.push_back(op.name);
  }
  EXPECT_EQ(edges, (std::vector<std::string>{"0", "1", "3", "4"}));
}

// The mask passes through layers that support masking (Dense, Dropout) and
// is dropped by those that do not (Conv1D), as Keras 3's; the NotEqual sits
// right before its consumer. Sequential numbers the same way.
TEST(FunctionalMaskTest, PassThroughAndDroppingLayers) {
  {
    Sequential model;
    model.Add(std::make_unique<Embedding>(10, 4, true, 1, DType::kFloat32, "embedding"));
    model.Add(std::make_unique<Dense>(4, nullptr, true, std::nullopt, "dense"));
    model.Add(std::make_unique<LSTM>(3, RecurrentConfig{.seed = 2, .name = "lstm"}));
    model.Add(std::make_unique<Dense>(2, nullptr, true, std::nullopt, "dense_1"));
    // [InputLayer, Embedding, Dense, NotEqual, LSTM, Dense]
    EXPECT_EQ(SequentialEdges(model), (std::vector<std::string>{"0:input", "1:embedding", "2:dense",
                                                                "4:lstm", "5:dense_1"}));
    const Tensor padded = model(Ids({4, 7, 2, 0, 0}, 1));
    ExpectNear(padded, model(Ids({4, 7, 2}, 1)), 1e-6);
  }
  {
    // Conv1D drops the mask: no NotEqual, and the padding counts.
    Sequential model;
    model.Add(std::make_unique<Embedding>(10, 4, true, 1, DType::kFloat32, "embedding"));
    model.Add(
        std::make_unique<layers::Conv1D>(4, 2, layers::Conv1DConfig{.seed = 5, .name = "conv1d"}));
    model.Add(std::make_unique<LSTM>(3, RecurrentConfig{.seed = 2, .name = "lstm"}));
    EXPECT_EQ(SequentialEdges(model),
              (std::vector<std::string>{"0:input", "1:embedding", "2:conv1d", "3:lstm"}));
    const Tensor ids = Ids({4, 7, 2, 0, 0}, 1);
    auto& conv = *model.layers()[1];
    auto& rnn = *model.layers()[2];
    ExpectNear(model(ids), rnn(conv((*model.layers()[0])(ids))), 1e-6);
  }
  {
    // Nothing takes the mask: no NotEqual.
    Sequential model;
    model.Add(std::make_unique<Embedding>(10, 4, true, 1, DType::kFloat32, "embedding"));
    model.Add(std::make_unique<Dense>(2, nullptr, true, std::nullopt, "dense"));
    EXPECT_EQ(SequentialEdges(model),
              (std::vector<std::string>{"0:input", "1:embedding", "2:dense"}));
  }
}

// A nested Model or Sequential takes its input's mask into its layers, and
// its output keeps the mask its layers made, as Keras 3 runs them (its
// Functional.call sets the masks on its inputs; TF 2.21 predicts so, see
// keras_functional_masks_test.py's fn-nested kinds). Keras 3 records the
// NotEqual before the nested model, whose call takes the mask, and none
// after it: its symbolic output has no mask.
TEST(FunctionalMaskTest, NestedModelsTakeAndKeepMasks) {
  const Tensor ids = Ids({4, 7, 2, 0, 0, 3, 9, 1, 5, 8}, 2);
  const Tensor first = Ids({4, 7, 2}, 1), second = Ids({3, 9, 1, 5, 8}, 1);
  {
    // The mask goes in: an outer Embedding into an inner LSTM.
    LSTM lstm(3, RecurrentConfig{.seed = 2, .name = "lstm"});
    const KerasTensor steps = Input({-1, 4}, DType::kFloat32, "steps");
    Model inner({steps}, {lstm(steps)}, "inner");
    Embedding embedding(10, 4, true, 1, DType::kFloat32, "embedding");
    const KerasTensor x = Input({-1}, DType::kInt32, "ids");
    Model outer({x}, {inner(embedding(x))});
    EXPECT_EQ(Kinds(outer), (std::vector<std::string>{"Input", "embedding", "NotEqual", "inner"}));
    const Tensor padded = outer(ids);
    ExpectNear(Slice(padded, {0, 0}, {1, 3}), outer(first), 1e-6);
    ExpectNear(Slice(padded, {1, 0}, {1, 3}), outer(second), 1e-6);
  }
  {
    // The mask comes out: an inner Embedding into an outer LSTM.
    Embedding embedding(10, 4, true, 1, DType::kFloat32, "embedding");
    const KerasTensor inner_ids = Input({-1}, DType::kInt32, "inner_ids");
    Model inner({inner_ids}, {embedding(inner_ids)}, "inner");
    LSTM lstm(3, RecurrentConfig{.seed = 2, .name = "lstm"});
    const KerasTensor x = Input({-1}, DType::kInt32, "ids");
    Model outer({x}, {lstm(inner(x))});
    EXPECT_EQ(Kinds(outer), (std::vector<std::string>{"Input", "inner", "lstm"}));
    const Tensor padded = outer(ids);
    ExpectNear(Slice(padded, {0, 0}, {1, 3}), outer(first), 1e-6);
    ExpectNear(Slice(padded, {1, 0}, {1, 3}), outer(second), 1e-6);
  }
  {
    // Through a nested Sequential whose Dense passes the mask on.
    Sequential model;
    model.Add(std::make_unique<Embedding>(10, 4, true, 1, DType::kFloat32, "embedding"));
    // Its InputLayer, the first layer it calls, passes the mask on.
    auto inner = std::make_unique<Sequential>("inner");
    inner->Add(std::make_unique<InputLayer>(Shape::Partial({-1, 4})));
    inner->Add(std::make_unique<Dense>(4, nullptr, true, 3, "dense"));
    model.Add(std::move(inner));
    model.Add(std::make_unique<LSTM>(3, RecurrentConfig{.seed = 2, .name = "lstm"}));
    // [InputLayer, Embedding, NotEqual, Sequential, LSTM]
    EXPECT_EQ(SequentialEdges(model),
              (std::vector<std::string>{"0:input", "1:embedding", "3:inner", "4:lstm"}));
    const Tensor padded = model(ids);
    ExpectNear(Slice(padded, {0, 0}, {1, 3}), model(first), 1e-6);
    ExpectNear(Slice(padded, {1, 0}, {1, 3}), model(second), 1e-6);
  }
}

// Masking(0) before an LSTM: Keras 3 records NotEqual (before the Masking,
// its parent being the input) and Any; the masked steps are skipped.
TEST(FunctionalMaskTest, MaskingLayer) {
  layers::Masking masking(0.0, "masking");
  LSTM lstm(3, RecurrentConfig{.seed = 2, .name = "lstm"});
  const KerasTensor x = Input({-1, 2}, DType::kFloat32, "x");
  Model model({x}, {lstm(masking(x))});
  EXPECT_EQ(Kinds(model),
            (std::vector<std::string>{"Input", "NotEqual", "masking", "Any", "lstm"}));
  const Tensor seq = Tensor::FromVector<float>({1, 2, 0, 0, 3, -1, 0, 0}, Shape{1, 4, 2});
  const Tensor valid = Tensor::FromVector<float>({1, 2, 3, -1}, Shape{1, 2, 2});
  ExpectNear(model(seq), lstm(valid), 1e-6);
  // The layer's own values: zeros where every feature equals the value, and
  // the mask any(x != value) over the features.
  const Tensor partly = Tensor::FromVector<float>({5, 0, 5, 5, 0, 5}, Shape{1, 3, 2});
  layers::Masking fives(5.0);
  EXPECT_EQ(fives(partly).ToVector<float>(), (std::vector<float>{5, 0, 0, 0, 0, 5}));
  EXPECT_EQ(fives.ComputeMask(partly, std::nullopt)->ToVector<bool>(),
            (std::vector<bool>{true, false, true}));
}

// GlobalAveragePooling1D takes the mask (a NotEqual before it) and averages
// the valid steps only; its output has no mask.
TEST(FunctionalMaskTest, GlobalAveragePooling1DAveragesValidSteps) {
  Embedding embedding(10, 2, true, 1, DType::kFloat32, "embedding");
  layers::GlobalAveragePooling1D pool(false, "pool");
  const KerasTensor ids = Input({4}, DType::kInt32, "ids");
  Model model({ids}, {pool(embedding(ids))});
  EXPECT_EQ(Kinds(model), (std::vector<std::string>{"Input", "embedding", "NotEqual", "pool"}));
  const Tensor table = embedding.embeddings().value();
  const std::vector<float> t = table.ToVector<float>();
  const std::vector<float> got = model(Ids({3, 0, 5, 0}, 1)).ToVector<float>();
  ASSERT_EQ(got.size(), 2u);
  for (int k = 0; k < 2; ++k) EXPECT_NEAR(got[k], (t[3 * 2 + k] + t[5 * 2 + k]) / 2, 1e-6) << k;
  // Every step masked: 0 / 0, NaN, as Keras's.
  EXPECT_TRUE(std::isnan(model(Ids({0, 0, 0, 0}, 1)).ToVector<float>()[0]));
}

// Merges: in Keras 3 Add ORs the masks (LogicalOr, none when one input has
// none) and Concatenate broadcasts, concatenates and reduces them (its ops in
// Keras 3's order); tf_keras ANDs the masks present.
TEST(FunctionalMaskTest, MergedMasks) {
  Embedding e1(10, 4, true, 1, DType::kFloat32, "e1"), e2(10, 4, true, 2, DType::kFloat32, "e2"),
      plain(10, 4, false, 3, DType::kFloat32, "plain");
  LSTM l1(3, RecurrentConfig{.seed = 4, .name = "l1"});
  LSTM l2(3, RecurrentConfig{.seed = 5, .name = "l2"});
  LSTM l3(3, RecurrentConfig{.seed = 6, .name = "l3"});
  const KerasTensor a = Input({5}, DType::kInt32, "a"), b = Input({5}, DType::kInt32, "b");
  layers::Add add(std::string_view("add")), add_one(std::string_view("add_one"));
  layers::Concatenate concat(-1, "concat");
  Model added({a, b}, {l1(add({e1(a), e2(b)}))});
  EXPECT_EQ(Kinds(added), (std::vector<std::string>{"Input", "Input", "e1", "e2", "NotEqual",
                                                    "NotEqual", "add", "LogicalOr", "l1"}));
  Model one_mask({a, b}, {l2(add_one({e1(a), plain(b)}))});
  EXPECT_EQ(Kinds(one_mask),
            (std::vector<std::string>{"Input", "Input", "e1", "plain", "add_one", "l2"}));
  Model joined({a, b}, {l3(concat({e1(a), e2(b)}))});
  EXPECT_EQ(Kinds(joined), (std::vector<std::string>{
                               "Input", "Input", "e1", "e2", "NotEqual", "NotEqual", "ExpandDims",
                               "ZerosLike", "ExpandDims", "ZerosLike", "LogicalOr", "LogicalOr",
                               "Concatenate", "concat", "Any", "l3"}));
  // Keras 3's masks: the OR, a step is skipped only where both ids are 0.
  SetKerasLayout(added, KerasLayout::kKeras3);
  SetKerasLayout(joined, KerasLayout::kKeras3);
  const Tensor ia = Ids({4, 0, 2, 0, 0}, 1), ib = Ids({1, 3, 0, 0, 0}, 1);
  const Tensor sum = add({e1(ia), e2(ib)});
  const Tensor valid = Slice(sum, {0, 0, 0}, {1, 3, 4});
  ExpectNear(added({ia, ib})[0], l1(valid), 1e-6);
  ExpectNear(joined({ia, ib})[0], l3(Slice(concat({e1(ia), e2(ib)}), {0, 0, 0}, {1, 3, 8})), 1e-6);
  // Masks computed at run time, by hand.
  const std::vector<std::optional<Tensor>> masks = {
      Tensor::FromVector<bool>({true, false, true}, Shape{1, 3}),
      Tensor::FromVector<bool>({false, false, true}, Shape{1, 3})};
  const std::vector<Tensor> xs = {Tensor::Zeros(Shape{1, 3, 2}, DType::kFloat32),
                                  Tensor::Zeros(Shape{1, 3, 2}, DType::kFloat32)};
  EXPECT_EQ(add.ComputeMaskMany(xs, masks)->ToVector<bool>(),
            (std::vector<bool>{true, false, true}));
  EXPECT_FALSE(add.ComputeMaskMany(xs, {masks[0], std::nullopt}).has_value());
  EXPECT_EQ(concat.ComputeMaskMany(xs, {std::nullopt, masks[1]})->ToVector<bool>(),
            (std::vector<bool>{true, true, true}));
  EXPECT_EQ(concat.ComputeMaskMany(xs, masks)->ToVector<bool>(),
            (std::vector<bool>{true, false, true}));
  // tf_keras's: the AND of the masks present, in both kinds of merge.
  SetKerasLayout(added, KerasLayout::kKeras2);
  SetKerasLayout(joined, KerasLayout::kKeras2);
  EXPECT_EQ(add.ComputeMaskMany(xs, masks)->ToVector<bool>(),
            (std::vector<bool>{false, false, true}));
  EXPECT_EQ(add.ComputeMaskMany(xs, {masks[0], std::nullopt})->ToVector<bool>(),
            (std::vector<bool>{true, false, true}));
  EXPECT_EQ(concat.ComputeMaskMany(xs, {std::nullopt, masks[1]})->ToVector<bool>(),
            (std::vector<bool>{false, false, true}));
  EXPECT_EQ(concat.ComputeMaskMany(xs, masks)->ToVector<bool>(),
            (std::vector<bool>{false, false, true}));
  const Tensor both = Slice(sum, {0, 0, 0}, {1, 1, 4});  // only step 0 has both ids
  ExpectNear(added({ia, ib})[0], l1(both), 1e-6);
}

// Self-attention after an Embedding(mask_zero) in a functional model uses the
// ids' mask as query and value mask, as Keras 3's (its NotEqual then goes
// to the GlobalAveragePooling1D that takes the passed-on mask).
TEST(FunctionalMaskTest, AttentionTakesTheInputsMasks) {
  Embedding embedding(10, 4, true, 1, DType::kFloat32, "embedding");
  layers::MultiHeadAttention mha(2, 3, {.seed = 7, .name = "mha"});
  layers::GlobalAveragePooling1D pool(false, "pool");
  const KerasTensor ids = Input({5}, DType::kInt32, "ids");
  const KerasTensor e = embedding(ids);
  Model model({ids}, {pool(mha({e, e}))});
  EXPECT_EQ(Kinds(model),
            (std::vector<std::string>{"Input", "embedding", "mha", "NotEqual", "pool"}));
  const Tensor x = Ids({4, 7, 2, 0, 0}, 1);
  const Tensor ex = embedding(x);
  const std::optional<Tensor> mask = embedding.ComputeMask(x);
  const Tensor attended =
      mha.Attend(ex, ex, std::nullopt, {.query_mask = mask, .value_mask = mask});
  ExpectNear(model(x), pool.CallMasked(attended, mask, false), 1e-6);
}

// BatchNormalization's training call with a mask: the batch moments are
// over the valid positions only (Keras 3's, with its 1e-7 in the count),
// seen in the moving statistics (momentum 0: they become the batch's) and
// in the output of a valid position.
TEST(FunctionalMaskTest, BatchNormalizationTrainsOnValidPositions) {
  layers::BatchNormalization bn(/*momentum=*/0.0, /*epsilon=*/1e-3);
  // [1, 4, 1]: values 1, 2, 100, 3; the third step masked.
  const Tensor x = Tensor::FromVector<double>({1, 2, 100, 3}, Shape{1, 4, 1});
  const Tensor mask = Tensor::FromVector<bool>({true, true, false, true}, Shape{1, 4});
  const Tensor y = bn.CallMasked(x, mask, /*training=*/true);
  const double count = 3 + 1e-7, mean = 6 / count;
  double sq = 0;
  for (double v : {1.0, 2.0, 3.0}) sq += (v - mean) * (v - mean);
  const double variance = sq / count;
  EXPECT_NEAR(bn.moving_mean().value().ToVector<double>()[0], mean, 1e-12);
  EXPECT_NEAR(bn.moving_variance().value().ToVector<double>()[0], variance, 1e-12);
  EXPECT_NEAR(y.ToVector<double>()[0], (1 - mean) / std::sqrt(variance + 1e-3), 1e-9);
  // Without the mask the masked value counts.
  layers::BatchNormalization plain(0.0, 1e-3);
  plain(x, /*training=*/true);
  EXPECT_NEAR(plain.moving_mean().value().ToVector<double>()[0], 26.5, 1e-12);
}

}  // namespace
}  // namespace eager
