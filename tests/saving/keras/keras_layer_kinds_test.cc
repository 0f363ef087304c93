// The layer library in Keras 3's files (keras_layer_kinds.h's registry):
// every layer kind through .keras and .weights.h5 with eager on both sides,
// Keras's group keys, building an unbuilt model from a file's shapes, and
// layers or files that do not fit, each a clear error naming the thing.
// tests/tf_keras/keras_layer_files_test.py has Keras 3 itself judge them.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "autodiff/activations.h"
#include "autodiff/flatten.h"
#include "autodiff/input_layer.h"
#include "autodiff/layers/attention.h"
#include "autodiff/layers/conv.h"
#include "autodiff/layers/embedding.h"
#include "autodiff/layers/normalization.h"
#include "autodiff/layers/pooling.h"
#include "autodiff/layers/recurrent.h"
#include "autodiff/layers/regularization.h"
#include "autodiff/layers/reshaping.h"
#include "eager.h"
#include "saving/keras/internal/h5_file.h"
#include "saving/keras/keras_model.h"
#include "saving/keras/keras_weights.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

namespace L = eager::layers;
using Array2 = std::array<int64_t, 2>;

template <typename Fn>
void ExpectError(Fn fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    for (const std::string& part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "'" << part << "' not in: " << e.what();
    }
  }
}

Tensor Images(int64_t h, int64_t w, int64_t c) {
  std::vector<float> v(static_cast<size_t>(2 * h * w * c));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7) % 11) / 10.f - 0.5f;
  return Tensor::FromVector<float>(v, Shape{2, h, w, c});
}

// Three Sequentials that together hold every kind; `which` picks one.
std::unique_ptr<Sequential> Model(int which) {
  auto m = std::make_unique<Sequential>("m");
  if (which == 0) {
    m->Add(std::make_unique<InputLayer>(Shape{8, 8, 3}));
    m->Add(std::make_unique<L::Conv2D>(4, Array2{3, 3},
                                       L::Conv2DConfig{.padding = "same", .activation = Relu}));
    m->Add(std::make_unique<L::BatchNormalization>(0.9, 1e-2, true, false));
    m->Add(std::make_unique<L::DepthwiseConv2D>(Array2{3, 3},
                                                L::DepthwiseConv2DConfig{.depth_multiplier = 2}));
    m->Add(std::make_unique<L::SeparableConv2D>(3, Array2{2, 2}));
    m->Add(
        std::make_unique<L::Conv2DTranspose>(2, Array2{2, 2}, L::Conv2DConfig{.strides = {2, 2}}));
    m->Add(std::make_unique<L::ZeroPadding2D>(1, 0, 2, 1));
    m->Add(std::make_unique<L::Cropping2D>(0, 1, 1, 0));
    m->Add(std::make_unique<L::MaxPooling2D>());
    m->Add(
        std::make_unique<L::AveragePooling2D>(Array2{2, 2}, L::Pooling2DConfig{.padding = "same"}));
    m->Add(std::make_unique<L::Conv2D>(2, Array2{1, 1}, L::Conv2DConfig{.use_bias = false}));
    m->Add(std::make_unique<L::GlobalAveragePooling2D>(true));
    m->Add(std::make_unique<L::GlobalMaxPooling2D>());
    m->Add(std::make_unique<L::Dropout>(0.3));
    m->Add(std::make_unique<Dense>(2, Sigmoid));
  } else if (which == 1) {
    m->Add(std::make_unique<InputLayer>(Shape{6}));
    m->Add(std::make_unique<L::Embedding>(10, 4, true));
    m->Add(std::make_unique<L::Conv1D>(3, 2, L::Conv1DConfig{.padding = "causal"}));
    m->Add(std::make_unique<L::MaxPooling1D>(2));
    m->Add(std::make_unique<L::AveragePooling1D>(1));
    m->Add(std::make_unique<L::LayerNormalization>(1e-3, false, true));
    m->Add(std::make_unique<L::GlobalMaxPooling1D>());
    m->Add(std::make_unique<L::RepeatVector>(2));
    m->Add(std::make_unique<L::Permute>(std::vector<int64_t>{2, 1}));
    m->Add(std::make_unique<L::Reshape>(std::vector<int64_t>{-1}));
    m->Add(std::make_unique<L::Activation>("tanh"));
    m->Add(std::make_unique<Flatten>());
    m->Add(std::make_unique<Dense>(2));
  } else if (which == 2) {
    m->Add(std::make_unique<InputLayer>(Shape{5, 3}));
    m->Add(std::make_unique<L::GlobalAveragePooling1D>());
    m->Add(std::make_unique<Dense>(2, nullptr, false));
  } else {
    // The recurrent layers: their variables sit in a "cell" sublayer group.
    m->Add(std::make_unique<InputLayer>(Shape{5, 3}));
    m->Add(std::make_unique<L::SimpleRNN>(4, L::RecurrentConfig{.return_sequences = true}));
    m->Add(std::make_unique<L::LSTM>(
        4, L::RecurrentConfig{.return_sequences = true, .go_backwards = true}));
    m->Add(std::make_unique<L::GRU>(
        3, L::RecurrentConfig{.return_sequences = true, .reset_after = false}));
    m->Add(std::make_unique<L::GRU>(3, L::RecurrentConfig{.use_bias = false}));
    m->Add(std::make_unique<Dense>(2));
  }
  return m;
}

