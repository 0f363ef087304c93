#pragma once

// The Saver an imported meta graph describes (TF's Saver(saver_def=...)):
// its SaverDef's restore op is walked (through NoOps, as sharded savers nest
// them) to every Assign, whose variable is restored from the key at the
// same index of its RestoreV2's tensor_names. Without a SaverDef, a Saver of
// the graph's global variables; without variables either, nullptr.

#include <memory>

#include "runtime/graph.h"
#include "saving/saver/meta_graph_def.h"
#include "saving/saver/saver.h"

namespace eager::internal {

std::unique_ptr<Saver> SaverForImportedGraph(const MetaGraph& meta, Graph& graph);

}  // namespace eager::internal
