#pragma once

// Graph-mode builders: TF1's tf.placeholder, tf.constant, tf.identity,
// tf.assign*, tf.no_op, tf.group and the variable initializers.
//
//   eager::Graph graph;
//   eager::Graph::AsDefault in(graph);
//   eager::Tensor x = eager::Placeholder(eager::DType::kFloat32, eager::Shape::Partial({-1, 3}),
//   "x"); eager::Variable w(eager::Tensor::Zeros({3}), "w"); eager::Operation init =
//   eager::GlobalVariablesInitializer();   // node "init" eager::Tensor step = eager::AssignAdd(w,
//   eager::ReduceSum(x, {0})); eager::Session sess(graph); sess.Run(init); sess.Run(step, {{x,
//   eager::Tensor::Matrix<float>({{1, 2, 3}})}});
//
// Outside a graph each does its work at once where that makes sense
// (Constant returns its value, Assign assigns, the initializers and NoOp
// return a none Operation); Placeholder is graph-only.

#include <string_view>
#include <vector>

#include "ops/op_def.h"
#include "runtime/graph.h"
#include "runtime/variable.h"

namespace eager {

// A value to feed to Session::Run: node "Placeholder" (dtype, shape
// attributes). `shape` may be partial (Shape::Partial({-1, 784})); a fed
// value must match dtype and every known dimension. Throws
// FailedPreconditionError outside a graph.
Tensor Placeholder(DType dtype, const Shape& shape, std::string_view name = "Placeholder");

// A Const node holding `value` (tf.constant); eager: `value` itself.
Tensor Constant(const Tensor& value, std::string_view name = "Const");

// The same values ("Identity"); an op of kAllOps, so it also runs eagerly
// (a new tensor id sharing the buffer) and passes gradients through.
Tensor Identity(const Tensor& x);
// The same tensors ("IdentityN", tf.identity_n), each passing its gradient
// through. Eagerly one Identity per tensor; in a graph one IdentityN node
// with an output per input. No values is InvalidArgumentError.
std::vector<Tensor> IdentityN(const std::vector<Tensor>& values);

// variable = value ("Assign", with TF's attributes use_locking and
// validate_shape true), variable += delta ("AssignAdd"), -= ("AssignSub").
// In a graph they add the node (the variable must belong to it; `value` must
// have its dtype and a compatible static shape, else InvalidArgumentError)
// and return its output, the new value; running it in a Session assigns the
// Variable object. On a resource variable (Graph::IsResourceVariable) the
// node is TF's AssignVariableOp (AssignAdd/SubVariableOp) and the result a
// ReadVariableOp waiting for it, as ResourceVariable.assign(read_value=True).
// Eagerly they assign at once and return the new value.
Tensor Assign(Variable& variable, const Tensor& value);
Tensor AssignAdd(Variable& variable, const Tensor& delta);
Tensor AssignSub(Variable& variable, const Tensor& delta);

// A node that does nothing but wait for its control inputs ("NoOp").
Operation NoOp(std::string_view name = "NoOp");
// tf.group: a NoOp running after every operation in `ops` (none ones are
// skipped), named `name` made unique; a name ending in "/" (a NameScope's
// prefix) is used as is, without the "/".
Operation Group(const std::vector<Operation>& ops, std::string_view name = "group_deps");
// The operation that produced a graph tensor (tf.Tensor.op).
Operation OperationOf(const Tensor& tensor);

// tf.compat.v1.global_variables_initializer(): a NoOp "init" depending on
// the initializer (NAME/Assign) of every global variable of the default
// graph. VariablesInitializer: the same for `variables`.
Operation GlobalVariablesInitializer();
Operation VariablesInitializer(const std::vector<Variable*>& variables,
                               std::string_view name = "init");

extern const OpDef kIdentityOp;
// Graph-only node types (OpDef::run; ops/op_def.h).
extern const OpDef kIdentityNOp;               // "IdentityN": its inputs (attr T: their dtypes)
extern const OpDef kConstOp;                   // "Const": its "value"
extern const OpDef kPlaceholderOp;             // "Placeholder": must be fed
extern const OpDef kPlaceholderWithDefaultOp;  // its input unless fed
extern const OpDef kVariableV2Op;              // the Variable object (a ref)
extern const OpDef kAssignOp;                  // ref = value; outputs the new value
extern const OpDef kAssignAddOp;
extern const OpDef kAssignSubOp;
extern const OpDef kIsVariableInitializedOp;  // its ref holds a value: bool scalar
extern const OpDef kNoOpOp;                   // nothing; waits for its control inputs

}  // namespace eager