Tensor ModelInput(int which) {
  if (which == 0) return Images(8, 8, 3);
  if (which == 1) {
    return Tensor::FromVector<int32_t>({1, 2, 3, 0, 9, 4, 5, 6, 7, 8, 0, 1}, Shape{2, 6});
  }
  if (which == 2) return Tensor::FromVector<float>(std::vector<float>(30, 0.5f), Shape{2, 5, 3});
  std::vector<float> v(30);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 5) % 7) / 7.f - 0.4f;
  return Tensor::FromVector<float>(v, Shape{2, 5, 3});
}

// A BatchNormalization with moving statistics that are not the initial ones.
void Train(Sequential& model, const Tensor& x) {
  model(x);
  for (Variable* v : model.NonTrainableVariables())
    v->Assign(Add(v->value(), Tensor::Scalar<float>(0.25f)));
}

TEST(KerasLayerKinds, EveryKindRoundTripsThroughDotKeras) {
  const std::string dir = testing::TempDir();
  for (int which = 0; which < 4; ++which) {
    SCOPED_TRACE(which);
    auto model = Model(which);
    const Tensor x = ModelInput(which);
    Train(*model, x);
    Adam adam(0.01);
    adam.Minimize([&] { return ReduceSum(Square((*model)(x, true))); },
                  model->TrainableVariables());
    const std::string path = StrCat(dir, "/m", which, ".keras");
    SaveKerasModel(path, *model, &adam, "mse");
    KerasModel loaded = LoadKerasModel(path);
    ASSERT_EQ(loaded.model->layers().size(), model->layers().size());
    for (size_t i = 0; i < model->layers().size(); ++i) {
      EXPECT_EQ(loaded.model->layers()[i]->name(), model->layers()[i]->name());
    }
    EXPECT_EQ((*loaded.model)(x).ValuesString(1000), (*model)(x).ValuesString(1000));
    ASSERT_NE(loaded.optimizer, nullptr);
    EXPECT_EQ(loaded.optimizer->GetSlot(*loaded.model->TrainableVariables()[0], "v")
                  ->value()
                  .ValuesString(1000),
              adam.GetSlot(*model->TrainableVariables()[0], "v")->value().ValuesString(1000));
  }
}

