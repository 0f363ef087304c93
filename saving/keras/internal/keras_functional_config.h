#pragma once

// Keras 3's "Functional" model config, both ways (keras/src/models/
// functional.py get_config and functional_from_config). Private to
// saving/keras/.
//
// config.layers lists the model's operations() in order, each with its
// "name" and "inbound_nodes": one node per call of the layer in the model,
//   {"args": [<tensor>], "kwargs": {}}            a one-input layer
//   {"args": [[<tensor>, <tensor>]], "kwargs": {}}  a merge layer
// where a tensor is {"class_name": "__keras_tensor__", "config": {"shape",
// "dtype", "keras_history": [layer name, node index, output index]}}: the
// node index counts that layer's nodes in its inbound_nodes order.
// config.input_layers / output_layers are such histories: a list of them,
// or one for a single input / output.
//
// Reading replays the nodes as Keras does: layer by layer, each layer's
// nodes in order, a node whose inputs do not exist yet deferred to the next
// pass; a pass that makes no progress is InvalidArgumentError (a cycle or a
// dangling history). Every error names the file and the config path
// ("config.layers[4].inbound_nodes[1].args[0][1].config.keras_history").

#include <memory>
#include <string>
#include <vector>

#include "autodiff/functional.h"
#include "saving/keras/internal/h5_file.h"
#include "saving/keras/internal/keras_config.h"
#include "saving/keras/internal/keras_layout.h"

namespace eager::keras_internal {

// The root object of config.json for `model` (class_name "Functional"); a
// nested Model is such an object in its parent's layers, with the "name" and
// "inbound_nodes" of its calls added there (a multi-input one called on a
// list, as a merge layer). Throws UnimplementedError naming the layer for
// what Keras's Functional config cannot express here: a layer called on
// several tensors that is not a merge layer or a Model, an input that is not
// an Input(); InvalidArgumentError for two layers of one name in one model.
Json FunctionalConfig(Model& model, DType dtype);

// The model `root` (config.json's root object, or a nested Functional's
// entry at config path `where` such as "config.layers[1].", "" for the
// root) describes, its layers owned by context.owned (a Model owns none).
// Layers with variables are built from the weights (Keras's layout under
// `group`, "" for the root or "layers/functional/", by the config's layer
// order) before any call, so the config alone allocates nothing but probe
// inputs: each Input may have at most 2^24 elements per example.
std::unique_ptr<Model> FunctionalFromConfig(const Json& root, const std::string& where,
                                            const std::string& group, ConfigContext& context);

}  // namespace eager::keras_internal
