#include "saving/keras/keras_weights.h"

#include <cctype>
#include <cstring>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "autodiff/functional.h"
#include "autodiff/input_layer.h"
#include "runtime/errors.h"
#include "runtime/tensor_access.h"
#include "saving/bundle/posix_file.h"
#include "saving/keras/internal/keras_layer_kinds.h"
#include "saving/keras/internal/keras_layout.h"

namespace eager {
namespace keras_internal {
namespace {

// A layer and its group path ("layers/dense"), as Keras's
// _save_container_state names them: unique per container.
struct LayerEntry {
  Layer* layer;
  std::string path;
};

void CollectLayers(Layer& model, const std::string& prefix, std::vector<LayerEntry>& out) {
  std::map<std::string, int> used;
  for (Layer* layer : ContainerLayers(model)) {
    const std::string base = KindOf(*layer).key;
    const int n = used[base]++;
    const std::string path = StrCat(prefix, "layers/", n == 0 ? base : StrCat(base, "_", n));
    out.push_back({layer, path});
    if (IsContainer(*layer)) CollectLayers(*layer, path + "/", out);
  }
}

std::vector<LayerEntry> Layers(Layer& model) {
  std::vector<LayerEntry> out;
  CollectLayers(model, "", out);
  return out;
}

// The variables Keras saves for `layer`, in its order.
std::vector<Variable*> OwnVariables(Layer& layer) {
  const KerasLayerKind& kind = KindOf(layer);
  return kind.variables != nullptr ? kind.variables(layer) : std::vector<Variable*>{};
}

// Keras 3's optimizer.variables for `trainable`, in its order: eager's
// optimizer in the kKeras3 layout lists exactly them as "_variables"
// (autodiff/optimizer.h: iterations, learning_rate, then the slots grouped
// as each Keras optimizer's build() creates them; with a learning-rate
// schedule no learning_rate, as Keras 3 keeps none then). Build() creates missing
// slots first, in `trainable` order, as Keras's build(var_list) does; the
// optimizer's own layout is restored after.
std::vector<Variable*> KerasOptimizerVariables(Optimizer& optimizer,
                                               const std::vector<Variable*>& trainable) {
  const KerasLayout layout = optimizer.keras_layout();
  optimizer.UseKerasLayout(KerasLayout::kKeras3);
  std::vector<Variable*> out;
  try {
    optimizer.Build(trainable);
    for (const Trackable::Child& child : optimizer.Children()) {
      if (child.name != "_variables") continue;
      for (const Trackable::Child& item : child.object->Children()) {
        if (auto* v = dynamic_cast<Variable*>(item.object)) out.push_back(v);
      }
    }
  } catch (...) {
    optimizer.UseKerasLayout(layout);
    throw;
  }
  optimizer.UseKerasLayout(layout);
  if (out.empty()) {
    throw FailedPreconditionError(StrCat("Keras weights: optimizer '", optimizer.name(),
                                         "' has no Keras 3 variables (a TF1-compatible optimizer "
                                         "cannot be saved in Keras's layout)"));
  }
  return out;
}

// Keras's optimizer name ("adam", "sgd", "rmsprop"): the group's attribute.
std::string KerasOptimizerName(const Optimizer& optimizer) {
  std::string name = optimizer.name();
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

std::string DescribeShape(const Shape& shape) { return StrCat(shape); }

const H5Dataset& Require(const H5Contents& contents, std::string_view file, const std::string& key,
                         std::string_view what, DType dtype, const Shape& shape) {
  auto it = contents.datasets.find(key);
  if (it == contents.datasets.end()) {
    throw InvalidArgumentError(StrCat("Keras weights file '", file, "': dataset '", key, "' (",
                                      what, ") is missing; expected ", dtype, " ",
                                      DescribeShape(shape)));
  }
  const H5Dataset& ds = it->second;
  if (ds.dtype != dtype || ds.shape != shape) {
    throw InvalidArgumentError(StrCat("Keras weights file '", file, "': dataset '", key, "' (",
                                      what, ") is ", ds.dtype, " ", DescribeShape(ds.shape),
                                      "; expected ", dtype, " ", DescribeShape(shape)));
  }
  return ds;
}

// Datasets directly under `group` ("layers/dense/vars"): their count.
size_t CountDatasets(const H5Contents& contents, const std::string& group) {
  const std::string prefix = group + "/";
  size_t n = 0;
  for (auto it = contents.datasets.lower_bound(prefix);
       it != contents.datasets.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    if (it->first.find('/', prefix.size()) == std::string::npos) ++n;
  }
  return n;
}

// Builds an unbuilt `layer` whose variables are to be `shapes` (the file's,
// in Keras's order) through its kind's build, which checks them against
// the layer's arguments first and refuses a dtype other than float32/float64
// as the layer's Build does; nothing for a built or weightless layer.
// Errors name the file and `where` (the datasets' group).
void BuildWith(const std::vector<Shape>& shapes, DType dtype, std::string_view file,
               const std::string& where, Layer& layer) {
  const KerasLayerKind& kind = KindOf(layer);
  if (kind.build == nullptr) return;
  try {
    kind.build(layer, shapes, dtype);
  } catch (const Error& e) {
    ThrowError(e.code(), StrCat("Keras weights file '", file, "': ", where,
                                " cannot build the layer: ", e.what()));
  }
}

// As BuildWith, from the datasets of the layer's group `group`: its
// vars/0, vars/1, ... as long as they exist, or, for a kind with
// sublayers, the paths the kind lists, as long as they exist.
void BuildFromFile(const H5Contents& contents, std::string_view file, const std::string& group,
                   Layer& layer) {
  const KerasLayerKind& kind = KindOf(layer);
  std::vector<std::string> paths;
  if (kind.sublayers != nullptr) {
    paths = VariablePaths(kind, layer, 0);
  } else {
    while (contents.datasets.contains(StrCat(group, "/vars/", paths.size()))) {
      paths.push_back(StrCat("vars/", paths.size()));
    }
  }
  std::vector<Shape> shapes;
  DType dtype = DType::kFloat32;
  for (const std::string& path : paths) {
    auto it = contents.datasets.find(StrCat(group, "/", path));
    if (it == contents.datasets.end()) break;
    if (shapes.empty()) dtype = it->second.dtype;
    shapes.push_back(it->second.shape);
  }
  BuildWith(shapes, dtype, file,
            StrCat("group '", group, kind.sublayers != nullptr ? "" : "/vars", "'"), layer);
}

// The groups below a layer's group that hold its datasets ("vars", and its
// sublayers' "<path>/vars"), each with the number it must hold.
std::map<std::string, size_t> VarsGroups(const KerasLayerKind& kind, const Layer& layer,
                                         size_t count) {
  std::map<std::string, size_t> groups = {{"vars", 0}};
  if (kind.sublayers == nullptr) {
    groups["vars"] = count;
    return groups;
  }
  for (const KerasSublayer& sub : kind.sublayers(layer)) {
    groups[sub.path + "/vars"] += static_cast<size_t>(sub.variables);
  }
  return groups;
}

// Whether `layer` has variables to load: a built layer's list is not empty,
// an unbuilt layer of a kind with variables has some (its list throws
// FailedPreconditionError until built).
bool HasWeights(Layer& layer) {
  const KerasLayerKind& kind = KindOf(layer);
  if (kind.variables == nullptr) return false;
  try {
    return !kind.variables(layer).empty();
  } catch (const FailedPreconditionError&) {
    return true;
  }
}

// ---- tf_keras's legacy HDF5 (model.save_weights("m.h5"), model.save("m.h5")) ----

const std::vector<std::string>* StringList(const H5Contents& contents, const std::string& group,
                                           const char* name) {
  auto it = contents.string_lists.find({group, name});
  return it == contents.string_lists.end() ? nullptr : &it->second;
}

// The group holding the legacy layer groups: the root for save_weights,
// "model_weights" for model.save; nullopt for a Keras 3 file.
std::optional<std::string> LegacyRoot(const H5Contents& contents) {
  if (contents.groups.count("layers") != 0) return std::nullopt;
  if (StringList(contents, "", "layer_names") != nullptr) return "";
  if (StringList(contents, "model_weights", "layer_names") != nullptr) return "model_weights";
  return std::nullopt;
}

// Legacy layout: the root's "layer_names" lists the model's layers in order
// (no InputLayer); each layer group's "weight_names" its weights in the
// layer's order, each a dataset under the group ("dense/kernel:0"). Matched
// by order, as tf_keras's load_weights does: the layers with weights in the
// file to the model's layers with variables.
void ApplyLegacyWeights(const H5Contents& contents, std::string_view file, const std::string& root,
                        Layer& model) {
  const std::string prefix = root.empty() ? "" : root + "/";
  std::vector<std::pair<std::string, const std::vector<std::string>*>> saved;
  for (const std::string& layer : *StringList(contents, root, "layer_names")) {
    const std::vector<std::string>* weights = StringList(contents, prefix + layer, "weight_names");
    if (weights == nullptr) {
      throw InvalidArgumentError(
          StrCat("Keras weights file '", file, "' (tf_keras legacy .h5): layer '", layer,
                 "' is listed in layer_names but group '", prefix, layer, "' has no weight_names"));
    }
    if (!weights->empty()) saved.emplace_back(layer, weights);
  }
  std::vector<Layer*> layers;
  for (Layer* layer : ContainerLayers(model)) {
    if (HasWeights(*layer)) layers.push_back(layer);
  }
  if (layers.size() != saved.size()) {
    std::string names;
    for (const auto& [name, unused] : saved) names += StrCat(names.empty() ? "" : ", ", name);
    throw InvalidArgumentError(StrCat(
        "Keras weights file '", file, "' (tf_keras legacy .h5) holds weights of ", saved.size(),
        " layers (", names, "); the model has ", layers.size(), " layers with weights"));
  }
  std::vector<std::pair<Variable*, Tensor>> assignments;
  for (size_t i = 0; i < layers.size(); ++i) {
    Layer& layer = *layers[i];
    const auto& [name, weight_names] = saved[i];
    std::vector<Shape> shapes;
    DType dtype = DType::kFloat32;
    for (const std::string& weight : *weight_names) {
      const std::string key = StrCat(prefix, name, "/", weight);
      auto it = contents.datasets.find(key);
      if (it == contents.datasets.end()) {
        throw InvalidArgumentError(StrCat("Keras weights file '", file, "': dataset '", key,
                                          "' (listed in '", prefix, name,
                                          "' weight_names) is missing"));
      }
      if (shapes.empty()) dtype = it->second.dtype;
      shapes.push_back(it->second.shape);
    }
    BuildWith(shapes, dtype, file,
              StrCat("layer '", name, "' (datasets from '", prefix, name, "/",
                     weight_names->front(), "')"),
              layer);
    const std::vector<Variable*> vars = OwnVariables(layer);
    if (weight_names->size() != vars.size()) {
      throw InvalidArgumentError(StrCat(
          "Keras weights file '", file, "': layer '", name, "' has ", weight_names->size(),
          " weights; ", KindOf(layer).class_name, " '", layer.name(), "' has ", vars.size()));
    }
    for (size_t k = 0; k < vars.size(); ++k) {
      const std::string key = StrCat(prefix, name, "/", (*weight_names)[k]);
      const H5Dataset& ds = Require(
          contents, file, key,
          StrCat("layer '", layer.name(), "' variable ", k, ", '", vars[k]->shared_name(), "'"),
          vars[k]->dtype(), vars[k]->shape());
      assignments.emplace_back(vars[k], DatasetTensor(ds));
    }
  }
  for (auto& [variable, value] : assignments) variable->Assign(value);
}
}  // namespace

bool IsContainer(const Layer& layer) {
  return dynamic_cast<const Sequential*>(&layer) != nullptr ||
         dynamic_cast<const Model*>(&layer) != nullptr;
}

std::vector<Layer*> ContainerLayers(Layer& model) {
  if (auto* functional = dynamic_cast<Model*>(&model)) return functional->operations();
  std::vector<Layer*> out;
  if (auto* sequential = dynamic_cast<Sequential*>(&model)) {
    for (Layer* layer : sequential->layers()) {
      // Sequential.layers leaves its InputLayer out; Functional.layers does not.
      if (dynamic_cast<InputLayer*>(layer) == nullptr) out.push_back(layer);
    }
  }
  return out;
}

void BuildFromWeights(const H5Contents& contents, std::string_view file, const std::string& group,
                      Layer& layer) {
  if (!IsContainer(layer)) {
    BuildFromFile(contents, file, group, layer);
    return;
  }
  for (const LayerEntry& entry : Layers(layer)) {
    if (!IsContainer(*entry.layer))
      BuildFromFile(contents, file, StrCat(group, "/", entry.path), *entry.layer);
  }
}

Tensor DatasetTensor(const H5Dataset& ds) { return ds.value; }

void WriteWeightsFile(const std::string& path, Layer& model, const Optimizer* optimizer) {
  const std::vector<LayerEntry> layers = Layers(model);
  std::vector<Variable*> trainable;
  H5Writer writer(path);
  writer.CreateGroup("layers");
  for (const LayerEntry& entry : layers) {
    writer.CreateGroup(entry.path);
    if (IsContainer(*entry.layer)) writer.CreateGroup(entry.path + "/layers");
    writer.CreateGroup(entry.path + "/vars", entry.layer->name());
    const KerasLayerKind& kind = KindOf(*entry.layer);
    if (kind.sublayers != nullptr) {
      for (const KerasSublayer& sub : kind.sublayers(*entry.layer)) {
        writer.CreateGroup(StrCat(entry.path, "/", sub.path));
        writer.CreateGroup(StrCat(entry.path, "/", sub.path, "/vars"), sub.name);
      }
    }
    const std::vector<Variable*> vars = OwnVariables(*entry.layer);
    const std::vector<std::string> paths = VariablePaths(kind, *entry.layer, vars.size());
    if (paths.size() != vars.size()) {
      throw InternalError(StrCat("Keras weights: layer '", entry.layer->name(), "' has ",
                                 vars.size(), " variables but its kind lists ", paths.size()));
    }
    for (size_t i = 0; i < vars.size(); ++i) {
      writer.WriteDataset(StrCat(entry.path, "/", paths[i]), vars[i]->value());
      if (vars[i]->trainable()) trainable.push_back(vars[i]);
    }
  }
  if (optimizer != nullptr) {
    // Building slots and listing them does not change the optimizer's state.
    Optimizer& opt = const_cast<Optimizer&>(*optimizer);
    const std::vector<Variable*> vars = KerasOptimizerVariables(opt, trainable);
    writer.CreateGroup("optimizer");
    writer.CreateGroup("optimizer/vars", KerasOptimizerName(opt));
    for (size_t i = 0; i < vars.size(); ++i)
      writer.WriteDataset(StrCat("optimizer/vars/", i), vars[i]->value());
  }
  writer.CreateGroup("vars", model.name());
  writer.Close();
}

void ApplyWeights(const H5Contents& contents, std::string_view file, Layer& model,
                  Optimizer* optimizer) {
  if (const std::optional<std::string> root = LegacyRoot(contents)) {
    if (optimizer != nullptr) {
      throw UnimplementedError(StrCat("Keras weights file '", file,
                                      "' is tf_keras's legacy .h5: its optimizer_weights are not "
                                      "read; load it without an optimizer"));
    }
    ApplyLegacyWeights(contents, file, *root, model);
    return;
  }
  // Everything is checked before anything is assigned.
  std::vector<std::pair<Variable*, Tensor>> assignments;
  std::vector<Variable*> trainable;
  for (const LayerEntry& entry : Layers(model)) {
    BuildFromFile(contents, file, entry.path, *entry.layer);
    const KerasLayerKind& kind = KindOf(*entry.layer);
    const std::vector<Variable*> vars = OwnVariables(*entry.layer);
    const std::vector<std::string> paths = VariablePaths(kind, *entry.layer, vars.size());
    if (paths.size() != vars.size()) {
      throw InvalidArgumentError(StrCat("Keras weights file '", file, "': group '", entry.path,
                                        "' (layer '", entry.layer->name(), "') lists ",
                                        paths.size(), " variables; the layer has ", vars.size()));
    }
    for (size_t i = 0; i < vars.size(); ++i) {
      const std::string key = StrCat(entry.path, "/", paths[i]);
      const H5Dataset& ds = Require(contents, file, key,
                                    StrCat("layer '", entry.layer->name(), "' variable ", i, ", '",
                                           vars[i]->shared_name(), "'"),
                                    vars[i]->dtype(), vars[i]->shape());
      assignments.emplace_back(vars[i], DatasetTensor(ds));
      if (vars[i]->trainable()) trainable.push_back(vars[i]);
    }
    for (const auto& [group, expected] : VarsGroups(kind, *entry.layer, vars.size())) {
      const std::string vars_group = StrCat(entry.path, "/", group);
      const size_t present = CountDatasets(contents, vars_group);
      if (present != expected) {
        throw InvalidArgumentError(StrCat("Keras weights file '", file, "': group '", vars_group,
                                          "' (layer '", entry.layer->name(), "') holds ", present,
                                          " datasets; the layer has ", expected,
                                          " variables there"));
      }
    }
  }
  if (optimizer != nullptr) {
    if (contents.groups.count("optimizer/vars") == 0) {
      throw NotFoundError(StrCat("Keras weights file '", file,
                                 "' has no optimizer state (no group 'optimizer/vars'); it was "
                                 "saved without a compiled optimizer"));
    }
    // Slots are created before any check: Build(trainable) makes the list
    // to check against (zeros until the assignments below).
    const std::vector<Variable*> vars = KerasOptimizerVariables(*optimizer, trainable);
    const size_t present = CountDatasets(contents, "optimizer/vars");
    if (present != vars.size()) {
      throw InvalidArgumentError(
          StrCat("Keras weights file '", file, "': group 'optimizer/vars' holds ", present,
                 " datasets; ", optimizer->name(), " over this model's ", trainable.size(),
                 " trainable variables has ", vars.size(),
                 " (Keras 3's optimizer.variables: iterations, learning_rate, then its slots;",
                 " no learning_rate with a schedule)"));
    }
    for (size_t i = 0; i < vars.size(); ++i) {
      const std::string key = StrCat("optimizer/vars/", i);
      const H5Dataset& ds =
          Require(contents, file, key, StrCat(optimizer->name(), " '", vars[i]->shared_name(), "'"),
                  vars[i]->dtype(), vars[i]->shape());
      assignments.emplace_back(vars[i], DatasetTensor(ds));
    }
  }
  for (auto& [variable, value] : assignments) variable->Assign(value);
}

std::string TempPathBeside(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  internal::RemoveTemporariesOfDeadProcesses(internal::DirName(path), name + ".tmp-");
  return StrCat(internal::DirName(path), "/", internal::TemporaryNameWithPid(name + ".tmp-"));
}

void CommitFile(const std::string& tmp, const std::string& path) {
  try {
    internal::SyncFile(tmp);
    internal::RenameFile(tmp, path);
    internal::SyncDirectory(internal::DirName(path));
  } catch (...) {
    internal::RemoveFileNoThrow(tmp);
    throw;
  }
}

}  // namespace keras_internal

namespace {

// Sequential and functional models alike (the public overloads say which
// layers a file is of: a model's, as Keras's save_weights).
void SaveWeights(const std::string& path, Layer& model, const Optimizer* optimizer) {
  const std::string tmp = keras_internal::TempPathBeside(path);
  try {
    keras_internal::WriteWeightsFile(tmp, model, optimizer);
  } catch (...) {
    internal::RemoveFileNoThrow(tmp);
    throw;
  }
  keras_internal::CommitFile(tmp, path);
}

void LoadWeights(const std::string& path, Layer& model, Optimizer* optimizer) {
  keras_internal::ApplyWeights(keras_internal::ReadH5File(path), path, model, optimizer);
}

}  // namespace

void SaveKerasWeights(const std::string& path, Sequential& model, const Optimizer* optimizer) {
  SaveWeights(path, model, optimizer);
}

void LoadKerasWeights(const std::string& path, Sequential& model, Optimizer* optimizer) {
  LoadWeights(path, model, optimizer);
}

void SaveKerasWeights(const std::string& path, Model& model, const Optimizer* optimizer) {
  SaveWeights(path, model, optimizer);
}

void LoadKerasWeights(const std::string& path, Model& model, Optimizer* optimizer) {
  LoadWeights(path, model, optimizer);
}

}  // namespace eager