TEST(KerasLayerKinds, WeightsBuildAnUnbuiltModelFromTheFilesShapes) {
  const std::string dir = testing::TempDir();
  for (int which = 0; which < 4; ++which) {
    SCOPED_TRACE(which);
    auto model = Model(which);
    const Tensor x = ModelInput(which);
    Train(*model, x);
    const std::string path = StrCat(dir, "/m", which, ".weights.h5");
    SaveKerasWeights(path, *model);
    auto fresh = Model(which);  // unbuilt: every layer is built from the file
    LoadKerasWeights(path, *fresh);
    EXPECT_EQ((*fresh)(x).ValuesString(1000), (*model)(x).ValuesString(1000));
  }
}

TEST(KerasLayerKinds, GroupKeysAreKerasSnakeCaseClassNames) {
  const std::string dir = testing::TempDir();
  auto model = Model(0);
  Train(*model, ModelInput(0));
  SaveKerasWeights(dir + "/m.weights.h5", *model);
  const keras_internal::H5Contents c = keras_internal::ReadH5File(dir + "/m.weights.h5");
  for (const char* key : {"layers/conv2d/vars/0", "layers/conv2d/vars/1", "layers/conv2d_1/vars/0",
                          "layers/batch_normalization/vars/2", "layers/depthwise_conv2d/vars/1",
                          "layers/separable_conv2d/vars/2", "layers/conv2d_transpose/vars/0",
                          "layers/dense/vars/1"}) {
    EXPECT_EQ(c.datasets.count(key), 1u) << key;
  }
  // BatchNormalization without scale: beta, moving_mean, moving_variance.
  EXPECT_EQ(c.datasets.count("layers/batch_normalization/vars/3"), 0u);
  EXPECT_EQ(c.datasets.count("layers/conv2d_1/vars/1"), 0u);  // use_bias false
  for (const char* group : {"layers/max_pooling2d/vars", "layers/zero_padding2d/vars",
                            "layers/global_max_pooling2d/vars", "layers/dropout/vars"}) {
    EXPECT_EQ(c.groups.count(group), 1u) << group;
  }
}

