#pragma once

// TensorFlow's OpDefs for the op types eager writes into a GraphDef, for the
// MetaInfoDef's stripped_op_list (what TF's export_meta_graph records: the
// OpDef of every op type the graph uses, descriptions stripped). Written in
// REGISTER_OP's own notation ("x: T", "T: {float, double}", "validate_shape:
// bool = true"); argument and attribute lists as TF 1.14 registers them
// (AddV2: TF 2.x, which added it), checked against real .meta files by
// tests/saving/tf_op_defs_test.cc.

#include <string_view>
#include <vector>

#include "saving/saver/meta_graph_def.h"

namespace eager::internal {

// The OpDef of `type`, or nullptr when this table does not know it.
const MetaOpDef* FindTfOpDef(std::string_view type);

// The stripped op list for `nodes`: one OpDef per op type used, sorted by
// name, as TF writes it. A type this table lacks gets an OpDef with its name
// only (readers ignore the list when importing).
std::vector<MetaOpDef> StrippedOpList(const std::vector<MetaGraphNode>& nodes);

}  // namespace eager::internal
