#pragma once

// What keras_weights.cc and keras_model.cc share: the `.weights.h5` layout
// applied to a model and optimizer, and crash-safe file replacement. Private
// to saving/keras/.

#include <map>
#include <string>
#include <string_view>

#include "autodiff/adam.h"
#include "autodiff/sequential.h"
#include "saving/keras/internal/h5_file.h"

namespace eager::keras_internal {

// Writes Keras 3's weights layout (keras_weights.h) into a new HDF5 file
// `path` (not renamed, not synced).
void WriteWeightsFile(const std::string& path, Sequential& model, const Adam* optimizer);

// Checks every dataset `model` (and `optimizer`, when given) needs against
// `contents`, then assigns them. `file` names the file in errors.
void ApplyWeights(const H5Contents& contents, std::string_view file, Sequential& model,
                  Adam* optimizer);

// A fresh temporary path beside `path` ("<path>.tmp-<pid>-<hex>"), after
// removing those that killed writers of `path` left (their pid is gone).
std::string TempPathBeside(const std::string& path);
// fsync(tmp), rename(tmp, path), fsync(directory of path); removes tmp and
// rethrows on failure.
void CommitFile(const std::string& tmp, const std::string& path);

// A dataset's value as a Tensor (its dtype, shape and bytes).
Tensor DatasetTensor(const H5Dataset& dataset);

// A .keras archive's members by name, every one checked (keras_model.h says
// how); config.json and model.weights.h5 are required.
std::map<std::string, std::string> ReadKerasArchive(const std::string& path);
// The datasets of a .keras archive's weights member (`bytes`), read by
// ReadH5File from a scratch file in $TMPDIR that is removed after. `path`
// names the archive in errors.
H5Contents ReadWeightsMember(const std::string& path, const std::string& bytes);

}  // namespace eager::keras_internal
