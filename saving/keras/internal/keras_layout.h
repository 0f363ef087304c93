#pragma once

// What keras_weights.cc and keras_model.cc share: the `.weights.h5` layout
// applied to a model and optimizer, and crash-safe file replacement. Private
// to saving/keras/.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "autodiff/optimizer.h"
#include "autodiff/sequential.h"
#include "saving/keras/internal/h5_file.h"
#include "saving/keras/internal/keras_config.h"

namespace eager::keras_internal {

// Writes Keras 3's weights layout (keras_weights.h) into a new HDF5 file
// `path` (not renamed, not synced).
void WriteWeightsFile(const std::string& path, Layer& model, const Optimizer* optimizer);

// Checks every dataset `model` (and `optimizer`, when given) needs against
// `contents`, then assigns them. `file` names the file in errors.
void ApplyWeights(const H5Contents& contents, std::string_view file, Layer& model,
                  Optimizer* optimizer);

// Whether `layer` holds layers of its own (a Sequential or functional
// Model): its weights group has a "layers" group.
bool IsContainer(const Layer& layer);
// The layers Keras saves under a container's "layers" group, in Keras's
// order: a Sequential's without its InputLayer (Sequential.layers), a
// functional Model's operations() with its InputLayers (Functional.layers).
std::vector<Layer*> ContainerLayers(Layer& model);

// A fresh temporary path beside `path` ("<path>.tmp-<pid>-<hex>"), after
// removing those that killed writers of `path` left (their pid is gone).
std::string TempPathBeside(const std::string& path);
// fsync(tmp), rename(tmp, path), fsync(directory of path); removes tmp and
// rethrows on failure.
void CommitFile(const std::string& tmp, const std::string& path);

// A dataset's value as a Tensor (its dtype, shape and bytes).
Tensor DatasetTensor(const H5Dataset& dataset);

// Builds the unbuilt `layer` (or a container's layers, recursively) from
// the shapes of the datasets under `group` ("layers/dense_1": its
// vars/0, vars/1, ...) as ApplyWeights does, before the layer is run.
void BuildFromWeights(const H5Contents& contents, std::string_view file, const std::string& group,
                      Layer& layer);

// One layer's entry of config.json ({module, class_name, config,
// registered_name}; a nested Sequential's or functional Model's with its
// own layers), and back.
Json LayerEntryJson(Layer& layer, DType dtype);

// What reading a config's layers shares across nested models: the file, its
// weights (read on first use), the owner of the layers of nested functional
// Models (a Model owns none), how much the layers read so far may multiply
// an input's size (kMaxGrowth bounds it over the whole file, nested models
// included), and how deep the models nest.
struct ConfigContext {
  std::string file;
  std::function<const H5Contents&()> weights;
  std::vector<std::unique_ptr<Layer>>* owned;
  double growth = 1;
  int depth = 0;
};
// Models nested deeper than this are InvalidArgumentError.
inline constexpr int kMaxModelDepth = 16;

// The weights group of the next layer of `entry`'s class in a container
// whose group is `prefix` ("" or "layers/functional/"): "<prefix>layers/
// <key>", the key made unique by `used`, as keras_weights.h describes.
std::string NextLayerGroup(const Json& entry, const std::string& prefix,
                           std::map<std::string, int>& used);

// Reads one layer entry, checking every argument and naming `where`
// ("config.layers[3]"); `group` is its weights group ("layers/dense_1"). A
// nested Sequential's or Model's layers are read in turn, a Model's built
// from the weights before its graph is replayed.
std::unique_ptr<Layer> LayerFromEntry(const Json& entry, const std::string& where,
                                      const std::string& group, ConfigContext& context);

// A .keras archive's members by name, every one checked (keras_model.h says
// how); config.json and model.weights.h5 are required.
std::map<std::string, std::string> ReadKerasArchive(const std::string& path);
// The datasets of a .keras archive's weights member (`bytes`), read by
// ReadH5File from a scratch file in $TMPDIR that is removed after. `path`
// names the archive in errors.
H5Contents ReadWeightsMember(const std::string& path, const std::string& bytes);

}  // namespace eager::keras_internal
