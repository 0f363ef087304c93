#pragma once

// Graph <-> MetaGraphDef: TF1's export_meta_graph and import_meta_graph.
//
//   // Writing: what Saver::Save(sess, prefix) does for PREFIX.meta.
//   eager::WriteMetaGraph("model.meta", eager::GraphToMetaGraph(graph));
//
//   // Reading: rebuild a graph from any TF1 .meta file and restore it.
//   eager::Graph graph;
//   eager::Graph::AsDefault in(graph);
//   std::unique_ptr<eager::Saver> saver = eager::ImportMetaGraph("model.ckpt.meta");
//   eager::Session sess(graph);
//   saver->Restore(sess, "model.ckpt");
//   sess.Run(graph.TensorByName("add:0"));
//
// Export writes every node with TF's op type, inputs, device and attributes
// (plus "_output_shapes", as TF's export does), versions {producer 38}
// (TF 1.14, the first with AddV2), the collections (variables as
// VariableDefs, names as node lists) and the stripped op list; a Saver's
// save/restore subgraph and SaverDef are added by the Saver. Import adds the
// nodes to a graph as they are (an op type eager lacks imports fine and fails
// with UnimplementedError only when a Session must run it), gives every
// variable of the "variables" collection a Variable (uninitialized), and
// restores the other collections of names.

#include <functional>
#include <memory>
#include <string>

#include "runtime/graph.h"
#include "saving/saver/meta_graph_def.h"

namespace eager {

class Saver;

// `graph` as a MetaGraph (no SaverDef).
MetaGraph GraphToMetaGraph(const Graph& graph);

// Adds `meta`'s nodes, variables and collections to `graph` (for a meta
// graph without a "variables" collection, such as ReadGraphDef's, every
// VariableV2 node gets a Variable). Throws
// InvalidArgumentError naming the node when a name is already taken in
// `graph` or the meta graph is malformed.
void ImportIntoGraph(const MetaGraph& meta, Graph& graph);
// The same, moving the nodes out of `meta` (left with no nodes, all else
// kept), so that a large graph is not held twice.
void ImportIntoGraphMovingNodes(MetaGraph& meta, Graph& graph);

// Adds graph `index` of `file` to `graph` as ImportIntoGraph adds a
// MetaGraph (file.graph(index) gives its SaverDef, collections and op
// list), each node converted into the graph as the file is read, so that no
// record of the whole graph exists. `edit`, when given, sees each node first
// and may change it (a scope) or throw (a node refused). On an error the
// nodes before the failing one stay in `graph`: import into a Graph of your
// own and drop it on error when that matters.
void ImportIntoGraph(const MetaGraphFile& file, size_t index, Graph& graph,
                     const std::function<void(MetaGraphNode&)>& edit = nullptr);

// tf.compat.v1.train.import_meta_graph: reads `path`, imports it into the
// default graph (Graph::Current()) and returns the Saver its SaverDef
// describes (the variables its restore subgraph assigns, under the keys it
// reads), a Saver of the global variables when there is no SaverDef, or
// nullptr when there are no variables either: the graph is still imported
// (and runs), and, as TF returns None and logs it, one line on stderr says
// "INFO: ImportMetaGraph(\"<path>\"): Saver not created because there are
// no variables in the graph to restore". ImportMetaGraphOptions::require_saver
// makes that case a NotFoundError with the same words instead. Throws
// FailedPreconditionError when no graph is the default (TF: not supported
// with eager execution), and the errors of ReadMetaGraph and ImportIntoGraph.
// The nodes are imported as the file is read: a file that breaks off or
// holds a bad node throws before any node is added when its framing is
// wrong, and after the nodes before the bad one otherwise (as for a name
// already taken).
std::unique_ptr<Saver> ImportMetaGraph(const std::string& path);

struct ImportMetaGraphOptions {
  // Every imported node goes under this name scope ("scope/v"), made unique
  // in the graph as TF's name_scope does ("scope_1" the second time); so do
  // the names in its collections, VariableDefs and SaverDef. The returned
  // Saver still reads the checkpoint keys the file names ("v").
  std::string import_scope = "";
  // Imported nodes get no device (TF's clear_devices).
  bool clear_devices = false;
  // A graph without variables (no Saver) is an error: NotFoundError "Saver
  // not created because there are no variables in the graph to restore",
  // naming the file, thrown after the import (the nodes stay in the graph).
  bool require_saver = false;
};
// As above, with TF's import_scope and clear_devices.
std::unique_ptr<Saver> ImportMetaGraph(const std::string& path,
                                       const ImportMetaGraphOptions& options);

}  // namespace eager
