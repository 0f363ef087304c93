#pragma once

// `eager-ckpt convert SRC DST --keras-model M.keras`: a Keras 3 model's
// TF checkpoint (object-based TensorBundle, tf.train.Checkpoint(model=m,
// optimizer=m.optimizer).write) to the `.weights.h5` Keras 3's
// model.load_weights() reads, and back. Keras's load_weights accepts only
// `.weights.h5`, so this is how a TF-format checkpoint reaches a Keras 3
// model.
//
// A TF checkpoint names no layer classes, which the `.weights.h5` layout
// is keyed by ("layers/dense_1/vars/0"), so the model's structure comes
// from a `.keras` file of the same model (model.save(); its weights are
// ignored): eager builds the model from it (LoadKerasModel), restores SRC
// into it with Keras 3's checkpoint layout (children "model" and, when the
// checkpoint has one and the .keras is compiled, "optimizer"), asserting
// every object in SRC matched, and saves DST; back, it loads SRC with
// LoadKerasWeights and writes DST with Checkpoint::Write.
//
// Errors: whatever the restore, LoadKerasModel or LoadKerasWeights throw,
// naming the file and the object or dataset that did not match.

#include <ostream>
#include <string>

namespace eager::ckpt_tool {

// SRC is a checkpoint prefix; prints what was converted to `out`.
void CheckpointToKerasWeights(const std::string& checkpoint, const std::string& keras_model,
                              const std::string& weights, std::ostream& out);
// DST is a checkpoint prefix (PREFIX.index, PREFIX.data-00000-of-00001).
void KerasWeightsToCheckpoint(const std::string& weights, const std::string& keras_model,
                              const std::string& checkpoint, std::ostream& out);

}  // namespace eager::ckpt_tool
