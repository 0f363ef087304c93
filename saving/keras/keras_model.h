#pragma once

// Keras 3's `.keras` file (model.save / keras.models.load_model): a zip of
// config.json (the model's class and layer arguments), metadata.json and
// model.weights.h5 (keras_weights.h's layout).
//
//   eager::SaveKerasModel("m.keras", model, &adam, "mse");
//   eager::KerasModel loaded = eager::LoadKerasModel("m.keras");
//   eager::Tensor y = (*loaded.model)(x);
//
// Configs: Sequential of InputLayer, Flatten and Dense (units, activation
// linear/relu/sigmoid/tanh/softmax, use_bias; default initializers, no
// regularizers or constraints), float32 or float64; compile_config with an
// Adam (learning_rate, beta_1, beta_2, epsilon, amsgrad false) and a loss
// name. Anything else is UnimplementedError naming the config path
// ("config.layers[2].config.kernel_regularizer").
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

#include "autodiff/adam.h"
#include "autodiff/sequential.h"

namespace eager {

struct KerasModel {
  std::unique_ptr<Sequential> model;
  std::unique_ptr<Adam> optimizer;  // null without a compile_config
  std::string loss;                 // compile_config's loss name, or ""
  std::string keras_version;        // metadata.json's
};

// The input shape is the first InputLayer's, else the first Dense's input
// size. REQUIRES: the model built.
void SaveKerasModel(const std::string& path, Sequential& model, const Adam* optimizer = nullptr,
                    const std::string& loss = "");
KerasModel LoadKerasModel(const std::string& path);

}  // namespace eager
