#include "ops/resource_variable_ops.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ops/execute.h"
#include "ops/index_ops.h"
#include "ops/op_def.h"
#include "runtime/graph.h"
#include "runtime/variable.h"

namespace eager {

Variable& NodeContext::RefVariable(size_t i) const {
  if (i >= refs.size()) {
    throw InvalidArgumentError(StrCat("node '", node.name, "' (", node.op,
                                      ") needs resource input ", i, "; it has ", refs.size()));
  }
  auto* v = dynamic_cast<Variable*>(refs[i]);
  if (v == nullptr) {
    throw InvalidArgumentError(StrCat("node '", node.name, "' (", node.op, "): resource input ", i,
                                      " must be a variable, but it is ", refs[i]->resource_kind(),
                                      " '", refs[i]->resource_name(), "'"));
  }
  return *v;
}

namespace {

// "node 'save/AssignVariableOp' (AssignVariableOp)"
std::string Where(const NodeContext& c) {
  return StrCat("node '", c.node.name, "' (", c.node.op, ")");
}

Variable& Handle(const NodeContext& c, size_t refs) {
  EAGER_CHECK(c.refs.size() == refs, Where(c), " needs ", refs, " resource input(s), has ",
              c.refs.size());
  return c.RefVariable(0);
}

// The variable's name as TF's messages give it: its handle's shared_name.
std::string_view NameOf(const Variable& v) { return v.shared_name(); }

// TF's text for a missing resource (DestroyResourceOp'd, or never assigned
// in TF1), which ReadVariableOp and the updates raise.
void RequireInitialized(const NodeContext& c, const Variable& v) {
  if (v.is_initialized()) return;
  throw FailedPreconditionError(
      StrCat("Could not find variable ", NameOf(v),
             ". This could mean that the variable has been deleted. In TF1, it can also mean the "
             "variable is uninitialized. (",
             Where(c), " reads variable '", NameOf(v), "' of dtype ", v.dtype(), " and shape ",
             v.shape(), ", which holds no value)"));
}

// The node's "dtype" attribute must be the variable's.
void RequireDType(const NodeContext& c, const Variable& v, const char* verb) {
  const DType want = c.attrs.GetType("dtype");
  if (want == v.dtype()) return;
  throw InvalidArgumentError(StrCat(
      "Trying to ", verb, " variable ", NameOf(v), " with wrong dtype. Expected ", v.dtype(),
      " got ", want, " (", Where(c), " has dtype ", want, "; the variable is ", v.dtype(), ")"));
}

// The Variable of another VarHandleOp node with the node's container and
// shared_name, or nullptr.
Variable* SharedVariable(const Graph& graph, const Node& node) {
  const auto attr = [](const Node& n, const char* name) {
    const std::string* s = AttrAs<std::string>(n.FindAttr(name));
    return s == nullptr ? std::string() : *s;
  };
  const std::string container = attr(node, "container");
  const std::string shared_name = attr(node, "shared_name");
  for (Variable* v : graph.GlobalVariables()) {
    const GraphVariable* record = graph.FindVariable(v);
    const Node* other = record == nullptr ? nullptr : graph.FindNode(record->variable_node);
    if (other != nullptr && other->op == "VarHandleOp" && attr(*other, "container") == container &&
        attr(*other, "shared_name") == shared_name) {
      return v;
    }
  }
  return nullptr;
}

NodeOutputs RunVarHandleOp(const NodeContext& c) {
  Variable* v = c.graph.VariableForNode(c.node.name);
  if (v == nullptr) v = SharedVariable(c.graph, c.node);
  if (v == nullptr) {
    throw NotFoundError(StrCat(Where(c), ": no variable resource for container '",
                               c.attrs.GetString("container"), "', shared_name '",
                               c.attrs.GetString("shared_name"),
                               "'; ImportMetaGraph makes one per resource VariableDef "
                               "(Graph::ImportVariable for a bare graph)"));
  }
  RequireDType(c, *v, "use");
  return {.values = {}, .ref = v};
}

// TF's gradient of ReadVariableOp: the read's gradient flows to the handle
// unchanged (graph gradients sum those of every read at the variable's
// VarHandleOp node, autodiff/graph_gradients.h).
std::vector<std::optional<Tensor>> ReadVariableGradient(const OpCall&, const Tensor& grad) {
  return {grad};
}

NodeOutputs RunReadVariableOp(const NodeContext& c) {
  Variable& v = Handle(c, 1);
  RequireDType(c, v, "read");
  RequireInitialized(c, v);
  return {{v.stored_value()}};
}

enum class Update { kAssign, kAdd, kSub };

template <Update kUpdate>
NodeOutputs RunAssignVariableOp(const NodeContext& c) {
  Variable& v = Handle(c, 1);
  EAGER_CHECK(c.inputs.size() == 1, Where(c), " needs a value input");
  const Tensor& value = c.inputs[0];
  RequireDType(c, v, "assign");
  if (value.dtype() != v.dtype()) {
    throw InvalidArgumentError(StrCat(Where(c), ": the value is ", value.dtype(), " but variable '",
                                      NameOf(v), "' is ", v.dtype()));
  }
  if (value.shape() != v.shape()) {
    const bool validate = kUpdate != Update::kAssign || c.attrs.GetBool("validate_shape");
    if (validate) {
      throw InvalidArgumentError(StrCat(Where(c), ": variable '", NameOf(v), "' has shape ",
                                        v.shape(), ", the value ", value.shape(),
                                        "; they must be equal"));
    }
    throw UnimplementedError(StrCat(Where(c), ": validate_shape = false with a value of shape ",
                                    value.shape(), " for variable '", NameOf(v), "' of shape ",
                                    v.shape(), " (eager's variables keep their shape)"));
  }
  if constexpr (kUpdate == Update::kAssign) {
    v.Assign(value);
  } else {
    RequireInitialized(c, v);
    if constexpr (kUpdate == Update::kAdd) v.AssignAdd(value);
    if constexpr (kUpdate == Update::kSub) v.AssignSub(value);
  }
  return {};
}

NodeOutputs RunResourceGather(const NodeContext& c) {
  Variable& v = Handle(c, 1);
  EAGER_CHECK(c.inputs.size() == 1, Where(c), " needs an indices input");
  RequireDType(c, v, "read");
  RequireInitialized(c, v);
  // TF gathers on axis batch_dims (ResourceGatherOp).
  const int64_t batch_dims = c.attrs.Has("batch_dims") ? c.attrs.GetInt("batch_dims") : 0;
  const Tensor params = v.stored_value();
  const Tensor inputs[] = {params, c.inputs[0]};
  return {{RunKernel(kGatherOp, inputs, Attrs{{"axis", batch_dims}, {"batch_dims", batch_dims}})}};
}

NodeOutputs RunVariableShape(const NodeContext& c) {
  Variable& v = Handle(c, 1);
  const DType out = c.attrs.Has("out_type") ? c.attrs.GetType("out_type") : DType::kInt32;
  const std::span<const int64_t> dims = v.shape().dims();
  if (out == DType::kInt64) {
    return {{Tensor::FromVector<int64_t>(std::vector<int64_t>(dims.begin(), dims.end()))}};
  }
  EAGER_CHECK(out == DType::kInt32, Where(c), ": out_type must be int32 or int64, got ", out);
  std::vector<int32_t> small;
  for (int64_t d : dims) {
    if (d > INT32_MAX) {
      throw InvalidArgumentError(StrCat(Where(c), ": variable '", NameOf(v), "' of shape ",
                                        v.shape(), " has a dimension too large for int32"));
    }
    small.push_back(static_cast<int32_t>(d));
  }
  return {{Tensor::FromVector<int32_t>(std::move(small))}};
}

NodeOutputs RunVarIsInitializedOp(const NodeContext& c) {
  return {{Tensor(Handle(c, 1).is_initialized())}};
}

NodeOutputs RunDestroyResourceOp(const NodeContext& c) {
  Variable& v = Handle(c, 1);
  if (!v.is_initialized()) {
    if (c.attrs.Has("ignore_lookup_error") && c.attrs.GetBool("ignore_lookup_error")) return {};
    throw NotFoundError(StrCat("Resource ", NameOf(v), " does not exist (", Where(c),
                               ": variable '", NameOf(v), "' is not initialized)"));
  }
  internal::UninitializeVariable(v);
  return {};
}

}  // namespace

const OpDef kVarHandleOp = {.type = "VarHandleOp", .run = RunVarHandleOp};
const OpDef kReadVariableOp = {.type = "ReadVariableOp",
                               .num_inputs = 1,
                               .gradient = ReadVariableGradient,
                               .run = RunReadVariableOp,
                               .ref_inputs = 0b1};
const OpDef kAssignVariableOp = {.type = "AssignVariableOp",
                                 .num_inputs = 2,
                                 .run = RunAssignVariableOp<Update::kAssign>,
                                 .num_outputs = 0,
                                 .ref_inputs = 0b1};
const OpDef kAssignAddVariableOp = {.type = "AssignAddVariableOp",
                                    .num_inputs = 2,
                                    .run = RunAssignVariableOp<Update::kAdd>,
                                    .num_outputs = 0,
                                    .ref_inputs = 0b1};
const OpDef kAssignSubVariableOp = {.type = "AssignSubVariableOp",
                                    .num_inputs = 2,
                                    .run = RunAssignVariableOp<Update::kSub>,
                                    .num_outputs = 0,
                                    .ref_inputs = 0b1};
const OpDef kResourceGatherOp = {
    .type = "ResourceGather", .num_inputs = 2, .run = RunResourceGather, .ref_inputs = 0b1};
const OpDef kVariableShapeOp = {
    .type = "VariableShape", .num_inputs = 1, .run = RunVariableShape, .ref_inputs = 0b1};
const OpDef kVarIsInitializedOp = {
    .type = "VarIsInitializedOp", .num_inputs = 1, .run = RunVarIsInitializedOp, .ref_inputs = 0b1};
const OpDef kDestroyResourceOp = {.type = "DestroyResourceOp",
                                  .num_inputs = 1,
                                  .run = RunDestroyResourceOp,
                                  .num_outputs = 0,
                                  .ref_inputs = 0b1};

}  // namespace eager
