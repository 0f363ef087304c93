#pragma once

// What eager-ckpt's `meta` command shows of a `.meta` file (a MetaGraphDef)
// or a SavedModel's saved_model.pb: versions and tags, the op types used,
// the SaverDef, the collections with their VariableDefs, a SavedModel's
// signatures (each input and output: key, tensor, dtype, shape), a TF 2
// SavedModel's tf.functions by object path (each trace's input and output
// specs) and its function library, and every node with its op type, inputs and
// attributes, as text or JSON.
//
//   eager-ckpt meta model.ckpt.meta          (or the prefix model.ckpt)
//   eager-ckpt meta export/saved_model.pb --json

#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "runtime/function_library.h"
#include "saving/saver/meta_graph_def.h"
#include "saving/saver/saved_function.h"

namespace eager {

struct MetaGraphListing {
  std::string file;  // the file read
  // Its meta graphs (one for a .meta, one per tag set for a SavedModel),
  // opened for streaming: the nodes are read from the file as they are
  // printed, so that a graph of millions of nodes is never held as records.
  std::optional<MetaGraphFile> graphs;
  // Per meta graph, a TF 2 SavedModel's function library (nullptr: none, or
  // not a TF 2 SavedModel), listed after the signatures: each function's
  // arguments and results with their dtypes, its node count, whether it is
  // stateful. Read whole (a TF 1 file is never read twice).
  std::vector<std::shared_ptr<const FunctionLibrary>> functions;
  // Per meta graph, a TF 2 SavedModel's tf.functions by object path (what
  // SavedModelBundle::Function calls), listed with each trace's input and
  // output specs; empty without an object graph.
  std::vector<std::map<std::string, std::vector<SavedConcreteFunction>>> object_functions;
};

// Reads PATH: a file named saved_model.pb as a SavedModel, any other file
// as a MetaGraphDef, and a checkpoint prefix without such a file as
// PREFIX.meta. Throws NotFoundError naming both paths tried when neither
// exists, DataLossError (from MetaGraphFile) when the file does not parse.
MetaGraphListing ReadMetaGraphListing(const std::string& path);

// Text: a header per meta graph, then one line per node (name, op type,
// "<- inputs", {attrs}). JSON: one object with "file" and "meta_graphs".
// Throws MetaGraphFile::ForEachNode's errors for a node that does not
// convert, after the lines before it (a file whose framing is broken fails
// in ReadMetaGraphListing, before any output).
void PrintMetaGraphListing(const MetaGraphListing& listing, bool json, std::ostream& out);

// One attribute value as text: DT_FLOAT, [2,3], a tensor's dtype and shape,
// a list, a string (quoted, shortened when long).
std::string MetaAttrText(const MetaAttrValue& value);

}  // namespace eager
