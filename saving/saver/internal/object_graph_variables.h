#pragma once

// A TF 2 SavedModel's variables: the resource variables its graph's
// VarHandleOp nodes name, restored from variables/ by the checkpoint's
// object graph. Not public API.

#include <map>
#include <memory>
#include <string>

#include "runtime/graph.h"

namespace eager {
class Saver;
}  // namespace eager

namespace eager::internal {

// Gives every VarHandleOp node of `graph` without a Variable one
// (Graph::ImportVariable) and returns a Saver that restores them from the
// bundle at `prefix`. A variable's key is the one TF's own restore function
// assigns it (`restore_op`, the SaverDef's restore op: a call whose
// AssignVariableOps take RestoreV2's outputs, as TF's C++ loader runs it);
// without one, the checkpoint_key of the object graph attribute
// (_CHECKPOINTABLE_OBJECT_GRAPH) whose full_name is the node's shared_name.
// A handle neither names stays uninitialized (a function reading it raises
// TF's "Could not find variable"). Returns nullptr when nothing is restored.
// Throws the bundle reader's errors, and DataLossError naming the bundle
// when its object graph does not parse.
// When `handle_by_path` is given, it gets each restored variable's handle
// node by its object's path in the checkpoint's object graph (local names
// from the root joined by '/': "encoder/kernel"), the first path found
// breadth-first: what a saved function's captures are resolved by.
std::unique_ptr<Saver> SaverForObjectGraphVariables(
    Graph& graph, const std::string& prefix, const std::string& restore_op,
    std::map<std::string, std::string>* handle_by_path = nullptr);

}  // namespace eager::internal
