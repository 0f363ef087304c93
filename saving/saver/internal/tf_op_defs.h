#pragma once

// TensorFlow's OpDefs for the op types eager writes into a GraphDef, for the
// MetaInfoDef's stripped_op_list (what TF's export_meta_graph records: the
// OpDef of every op type the graph uses, descriptions stripped): the
// signatures of runtime/op_signature.h (the one table) as MetaOpDefs,
// checked against real .meta files by tests/saving/saver/tf_op_defs_test.cc.

#include <string_view>
#include <vector>

#include "saving/saver/meta_graph_def.h"

namespace eager {
struct OpSignature;
}  // namespace eager

namespace eager::internal {

// The OpDef of `type`, or nullptr when the table does not know it.
const MetaOpDef* FindTfOpDef(std::string_view type);

// The stripped op list for `nodes`: one OpDef per op type used, sorted by
// name, as TF writes it. A type this table lacks gets an OpDef with its name
// only (readers ignore the list when importing).
std::vector<MetaOpDef> StrippedOpList(const MetaGraphNodes& nodes);

// A file's OpDef as a signature: its arguments (what SetOutputSpecs reads)
// and its attributes' names and types.
OpSignature SignatureOf(const MetaOpDef& op);

}  // namespace eager::internal
