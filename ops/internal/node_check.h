#pragma once

// The checks TF's executor makes on a NodeDef before its kernel runs
// (ValidateNodeDef against the op's signature), made once when a Session
// first runs a node, so that an imported graph computes what TF computes or
// is refused naming the attribute at fault. Not part of the public API.

#include <span>
#include <string_view>

#include "ops/op_def.h"
#include "runtime/attrs.h"
#include "runtime/graph.h"

namespace eager::internal {

// Checks node `node` of op `op`, with `attrs` its attributes and TF's
// defaults (NodeKernelAttrs), against TF's signature of its type:
//  - every attribute TF defines has a value of its kind ("N" an int, "T" a
//    type, "padding" a string, ...), in its allowed set ("T" among the
//    types, "padding" among the strings) and above its minimum ("N >= 2");
//  - the node has as many data inputs as the signature takes with those
//    attributes (ConcatV2 with N = 3 takes 3 values and an axis);
//  - a Const's "dtype" is its value's dtype.
// Each of those throws InvalidArgumentError naming the node and the
// attribute, as TF does. An attribute the signature lacks (a newer TF's,
// or a typo) throws UnimplementedError naming it, unless its name starts
// with '_' (TF's internal ones: "_class", "_output_shapes") or it is one
// eager knows to be harmless at the value given (Equal's
// incompatible_shape_error = true, MaxPool's explicit_paddings = []).
// Attribute values eager's kernels do not implement throw
// UnimplementedError naming them: padding 'EXPLICIT' and non-empty
// explicit_paddings, ApplyAdam's use_nesterov = true, Cast's Truncate = true
// to half or bfloat16. Ops without a signature are not checked.
void CheckNode(const Node& node, const OpDef& op, const Attrs& attrs);

// Checks the dtypes of node `node`'s data inputs (`inputs`, in order; a
// variable reference's the variable's) against its signature with `attrs`:
// an input of type attribute "T" must be of type T (AddV2 with T = int32 on
// float inputs, Cast with SrcT = int32 on a float). Throws
// InvalidArgumentError naming the node, the input and both types, as TF's
// import does. Ops without a signature are not checked.
void CheckInputTypes(const Node& node, const Attrs& attrs, std::span<const DType> inputs);

}  // namespace eager::internal