// Keras 3's sublayer groups: an RNN's variables under "cell", written with
// the cell's name; MultiHeadAttention's under its four projections, with the
// weightless "_softmax" and "_dropout_layer" groups; a functional model with
// attention round-trips, and a cell of the wrong shape names its group.
TEST(KerasLayerKinds, SublayerGroupsAreKeras3s) {
  const std::string dir = testing::TempDir();
  auto model = Model(3);
  const Tensor x = ModelInput(3);
  model->Call(x);
  SaveKerasWeights(dir + "/rnn.weights.h5", *model);
  const keras_internal::H5Contents c = keras_internal::ReadH5File(dir + "/rnn.weights.h5");
  for (const char* key : {"layers/simple_rnn/cell/vars/0", "layers/lstm/cell/vars/2",
                          "layers/gru/cell/vars/2", "layers/gru_1/cell/vars/1"}) {
    EXPECT_EQ(c.datasets.count(key), 1u) << key;
  }
  EXPECT_EQ(c.datasets.count("layers/gru_1/cell/vars/2"), 0u);  // use_bias false
  EXPECT_EQ(c.datasets.count("layers/lstm/vars/0"), 0u);
  EXPECT_EQ(c.groups.count("layers/lstm/vars"), 1u);
  // GRU with reset_after false has one bias row: [3 gates * 3 units].
  EXPECT_EQ(c.datasets.at("layers/gru/cell/vars/2").shape, Shape{9});

  const KerasTensor q = Input({4, 6}, DType::kFloat32, "q");
  const KerasTensor v = Input({3, 5}, DType::kFloat32, "v");
  L::MultiHeadAttention mha(2, 3, {.value_dim = 2, .name = "mha"});
  Dense head(2, nullptr, true, std::nullopt, "head");
  eager::Model attention({q, v}, {head(mha({q, v}))}, "attention");
  SaveKerasWeights(dir + "/mha.weights.h5", attention);
  const keras_internal::H5Contents a = keras_internal::ReadH5File(dir + "/mha.weights.h5");
  EXPECT_EQ(a.datasets.at("layers/multi_head_attention/query_dense/vars/0").shape,
            (Shape{6, 2, 3}));
  EXPECT_EQ(a.datasets.at("layers/multi_head_attention/key_dense/vars/0").shape, (Shape{5, 2, 3}));
  EXPECT_EQ(a.datasets.at("layers/multi_head_attention/value_dense/vars/1").shape, (Shape{2, 2}));
  EXPECT_EQ(a.datasets.at("layers/multi_head_attention/output_dense/vars/0").shape,
            (Shape{2, 2, 6}));
  EXPECT_EQ(a.groups.count("layers/multi_head_attention/_softmax/vars"), 1u);
  EXPECT_EQ(a.groups.count("layers/multi_head_attention/_dropout_layer/vars"), 1u);
  std::vector<float> qv(48), vv(30);
  for (size_t i = 0; i < qv.size(); ++i) qv[i] = static_cast<float>((i * 7) % 11) / 10.f - 0.5f;
  for (size_t i = 0; i < vv.size(); ++i) vv[i] = static_cast<float>((i * 3) % 5) / 4.f - 0.3f;
  const std::vector<Tensor> xs = {Tensor::FromVector<float>(qv, Shape{2, 4, 6}),
                                  Tensor::FromVector<float>(vv, Shape{2, 3, 5})};
  SaveKerasModel(dir + "/mha.keras", attention);
  const KerasModel loaded = LoadKerasModel(dir + "/mha.keras");
  EXPECT_EQ(loaded.functional->CallMany(xs, false)[0].ValuesString(1000),
            attention(xs)[0].ValuesString(1000));

  // A cell kernel of another width is refused, naming the group and shapes.
  auto other = std::make_unique<Sequential>("m");
  other->Add(std::make_unique<InputLayer>(Shape{5, 3}));
  other->Add(std::make_unique<L::SimpleRNN>(5, L::RecurrentConfig{.return_sequences = true}));
  ExpectError([&] { LoadKerasWeights(dir + "/rnn.weights.h5", *other); },
              {"layers/simple_rnn", "kernel", "[3,4]", "[?,5]"});
}

TEST(KerasLayerKinds, FileShapesAreCheckedAgainstTheLayerBeforeBuilding) {
  const std::string dir = testing::TempDir();
  Sequential saved("m");
  saved.Add(std::make_unique<L::Conv2D>(5, Array2{3, 3}));
  saved(Images(4, 4, 2));
  SaveKerasWeights(dir + "/c.weights.h5", saved);
  Sequential other("m");
  other.Add(std::make_unique<L::Conv2D>(4, Array2{3, 3}));
  ExpectError(
      [&] { LoadKerasWeights(dir + "/c.weights.h5", other); },
      {dir + "/c.weights.h5", "layers/conv2d/vars", "Conv2D", "[3,3,2,5]", "expected [3,3,?,4]"});
  Sequential bn("m");
  bn.Add(std::make_unique<L::BatchNormalization>());
  ExpectError([&] { LoadKerasWeights(dir + "/c.weights.h5", bn); },
              {"layers/batch_normalization/vars", "has 0 variables in the file; expected 4"});
  Sequential ln("m");
  ln.Add(std::make_unique<L::LayerNormalization>());
  ExpectError([&] { LoadKerasWeights(dir + "/c.weights.h5", ln); },
              {"layers/layer_normalization/vars", "has 0 variables in the file; expected 2"});
}

class Custom : public Layer {
 public:
  Custom() : Layer("custom") {}
  Tensor Call(const Tensor& x) override { return x; }
};

