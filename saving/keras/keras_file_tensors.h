#pragma once

// The tensors of a Keras file without a model: what `eager-ckpt` lists,
// dumps, verifies, diffs and converts.
//
//   for (const auto& [key, value] : eager::ReadKerasFileTensors("m.weights.h5"))
//     std::cout << key << " " << value.shape() << "\n";   // layers/dense/vars/0 [784, 256]
//
// Keys are the HDF5 dataset paths Keras 3 writes ("layers/dense/vars/0",
// "optimizer/vars/1"); a `.keras` archive's are those of its
// model.weights.h5 member. Read as LoadKerasWeights and LoadKerasModel read
// (keras_weights.h, keras_model.h): libhdf5 only in a forked child, every
// dataset checked, the archive's members checked before extraction; their
// errors, naming the file.

#include <map>
#include <string>

#include "runtime/tensor.h"

namespace eager {

// Whether `path` names a Keras file by its suffix: ".h5" (".weights.h5",
// tf_keras's ".h5") or ".keras".
bool IsKerasFile(const std::string& path);

// The datasets of a `.weights.h5` / `.h5` file or of a `.keras` archive's
// weights, keyed by dataset path.
std::map<std::string, Tensor> ReadKerasFileTensors(const std::string& path);

}  // namespace eager
