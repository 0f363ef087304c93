#pragma once

// Reading a GraphDef's function library (TF's FunctionDefLibrary) into
// runtime's FunctionLibrary (runtime/function_library.h). Not public API.

#include <memory>
#include <string>

#include "runtime/function_library.h"
#include "runtime/graph.h"
#include "saving/saver/meta_graph_def.h"

namespace eager::tfproto {
class NodeDef;
}  // namespace eager::tfproto

namespace eager::internal {

// The function library of meta graph `index` of the SavedModel file `path`
// (saved_model.pb), or nullptr when it has none. Each FunctionDef becomes a
// FunctionDefinition whose body nodes are converted as ImportIntoGraph
// converts a GraphDef's. Throws DataLossError naming the file when it does
// not parse, InvalidArgumentError naming the function for two of one name,
// and UnimplementedError naming the function, node and attribute for an
// attribute placeholder ("$T": a polymorphic function, which a SavedModel's
// concrete functions never are).
std::shared_ptr<FunctionLibrary> ReadSavedModelFunctions(const std::string& path, size_t index);
// The same for the MetaGraphDef file `path` (a .meta: TF 2.x's TF1-style
// graphs hold the functions their tf.function calls and tf.cond branches
// run), or nullptr when it has none.
std::shared_ptr<FunctionLibrary> ReadMetaGraphFunctions(const std::string& path);

// Defined in meta_graph_def.cc and meta_graph_import_export.cc: one NodeDef
// converted as a GraphDef's nodes are.
MetaGraphNode MetaGraphNodeFromProto(const tfproto::NodeDef& node, const std::string& path);
Node GraphNodeFromMeta(MetaGraphNode&& node);

}  // namespace eager::internal