TEST(KerasLayerKinds, AnUnregisteredLayerNamesItselfAndTheKindsEagerSaves) {
  const std::string dir = testing::TempDir();
  Sequential model("m");
  model.Add(std::make_unique<InputLayer>(Shape{2}));
  model.Add(std::make_unique<Custom>());
  ExpectError([&] { SaveKerasWeights(dir + "/x.weights.h5", model); },
              {"'custom'", "Conv2D", "BatchNormalization"});
  ExpectError([&] { SaveKerasModel(dir + "/x.keras", model); }, {"'custom'"});
}

// Keras feeds mask_zero's mask to GlobalAveragePooling1D, which averages
// only the valid steps; eager's layer does too, and the model saved as a
// .keras file comes back computing the same masked mean.
TEST(KerasLayerKinds, MaskZeroIntoAMaskTakingLayerRoundTrips) {
  const std::string dir = testing::TempDir();
  Sequential model("m");
  model.Add(std::make_unique<InputLayer>(Shape{3}));
  model.Add(std::make_unique<L::Embedding>(5, 2, /*mask_zero=*/true));
  model.Add(std::make_unique<L::GlobalAveragePooling1D>());
  const Tensor ids = Tensor::FromVector<int32_t>({1, 0, 2}, Shape{1, 3});
  const std::vector<float> got = model(ids).ToVector<float>();
  const std::vector<float> table =
      static_cast<L::Embedding&>(*model.layers()[1]).embeddings().value().ToVector<float>();
  for (int k = 0; k < 2; ++k) EXPECT_NEAR(got[k], (table[2 + k] + table[4 + k]) / 2, 1e-6) << k;
  SaveKerasModel(dir + "/mask.keras", model);
  const KerasModel loaded = LoadKerasModel(dir + "/mask.keras");
  EXPECT_EQ(loaded.root()(ids).ToVector<float>(), got);
}

}  // namespace
}  // namespace eager

namespace eager {
namespace {

// Every activation autodiff/activations.h names is saved by that name in
// Dense's, Conv2D's and Activation's configs and comes back the same
// function (the loaded model computes the same values); a function it
// cannot name is refused naming the layer.
TEST(KerasLayerKinds, EveryKerasActivationRoundTripsThroughTheConfig) {
  const std::string dir = testing::TempDir();
  const Tensor x = RandomNormal(Shape{2, 4, 4, 2}, 5);
  for (std::string_view name : KerasActivationNames()) {
    SCOPED_TRACE(std::string(name));
    Sequential model;
    model.Add(std::make_unique<InputLayer>(Shape{4, 4, 2}));
    layers::Conv2DConfig conv;
    conv.activation = ActivationByName(name);
    conv.seed = 3;
    model.Add(std::make_unique<layers::Conv2D>(3, Array2{3, 3}, conv));
    model.Add(std::make_unique<layers::Activation>(name));
    model.Add(std::make_unique<Flatten>());
    model.Add(std::make_unique<Dense>(2, ActivationByName(name), true, 4));
    const Tensor y = model(x);
    const std::string path = StrCat(dir, "/act_", name, ".keras");
    SaveKerasModel(path, model);
    KerasModel loaded = LoadKerasModel(path);
    EXPECT_EQ(
        KerasActivationName(dynamic_cast<Dense&>(*loaded.model->layers().back()).activation()),
        name == "swish"        ? "silu"
        : name == "hard_swish" ? "hard_silu"
                               : name);
    EXPECT_EQ((*loaded.model)(x).ValuesString(1000), y.ValuesString(1000));
  }
  Sequential custom;
  custom.Add(std::make_unique<InputLayer>(Shape{3}));
  custom.Add(std::make_unique<Dense>(
      2, [](const Tensor& t) { return Mul(t, t); }, true, 1, "squared"));
  custom(RandomNormal(Shape{1, 3}, 6));
  ExpectError([&] { SaveKerasModel(dir + "/custom.keras", custom); },
              {"'squared'", "activation Keras cannot name"});
}

}  // namespace
}  // namespace eager
