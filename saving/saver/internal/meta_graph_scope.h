#pragma once

// A meta graph as TF's import_meta_graph(import_scope=..., clear_devices=...)
// imports it: every node name under the scope ("scope/v"), and with it every
// name that refers to a node (inputs, control inputs, the "loc:@v"
// colocation attrs, name collections, VariableDefs, the SaverDef,
// signatures and asset tensors); devices cleared on request.

#include <string>

#include "saving/saver/meta_graph_def.h"

namespace eager::internal {

// `name` ("v", "v:0", "^v") under `scope` ("s/v", "s/v:0", "^s/v"); `name`
// for an empty scope or name (TF's ops.prepend_name_scope).
std::string PrependNameScope(const std::string& name, const std::string& scope);

// `node` under `scope` (its name, inputs and colocation attrs; nothing for
// an empty scope), its device emptied when `clear_devices`: what
// ScopedMetaGraph does to each node, for a graph imported as it is read.
void ScopeNode(MetaGraphNode& node, const std::string& scope, bool clear_devices);

// `meta` with every node and node reference under `scope` (none for an
// empty scope), and every node's device emptied when `clear_devices`.
MetaGraph ScopedMetaGraph(MetaGraph meta, const std::string& scope, bool clear_devices);

}  // namespace eager::internal
