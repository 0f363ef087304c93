#pragma once

// What keras_weights.cc and keras_model.cc share: the `.weights.h5` layout
// applied to a model and optimizer, and crash-safe file replacement. Private
// to saving/keras/.

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

}  // namespace eager::keras_internal
