#pragma once

// Graph mode's two translations, kept in one place: an op call (OpDef,
// inputs, Attrs) to a TF node record (Execute in graph mode), and a node
// record back to a kernel call (Session). Not part of the public API.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ops/op_def.h"
#include "runtime/attrs.h"
#include "runtime/graph.h"

namespace eager::internal {

// Execute's graph half: adds the node for calling `op` on `inputs` with
// `attrs` (input attrs as Const nodes "<node>/<input>", eager inputs as
// "Const" nodes, TF's type attrs) and returns its symbolic output 0. The shape
// rule runs first, so a bad call adds nothing and throws what eager throws.
Tensor AddOpNode(Graph& graph, const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs);

// Output dtype and static shape of `op` on `inputs`, which may be symbolic
// with unknown dimensions: the shape rule runs on stand-ins, and a dimension
// that depends on an unknown one is unknown in the result.
OutputSpec InferGraphOutput(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs);

// The node input string for `tensor`: its own for a tensor of `graph`, a new
// Const node's (named const_name, made unique in the current name scope) for
// an eager tensor. InvalidArgumentError for a tensor of another graph.
std::string GraphInput(Graph& graph, const Tensor& tensor, std::string_view const_name = "Const");

// Adds a Const node holding `value`, named graph.UniqueName(name); returns its index.
int AddConstNode(Graph& graph, const Tensor& value, std::string_view name);

// Session's half: the Attrs a kernel gets for `node`: its attributes, with
// TF's defaults for those a NodeDef may omit (stripped_default_attrs).
Attrs NodeKernelAttrs(const Node& node, const OpDef& op);
// Adds the input attrs from the values of the node's trailing inputs to
// `attrs`. Throws InvalidArgumentError naming the node for a value of the
// wrong kind.
void SetInputAttrs(const Node& node, const OpDef& op, std::span<const Tensor> input_attr_values,
                   Attrs& attrs);
// Both.
Attrs KernelAttrs(const Node& node, const OpDef& op, std::span<const Tensor> input_attr_values);

// The OpCall a GradientTape would have recorded for node `index`: the OpDef
// of its type, its data inputs as the graph's symbolic tensors (control
// inputs dropped; input attrs turned back into Attrs from the values of
// their Const producers), its output 0. Throws UnimplementedError naming
// the node when eager has no op of its type, InvalidArgumentError when an
// input attr does not come from a Const node.
OpCall NodeCall(const Graph& graph, int index);

}  // namespace eager::internal
