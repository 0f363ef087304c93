#pragma once

// The registry of layer kinds eager saves in Keras's files: for each eager
// layer class, ONE entry holding its Keras class name, the key Keras gives
// its weights group, its variables in Keras's `vars/<i>` order, its config
// both ways and how to build it from the weights a file holds. keras_weights
// and keras_model look layers up here (by exact C++ type, so Conv1D is not
// taken for its base Conv2D); a new layer is one new entry in a
// keras_kinds_*.cc file, not another branch in the savers. Private to
// saving/keras/.

#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include "autodiff/layer.h"
#include "saving/keras/internal/keras_config.h"

namespace eager::keras_internal {

// A sublayer group of a layer's weights (KerasLayerKind::sublayers).
struct KerasSublayer {
  std::string path;  // below the layer's group: "cell", "query_dense"
  std::string name;  // its vars group's "name" attribute: "lstm_cell", "query"
  int variables = 0;
};

struct KerasLayerKind {
  // Keras's class name ("Conv2D") and the snake_case key of its weights
  // group ("conv2d", made unique per container: "conv2d_1").
  const char* class_name;
  const char* key;
  // Whether `layer` is of this kind (its exact type).
  bool (*matches)(const Layer& layer);
  // The variables in Keras's order (BatchNormalization: gamma, beta,
  // moving_mean, moving_variance, the absent ones left out). Throws
  // FailedPreconditionError naming the layer when it is not built. Null for
  // weightless kinds.
  std::vector<Variable*> (*variables)(Layer& layer) = nullptr;
  // Builds an unbuilt `layer` so that its variables have `shapes` (the
  // file's vars/0.. in order) and `dtype`. Checks every shape against the
  // layer's arguments before creating anything, so the allocation is the
  // file's own size; throws InvalidArgumentError saying what was expected.
  void (*build)(Layer& layer, const std::vector<Shape>& shapes, DType dtype) = nullptr;
  // The class-specific arguments of Keras's config (name, trainable and
  // dtype are added by the caller).
  void (*to_config)(Layer& layer, Json& config) = nullptr;
  // The layer from its config; every argument read through `reader`
  // (the caller reads name, trainable and dtype, then calls Finish()).
  std::unique_ptr<Layer> (*from_config)(ConfigReader& reader, const std::string& name) = nullptr;
  // By how much the layer can multiply its input's element count through
  // its arguments alone (RepeatVector: n), not through weights the file
  // bounds; null for 1. A loaded config whose layers multiply by more than
  // kMaxGrowth in all is refused: running it would allocate what no file
  // holds.
  double (*growth)(Layer& layer) = nullptr;
  // Sublayers Keras saves in groups of their own below the layer's (an
  // RNN's "cell", MultiHeadAttention's "query_dense", ...), in Keras's
  // order: each the group's path, its "vars" group's name attribute, and how
  // many of the layer's variables (in `variables`' order) are its vars/0,
  // vars/1, ...; the layer's own "vars" then holds none. Known before the
  // layer is built (counts follow its arguments, e.g. use_bias). Null: the
  // variables are the layer's own vars/0, vars/1, ...
  std::vector<KerasSublayer> (*sublayers)(const Layer& layer) = nullptr;
};

inline constexpr double kMaxGrowth = double(int64_t{1} << 24);

// The kind of `layer`; throws UnimplementedError naming the layer and the
// classes eager can save.
const KerasLayerKind& KindOf(const Layer& layer);
// The kind with Keras class name `class_name`, or nullptr.
const KerasLayerKind* KindByClassName(const std::string& class_name);
// "Dense, Flatten, ..." for messages.
std::string KindNames();

// The registrations, one file per family of layers.
std::vector<KerasLayerKind> CoreKinds();       // keras_kinds_core.cc
std::vector<KerasLayerKind> ConvKinds();       // keras_kinds_conv.cc
std::vector<KerasLayerKind> PoolingKinds();    // keras_kinds_pooling.cc
std::vector<KerasLayerKind> MergingKinds();    // keras_kinds_merging.cc
std::vector<KerasLayerKind> RecurrentKinds();  // keras_kinds_recurrent.cc: RNNs, attention

// The dataset path of each of `layer`'s variables below its group, in
// Keras's order: "vars/<i>", or "<sublayer>/vars/<i>" for kinds with
// sublayers. `count` is the number of variables of a kind without
// sublayers (the file's or the layer's).
std::vector<std::string> VariablePaths(const KerasLayerKind& kind, const Layer& layer,
                                       size_t count);

// Helpers the registrations share.
template <typename T>
bool Is(const Layer& layer) {
  return typeid(layer) == typeid(T);
}
// Throws InvalidArgumentError "<what> is <got>; expected <want>" unless
// `got` == `want` (-1 in `want` matches any positive dimension).
void ExpectShape(const std::string& what, const Shape& got, const std::vector<int64_t>& want);
// Requires exactly `n` variable shapes in the file.
void ExpectCount(const std::string& layer, const std::vector<Shape>& shapes, size_t n);

}  // namespace eager::keras_internal
