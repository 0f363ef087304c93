#pragma once

// Reading a TF 2 SavedModel's SavedObjectGraph (MetaGraphDef field
// object_graph_def) into its functions: each tf.function by object path,
// its traces with their input and output TensorSpecs and captured
// objects. Not public API.

#include <map>
#include <string>
#include <vector>

#include "saving/saver/saved_function.h"

namespace eager::internal {

struct SavedFunctions {
  // By path: a method of the root is its name ("__call__"), a child's
  // "child.method" ("encoder.__call__"). Traces in the order TF lists them.
  std::map<std::string, std::vector<SavedConcreteFunction>> functions;
  // Each object's path from the root, '/'-joined as in a checkpoint's
  // object graph ("encoder/kernel"), breadth-first, by SavedObjectGraph id.
  std::vector<std::string> object_paths;
};

// Parses `bytes` (a serialized SavedObjectGraph). Throws DataLossError
// naming `where` when it does not parse, and InvalidArgumentError naming
// the function when a trace's signature is not a (args tuple, kwargs dict)
// of TensorSpecs, a bound input is out of range, or a function names a
// trace the graph does not describe. Signatures (the "signatures" child)
// are left out: SavedModelBundle::Run runs them.
SavedFunctions ReadSavedFunctions(const std::string& bytes, const std::string& where);

}  // namespace eager::internal
