// The C++ side of keras_layer_files_test.py: eager's layer library in
// Keras 3's .weights.h5 and .keras. MODEL names one of the Sequentials
// below; keras_layer_files_test.py builds the same in Keras. Every command
// prints predictions on the model's fixed batch, one line of floats each.
//
//   keras_layer_files_driver k2e MODEL DIR [step]
//     LoadKerasModel(DIR/keras.keras): prints its predictions; eager's own
//     MODEL with LoadKerasWeights(DIR/keras.weights.h5, Adam when the file
//     has it): prints its predictions. Then saves the loaded .keras again as
//     DIR/eager_resave.keras, and with `step` first takes one Adam step (MSE,
//     training mode) on both and saves DIR/eager_step.keras and
//     DIR/eager_step.weights.h5.
//   keras_layer_files_driver e2k MODEL DIR compiled|plain
//     eager's MODEL (its own seeded weights); `compiled`: one Adam(0.01)
//     step. Saves DIR/eager.weights.h5 and DIR/eager.keras, prints the
//     predictions; `compiled`: then one more step, prints again.
//   keras_layer_files_driver legacy MODEL FILE
//     eager's unbuilt MODEL loads tf_keras's legacy FILE (built from its
//     shapes); prints the predictions.
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <string>

#include "autodiff/flatten.h"
#include "autodiff/input_layer.h"
#include "autodiff/layers/conv.h"
#include "autodiff/layers/embedding.h"
#include "autodiff/layers/normalization.h"
#include "autodiff/layers/pooling.h"
#include "autodiff/layers/recurrent.h"
#include "autodiff/layers/regularization.h"
#include "autodiff/layers/reshaping.h"
#include "eager.h"
#include "saving/keras/keras_model.h"
#include "saving/keras/keras_weights.h"

using namespace eager;  // NOLINT(google-build-using-namespace)
namespace L = eager::layers;

