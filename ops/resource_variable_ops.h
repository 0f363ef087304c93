#pragma once

// TensorFlow's resource variables in graph mode: the ops a TF 2.x graph
// (tf.compat.v1.disable_eager_execution() alone, or a Keras/TF2 layer traced
// into a graph) uses on variables instead of VariableV2 and its reference
// edges.
//
//   VarHandleOp          -> the variable's handle (DT_RESOURCE, TF's enum 20)
//   ReadVariableOp       handle -> its value
//   AssignVariableOp     handle, value        (AssignAdd/SubVariableOp alike)
//   ResourceGather       handle, indices -> rows of its value (GatherV2 on axis batch_dims)
//   VariableShape        handle -> its shape (out_type int32 or int64)
//   VarIsInitializedOp   handle -> bool scalar
//   DestroyResourceOp    handle: the variable is uninitialized again
//
// How a handle travels: a Session carries a DT_RESOURCE tensor as the
// Variable object itself, along the same edges as VariableV2's reference
// output (OpDef::ref_inputs): VarHandleOp's node kernel yields the Variable,
// and every input TF declares `resource` is a reference input here, so no
// consumer ever reads the value behind a handle's back. The Variable is the
// resource: it is owned by the Graph (Graph::ImportVariable, which
// ImportMetaGraph calls for each VariableDef with is_resource), so Sessions
// on one graph share it, as eager's ref variables are shared (TF keeps it in
// each Session's ResourceMgr under container/shared_name; eager's one
// resource manager is the graph). A VarHandleOp node without a Variable of
// its own resolves to the Variable of another VarHandleOp node with the same
// container and shared_name, as TF's lookup does; none is NotFoundError.
//
// Errors, as TF's kernels raise them, plus the variable's name and the
// node: reading (or updating) an uninitialized variable is
// FailedPreconditionError "Could not find variable dense/kernel. ... In
// TF1, it can also mean the variable is uninitialized"; a dtype attribute
// other than the variable's is InvalidArgumentError naming both dtypes;
// AssignVariableOp of another shape is InvalidArgumentError with
// validate_shape = true and UnimplementedError without (TF would reshape the
// variable; eager's variables keep their shape).
//
// Gradients: ReadVariableOp's is TF's, the identity onto the handle, so
// eager::Gradients (autodiff/graph_gradients.h) of an imported graph sums
// the gradients of every read of a variable at its VarHandleOp node.
//
// The Variable is a Resource (runtime/resource.h), as a lookup table is
// (ops/lookup_ops.h): both travel this way; a kernel wanting a variable gets
// it through NodeContext::RefVariable, which refuses a table by name.
//
// The training ops on handles (ResourceApplyAdam, ...) are in
// ops/resource_training_ops.h.

namespace eager {

struct OpDef;

extern const OpDef kVarHandleOp;
extern const OpDef kReadVariableOp;
extern const OpDef kAssignVariableOp;
extern const OpDef kAssignAddVariableOp;
extern const OpDef kAssignSubVariableOp;
extern const OpDef kResourceGatherOp;
extern const OpDef kVariableShapeOp;
extern const OpDef kVarIsInitializedOp;
extern const OpDef kDestroyResourceOp;

}  // namespace eager
