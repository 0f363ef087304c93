#pragma once

// The Saver an imported meta graph describes (TF's Saver(saver_def=...)):
// its SaverDef's restore op is walked (through NoOps, as sharded savers nest
// them) to every Assign, whose variable is restored from the key at the
// same index of its RestoreV2's tensor_names. Without a SaverDef, a Saver of
// the graph's global variables; without variables either, nullptr.

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/graph.h"
#include "saving/saver/meta_graph_def.h"
#include "saving/saver/saver.h"

namespace eager::internal {

std::unique_ptr<Saver> SaverForImportedGraph(const MetaGraph& meta, Graph& graph);

// The variables the Assigns under `restore_op_name` restore, by checkpoint
// key (a node of `graph`; VariableV2 or legacy Variable nodes without a
// Variable object get one).
std::map<std::string, Variable*> VariablesRestoredBy(Graph& graph,
                                                     const std::string& restore_op_name);

// `def` with its node names under `scope` ("scope/save/Const:0"); `def` for
// an empty scope (TF's Saver(saver_def=..., name=import_scope)).
MetaSaverDef ScopedSaverDef(const MetaSaverDef& def, const std::string& scope);

// VariableV2, or TF < 1.0's legacy Variable op (the same ref variable).
bool IsRefVariableOp(std::string_view op);
// VariableV2, the legacy Variable, or a resource variable's VarHandleOp: a
// node that Graph::ImportVariable gives a Variable.
bool IsVariableOp(std::string_view op);

}  // namespace eager::internal
