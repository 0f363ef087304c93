#pragma once

// Keras 3's `.keras` file (model.save / keras.models.load_model): a zip of
// config.json (the model's class and layer arguments), metadata.json and
// model.weights.h5 (keras_weights.h's layout).
//
//   eager::SaveKerasModel("m.keras", model, &adam, "mse");
//   eager::KerasModel loaded = eager::LoadKerasModel("m.keras");
//   eager::Tensor y = (*loaded.model)(x);
//
// Configs: a Sequential or a Functional (multi-input/-output, shared
// layers, merge layers: keras_functional_config.h), either holding the other
// or itself as a layer (a nested Sequential or functional Model, its
// weights under its group's "layers" as keras_weights.h says, at most 16
// deep), of
// InputLayer and the layers keras_weights.h lists
// (saving/keras/internal/keras_layer_kinds.h: each layer's Keras class name
// and arguments, e.g. Conv2D filters, kernel_size, strides, padding,
// dilation_rate, activation linear/relu/sigmoid/tanh/softmax, use_bias;
// initializers written as Keras's defaults and accepted whatever they are
// on reading, since the weights come from the file), float32 or float64;
// compile_config with the optimizer (SGD, RMSprop, Adagrad, Adam, AdamW or
// Nadam and their arguments: saving/keras/internal/keras_optimizer_config.h)
// and a loss name. On reading, every argument is checked: a
// wrong type or a value out of range is InvalidArgumentError, an argument or
// value eager does not implement (a regularizer, groups > 1, a layer class
// it lacks) UnimplementedError, each naming the config path
// ("config.layers[2].config.kernel_regularizer"). The layers are built from
// the weights' shapes, not by running the model, so a crafted config cannot
// make eager allocate more than the archive holds; and layers that enlarge
// their input by their arguments alone (RepeatVector n, ZeroPadding2D,
// Conv2DTranspose strides) may multiply its size by at most 2^24 in all,
// else InvalidArgumentError naming the layer's config path, so running the
// loaded model cannot either.
//
// Reading never trusts the archive: at most 16 members, names without "..",
// absolute paths or backslashes, only Keras's three names (plus directory
// entries), declared sizes bounded (JSON 16 MiB, weights 16 GiB) and a
// compression ratio over 1000:1 refused as a zip bomb; members are read
// with the CRC checked. Malformed JSON is InvalidArgumentError naming the
// member and the parser's position. Writing is crash-safe (temp, fsync,
// rename).

#include <memory>
#include <string>
#include <vector>

#include "autodiff/functional.h"
#include "autodiff/optimizer.h"
#include "autodiff/sequential.h"

namespace eager {

struct KerasModel {
  // The layers of the functional Models the file holds (the root's and
  // nested ones), which own none of theirs (InputLayers are owned by their
  // Input()s); declared first, so that they outlive the models.
  std::vector<std::unique_ptr<Layer>> functional_layers;
  std::unique_ptr<Sequential> model;     // a Sequential config's model, else null
  std::unique_ptr<Model> functional;     // a Functional config's model, else null
  std::unique_ptr<Optimizer> optimizer;  // null without a compile_config
  std::string loss;                      // compile_config's loss name, or ""
  std::string keras_version;             // metadata.json's

  // Whichever model the file holds.
  Layer& root() const { return model ? static_cast<Layer&>(*model) : *functional; }
};

// The input shape is the first InputLayer's, else the first Dense's input
// size. REQUIRES: the model built.
void SaveKerasModel(const std::string& path, Sequential& model,
                    const Optimizer* optimizer = nullptr, const std::string& loss = "");
// A functional model as Keras 3's "Functional" config (keras_functional_
// config.h): every input an Input(), merge layers and multi-input nested
// Models called on lists, other layers on one tensor.
void SaveKerasModel(const std::string& path, Model& model, const Optimizer* optimizer = nullptr,
                    const std::string& loss = "");
// The loaded model and optimizer are in the kKeras3 layout
// (SetKerasLayout): Keras 3's math where the lines differ (merge layers'
// masks, Adam's constants) and Keras 3's checkpoint edges.
KerasModel LoadKerasModel(const std::string& path);

}  // namespace eager
