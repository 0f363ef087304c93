#pragma once

// The save/restore subgraph TF1's Saver adds to a graph (FORMAT.md 6.2), as
// MetaGraph nodes, for a non-sharded V2 Saver under a name scope ("save/",
// "save_1/"):
//
//   save/Const                        Const string "model" (the filename tensor)
//   save/SaveV2/tensor_names          Const string [n]: the keys, sorted
//   save/SaveV2/shape_and_slices      Const string [n]: ""
//   save/SaveV2                       SaveV2 (filename, names, slices, each variable)
//   save/control_dependency           Identity (filename, ^save/SaveV2)
//   save/RestoreV2/tensor_names, save/RestoreV2/shape_and_slices, save/RestoreV2
//                                     on /device:CPU:0
//   save/Assign, save/Assign_1, ...   Assign (variable, save/RestoreV2:i)
//   save/restore_all                  NoOp (^save/Assign, ...)
//
// and the SaverDef naming them. eager never runs these nodes (a Saver
// assigns Variables directly); they make the .meta file TensorFlow's.

#include <string>
#include <vector>

#include "runtime/shape.h"
#include "saving/saver/meta_graph_def.h"

namespace eager::internal {

struct SaverGraphVariable {
  std::string key;   // checkpoint key
  std::string node;  // the VariableV2 node ("v1")
  int tf_dtype = 1;
  std::vector<int64_t> dims;
};

// Appends the nodes to `nodes` (variables sorted by key, as TF) and returns
// the SaverDef. `scope` ends with "/".
MetaSaverDef AppendSaverNodes(MetaGraphNodes& nodes, const std::string& scope,
                              std::vector<SaverGraphVariable> variables, int max_to_keep,
                              float keep_checkpoint_every_n_hours);

}  // namespace eager::internal
