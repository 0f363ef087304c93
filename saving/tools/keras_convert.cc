#include "saving/tools/keras_convert.h"

#include <memory>
#include <utility>
#include <vector>

#include "runtime/errors.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/checkpoint/checkpoint.h"
#include "saving/keras/keras_model.h"
#include "saving/keras/keras_weights.h"

namespace eager::ckpt_tool {
namespace {

// Whether the object-based checkpoint at `prefix` holds an optimizer under
// the root's "optimizer" edge (its keys start "optimizer/").
bool HasOptimizer(const std::string& prefix) {
  const BundleReader reader(prefix);
  for (const std::string& key : reader.Keys()) {
    if (key.rfind("optimizer/", 0) == 0) return true;
  }
  return false;
}

// The root tf.train.Checkpoint(model=, optimizer=) has, without the
// save_counter a Checkpoint of children adds: Keras's checkpoint.write()
// stores none, and a restore would then find it unmatched.
class KerasRoot final : public Trackable {
 public:
  KerasRoot(KerasModel& model, bool with_optimizer) {
    children_.push_back({"model", &model.root()});
    if (with_optimizer) children_.push_back({"optimizer", model.optimizer.get()});
  }
  std::vector<Child> Children() override { return children_; }

 private:
  std::vector<Child> children_;
};

// A root-mode Checkpoint of `root` in Keras 3's layout.
std::unique_ptr<Checkpoint> KerasCheckpoint(KerasRoot& root) {
  auto checkpoint = std::make_unique<Checkpoint>(root);
  SetKerasLayout(*checkpoint, KerasLayout::kKeras3);
  return checkpoint;
}

void SaveWeights(const std::string& path, KerasModel& model, const Optimizer* optimizer) {
  if (model.model) {
    SaveKerasWeights(path, *model.model, optimizer);
  } else {
    SaveKerasWeights(path, *model.functional, optimizer);
  }
}

void LoadWeights(const std::string& path, KerasModel& model, Optimizer* optimizer) {
  if (model.model) {
    LoadKerasWeights(path, *model.model, optimizer);
  } else {
    LoadKerasWeights(path, *model.functional, optimizer);
  }
}

}  // namespace

void CheckpointToKerasWeights(const std::string& checkpoint, const std::string& keras_model,
                              const std::string& weights, std::ostream& out) {
  KerasModel model = LoadKerasModel(keras_model);
  const bool with_optimizer = model.optimizer != nullptr && HasOptimizer(checkpoint);
  KerasRoot root(model, with_optimizer);
  KerasCheckpoint(root)->Restore(checkpoint).AssertExistingObjectsMatched();
  SaveWeights(weights, model, with_optimizer ? model.optimizer.get() : nullptr);
  out << checkpoint << " -> " << weights << " (the model of " << keras_model
      << (with_optimizer ? ", with its optimizer)\n" : ")\n");
}

void KerasWeightsToCheckpoint(const std::string& weights, const std::string& keras_model,
                              const std::string& checkpoint, std::ostream& out) {
  KerasModel model = LoadKerasModel(keras_model);
  bool with_optimizer = model.optimizer != nullptr;
  try {
    LoadWeights(weights, model, with_optimizer ? model.optimizer.get() : nullptr);
  } catch (const NotFoundError&) {
    // A compiled model's weights saved without the optimizer state.
    with_optimizer = false;
    LoadWeights(weights, model, nullptr);
  }
  KerasRoot root(model, with_optimizer);
  KerasCheckpoint(root)->Write(checkpoint);
  out << weights << " -> " << checkpoint << " (the model of " << keras_model
      << (with_optimizer ? ", with its optimizer)\n" : ")\n");
}

}  // namespace eager::ckpt_tool