namespace {

struct Spec {
  Shape x_shape;  // with the batch of 4
  bool ids;       // int32 ids (Embedding) instead of floats
  int64_t outputs;
  std::function<void(Sequential&)> add;
};

Spec ModelSpec(const std::string& name) {
  if (name == "cnn") {
    return {Shape{4, 8, 8, 3}, false, 3, [](Sequential& m) {
              m.Add(std::make_unique<InputLayer>(Shape{8, 8, 3}));
              m.Add(std::make_unique<L::Conv2D>(
                  4, std::array<int64_t, 2>{3, 3},
                  L::Conv2DConfig{.padding = "same", .activation = Relu}));
              m.Add(std::make_unique<L::BatchNormalization>());
              m.Add(std::make_unique<L::MaxPooling2D>());
              m.Add(std::make_unique<L::Dropout>(0.5));
              m.Add(std::make_unique<Flatten>());
              m.Add(std::make_unique<Dense>(3));
            }};
  }
  if (name == "embed") {
    return {Shape{4, 6}, true, 2, [](Sequential& m) {
              m.Add(std::make_unique<InputLayer>(Shape{6}));
              m.Add(std::make_unique<L::Embedding>(32, 4));
              m.Add(std::make_unique<L::GlobalAveragePooling1D>());
              m.Add(std::make_unique<Dense>(2));
            }};
  }
  if (name == "masked") {
    return {Shape{4, 6}, true, 2, [](Sequential& m) {
              m.Add(std::make_unique<InputLayer>(Shape{6}));
              m.Add(std::make_unique<L::Embedding>(32, 4, /*mask_zero=*/true));
              m.Add(std::make_unique<L::BatchNormalization>());
              m.Add(std::make_unique<L::GlobalAveragePooling1D>());
              m.Add(std::make_unique<Dense>(2));
            }};
  }
  if (name == "rnn") {
    return {
        Shape{4, 5, 3}, false, 2, [](Sequential& m) {
          m.Add(std::make_unique<InputLayer>(Shape{5, 3}));
          m.Add(std::make_unique<L::SimpleRNN>(4, L::RecurrentConfig{.return_sequences = true}));
          m.Add(std::make_unique<L::LSTM>(
              4, L::RecurrentConfig{.return_sequences = true, .go_backwards = true}));
          m.Add(std::make_unique<L::GRU>(
              3, L::RecurrentConfig{.return_sequences = true, .reset_after = false}));
          m.Add(std::make_unique<L::GRU>(3, L::RecurrentConfig{.use_bias = false}));
          m.Add(std::make_unique<Dense>(2));
        }};
  }
  if (name == "convs") {
    return {Shape{4, 8, 8, 3}, false, 2, [](Sequential& m) {
              m.Add(std::make_unique<InputLayer>(Shape{8, 8, 3}));
              m.Add(std::make_unique<L::DepthwiseConv2D>(
                  std::array<int64_t, 2>{3, 3},
                  L::DepthwiseConv2DConfig{.padding = "same", .depth_multiplier = 2}));
              m.Add(std::make_unique<L::SeparableConv2D>(
                  4, std::array<int64_t, 2>{3, 3}, L::SeparableConv2DConfig{.activation = Relu}));
              m.Add(std::make_unique<L::Conv2DTranspose>(3, std::array<int64_t, 2>{2, 2},
                                                         L::Conv2DConfig{.strides = {2, 2}}));
              m.Add(std::make_unique<L::ZeroPadding2D>(1, 0, 2, 1));
              m.Add(std::make_unique<L::Cropping2D>(0, 1, 1, 0));
              m.Add(std::make_unique<L::AveragePooling2D>(
                  std::array<int64_t, 2>{2, 2},
                  L::Pooling2DConfig{.strides = std::array<int64_t, 2>{1, 1}, .padding = "same"}));
              m.Add(std::make_unique<L::GlobalMaxPooling2D>());
              m.Add(std::make_unique<Dense>(2, Tanh));
            }};
  }
  if (name == "seq1d") {
    return {
        Shape{4, 10, 4}, false, 2, [](Sequential& m) {
          m.Add(std::make_unique<InputLayer>(Shape{10, 4}));
          m.Add(std::make_unique<L::Conv1D>(
              3, 3, L::Conv1DConfig{.padding = "causal", .activation = Tanh}));
          m.Add(std::make_unique<L::MaxPooling1D>(2));
          m.Add(std::make_unique<L::AveragePooling1D>(2, L::Pooling1DConfig{.padding = "same"}));
          m.Add(std::make_unique<L::LayerNormalization>());
          m.Add(std::make_unique<L::GlobalAveragePooling1D>());
          m.Add(std::make_unique<L::RepeatVector>(3));
          m.Add(std::make_unique<L::Permute>(std::vector<int64_t>{2, 1}));
          m.Add(std::make_unique<L::Reshape>(std::vector<int64_t>{-1}));
          m.Add(std::make_unique<L::Activation>("sigmoid"));
          m.Add(std::make_unique<Dense>(2));
        }};
  }
  if (name == "more") {
    return {Shape{4, 6, 6, 2}, false, 2, [](Sequential& m) {
              m.Add(std::make_unique<InputLayer>(Shape{6, 6, 2}));
              m.Add(std::make_unique<L::Conv2D>(
                  2, std::array<int64_t, 2>{3, 3},
                  L::Conv2DConfig{.dilation_rate = {2, 2}, .use_bias = false}));
              m.Add(std::make_unique<L::GlobalAveragePooling2D>(true));
              m.Add(std::make_unique<L::Reshape>(std::vector<int64_t>{1, 2}));
              m.Add(std::make_unique<L::GlobalMaxPooling1D>());
              m.Add(std::make_unique<L::BatchNormalization>(0.9, 1e-2, false, true));
              m.Add(std::make_unique<L::LayerNormalization>(1e-3, true, false));
              m.Add(std::make_unique<Dense>(2, Softmax));
            }};
  }
  throw InvalidArgumentError("unknown model " + name);
}

// The batch keras_layer_files_test.py feeds: x[i] = ((i * 7) % 11) / 10 -
// 0.5 (ids: (i * 7) % 13, repeating within the batch), y[i] = ((i * 5) % 3) / 2.
Tensor Inputs(const Spec& spec) {
  const int64_t n = spec.x_shape.num_elements();
  if (spec.ids) {
    std::vector<int32_t> ids(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      ids[static_cast<size_t>(i)] = static_cast<int32_t>((i * 7) % 13);
    return Tensor::FromVector<int32_t>(ids, spec.x_shape);
  }
  std::vector<float> xs(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    xs[static_cast<size_t>(i)] = static_cast<float>((i * 7) % 11) / 10.f - 0.5f;
  return Tensor::FromVector<float>(xs, spec.x_shape);
}

Tensor Targets(const Spec& spec) {
  std::vector<float> ys(static_cast<size_t>(4 * spec.outputs));
  for (size_t i = 0; i < ys.size(); ++i) ys[i] = static_cast<float>((i * 5) % 3) / 2.f;
  return Tensor::FromVector<float>(ys, Shape{4, spec.outputs});
}

void Print(Sequential& model, const Tensor& x) {
  for (float v : model(x).ToVector<float>()) std::printf("%.9g ", v);
  std::printf("\n");
}

void Step(Sequential& model, Optimizer& adam, const Tensor& x, const Tensor& y) {
  adam.Minimize([&] { return ReduceMean(Square(Sub(model(x, true), y))); },
                model.TrainableVariables());
}

int Run(int argc, char** argv) {
  const std::string mode = argv[1];
  const Spec spec = ModelSpec(argv[2]);
  const std::string dir = argv[3];
  const Tensor x = Inputs(spec);
  const Tensor y = Targets(spec);
  Sequential model;
  spec.add(model);
  if (mode == "k2e") {
    const bool step = argc > 4 && std::string(argv[4]) == "step";
    KerasModel loaded = LoadKerasModel(dir + "/keras.keras");
    Print(*loaded.model, x);
    Adam adam(0.01);
    adam.UseKerasLayout(KerasLayout::kKeras3);  // steps as Keras 3 does
    const bool compiled = loaded.optimizer != nullptr;
    model(x);  // builds every layer in eager's own way
    LoadKerasWeights(dir + "/keras.weights.h5", model, compiled ? &adam : nullptr);
    Print(model, x);
    SaveKerasModel(dir + "/eager_resave.keras", *loaded.model, loaded.optimizer.get(), loaded.loss);
    if (step) {
      Step(*loaded.model, *loaded.optimizer, x, y);
      SaveKerasModel(dir + "/eager_step.keras", *loaded.model, loaded.optimizer.get(), loaded.loss);
      Step(model, adam, x, y);
      SaveKerasWeights(dir + "/eager_step.weights.h5", model, &adam);
    }
  } else if (mode == "e2k" && argc == 5) {
    const bool compiled = std::string(argv[4]) == "compiled";
    Adam adam(0.01);
    adam.UseKerasLayout(KerasLayout::kKeras3);
    model(x);
    if (compiled) Step(model, adam, x, y);
    SaveKerasWeights(dir + "/eager.weights.h5", model, compiled ? &adam : nullptr);
    SaveKerasModel(dir + "/eager.keras", model, compiled ? &adam : nullptr, compiled ? "mse" : "");
    Print(model, x);
    if (compiled) {
      Step(model, adam, x, y);
      Print(model, x);
    }
  } else if (mode == "legacy") {
    LoadKerasWeights(dir, model);  // here `dir` is the file
    Print(model, x);
  } else {
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "keras_layer_files_driver: %s\n", e.what());
    return 1;
  }
}
