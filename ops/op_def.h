#pragma once

// OpDef: everything about one op in one place — its TensorFlow op type, its
// shape rule, its kernel and its gradient.
//
// Each op family's .cc file defines its OpDefs next to each other:
//
//   const OpDef kMulOp = {
//       .type = "Mul",                        // TF's op type; reaches .meta files
//       .num_inputs = 2,
//       .infer = InferBinary<...>,            // output shape and dtype, or throws
//       .compute = BinaryKernel<MulFn, ...>,  // Eigen, row-major
//       .gradient = MulGradient,              // written with the public ops
//   };
//
// and ops/op_list.cc lists every OpDef once (kAllOps), with no static
// registration for the linker to drop. Ops run only through Execute()
// (ops/execute.h), which checks arity, runs the shape rule, the kernel, and
// tells any recorder (GradientTape) about the call — or, in graph mode, adds
// a node instead (runtime/graph.h), which a Session later runs through the
// same RunKernel.
//
// Graph-only node types (Const, Placeholder, VariableV2, Assign*, ApplyAdam,
// NoOp, ...) are OpDefs of the same table: they have no `compute` but a
// `run` kernel, which sees the node and the Variables its reference inputs
// reach (the Session's variable store), and say which inputs are references
// (`ref_inputs`) and how many outputs they have. Switch and Merge carry
// `flow`: a Session runs them itself (dead tensors, ops/control_flow_ops.h),
// as TF's executor does. TF's signature and attribute defaults of every op
// type live once, in runtime/op_signature.h, where saving/ reads them too.
//
// Graph facts: what a TF NodeDef of the op holds beyond our Attrs.
//   .node_name   = "add",                             // TF's default node name
//   .input_attrs = kReductionInputs,                  // attrs TF passes as inputs
//   .type_attrs  = kReductionTypes,                   // "T", "Tidx", ...
// Input attrs become Const nodes feeding the node, after the tensor inputs
// ("Sum/reduction_indices"); a Session turns their values back into Attrs.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/attrs.h"
#include "runtime/output_spec.h"
#include "runtime/tensor.h"

namespace eager {

struct OpDef;
class Graph;
struct Node;
class Variable;
class Resource;

// One executed op: what a GradientTape keeps.
struct OpCall {
  const OpDef* op = nullptr;
  std::vector<Tensor> inputs;
  Tensor output;
  Attrs attrs;
  // Graph gradients only (autodiff/graph_gradients.h): the input attrs
  // (OpDef::input_attrs) whose node input is not a Const but a tensor known
  // when the graph runs (a Shape, a BroadcastGradientArgs output), as that
  // tensor, by attr name ("axis"); such an attr is absent from `attrs`. Only
  // ops whose OpDef sets gradient_takes_tensor_attrs get them.
  std::vector<std::pair<std::string_view, Tensor>> tensor_attrs = {};
  // Bit i set: nobody wants the gradient of input i, so a gradient function
  // may skip computing it and return nullopt there (TF's
  // skip_input_indices, torch's needs_input_grad). GradientTape sets it
  // before each gradient call; 0 (every gradient wanted) is always correct.
  uint64_t skip_gradient = 0;

  // The tensor_attrs entry for `attr`, or nullptr when it is in `attrs`.
  const Tensor* TensorAttr(std::string_view attr) const {
    for (const auto& [name, t] : tensor_attrs) {
      if (name == attr) return &t;
    }
    return nullptr;
  }
  // Whether input i's gradient is wanted. Inputs past 63 always are.
  bool NeedsGradient(size_t i) const { return i >= 64 || ((skip_gradient >> i) & 1u) == 0; }
};

// Output shape and dtype from the inputs, or InvalidArgumentError naming the
// shapes/dtypes involved (Execute prefixes the op type).
using ShapeFn = OutputSpec (*)(std::span<const Tensor> inputs, const Attrs& attrs);
// Computes the output, of exactly the inferred spec.
using KernelFn = Tensor (*)(std::span<const Tensor> inputs, const Attrs& attrs,
                            const OutputSpec& spec);
// Gradients with respect to each input given the gradient `grad` of the
// output (same shape as the output); nullopt for an input that has none (an
// integer index, a non-differentiable path). Written with public ops only.
using GradientFn = std::vector<std::optional<Tensor>> (*)(const OpCall& call, const Tensor& grad);

// What a stateful graph-only kernel keeps between runs of its node (TF's
// kernel object: RandomUniform's generator). A kernel derives its own type.
struct NodeState {
  virtual ~NodeState() = default;
};

// The resources a Session's nodes share by name, as TF's resource manager
// keeps them by (container, shared_name): two HashTableV2 nodes with one
// shared_name are one table. They live as long as the Session.
using SharedResources = std::map<std::pair<std::string, std::string>, std::shared_ptr<Resource>>;

// What a graph-only kernel (OpDef::run) gets when a Session runs its node.
struct NodeContext {
  const Graph& graph;
  const Node& node;
  const Attrs& attrs;  // the node's, with TF's defaults filled in
  // The resources its reference and resource inputs reach, in order: the
  // Variables of VariableV2 references and variable handles, lookup tables.
  std::span<Resource* const> refs;
  std::span<const Tensor> inputs;  // the values of its other data inputs, in order
  // The node's state slot in this Session: empty on the node's first run,
  // then whatever the kernel left there, kept across Session::Run calls and
  // dropped with the Session (a new Session starts afresh, as TF's kernels
  // are made per session). Never null when a Session runs the node.
  std::unique_ptr<NodeState>* state = nullptr;
  // Ops with handle_inputs: per data input, 1 when it came as the next of
  // `refs` (its producer gave a resource), 0 when as the next of `inputs`.
  std::span<const uint8_t> input_is_handle = {};
  // The Session's shared resources; null outside a Session.
  SharedResources* shared_resources = nullptr;

  // refs[i] as a Variable; InvalidArgumentError naming the node when it is
  // another resource (a lookup table) or there is no refs[i].
  Variable& RefVariable(size_t i) const;
};
// Its outputs; `ref` set: output 0 is that resource itself (VariableV2's
// ref output, a handle), which its consumers reach; a consumer taking a
// value of a Variable reads the variable when it runs.
struct NodeOutputs {
  std::vector<Tensor> values;
  Resource* ref = nullptr;
};
using NodeKernelFn = NodeOutputs (*)(const NodeContext& context);

// An attribute that a TF graph passes as an input tensor.
struct InputAttr {
  enum class Kind {
    kInts,          // std::vector<int64_t> <-> int32 vector (Sum's reduction_indices)
    kInt,           // int64_t <-> int32 scalar (ConcatV2's axis)
    kShape,         // Shape <-> int32 vector (BroadcastTo's shape)
    kOutputScalar,  // double <-> scalar of the output's dtype (OneHot's on_value)
  };
  std::string_view attr;   // our Attrs name ("axis")
  std::string_view input;  // TF's input argument name ("reduction_indices")
  Kind kind;
};

// A TF type attribute and where its value comes from.
struct TypeAttr {
  static constexpr int kOutput = -1;  // the output's dtype
  static constexpr int kInt32 = -2;   // int32: the dtype input attrs are written with
  std::string_view name;              // "T", "Tidx"
  int source = 0;                     // an input index, kOutput or kInt32
};

struct OpDef {
  std::string_view type;  // TensorFlow op type: "AddV2", "MatMul", ...
  int num_inputs = 0;     // kVariadic for a list (ConcatV2)
  ShapeFn infer = nullptr;
  KernelFn compute = nullptr;
  GradientFn gradient = nullptr;  // nullptr: not differentiable
  // Optional, for ops whose gradient for input 0 is zero but where they read
  // it (StridedSlice): adds that gradient, for the output's gradient `grad`,
  // into `sum` in place. `sum` has input 0's shape and dtype, and nobody else
  // holds its buffer. GradientTape calls it instead of `gradient` when no
  // recorder sees its backward pass and only input 0 needs a gradient, so a
  // loop reading T slices of one tensor costs O(T) slices backwards, not T
  // tensors of zeros the whole input's size summed (O(T^2)). Returns false to
  // decline (a dtype it does not add): `gradient` then runs.
  bool (*add_input0_gradient)(const OpCall& call, const Tensor& grad, Tensor& sum) = nullptr;

  // Graph facts (see above). Empty node_name: the type; empty type_attrs:
  // {"T" from input 0}; one TypeAttr of empty name: none (LogicalAnd's
  // inputs are bool by its signature).
  std::string_view node_name = {};
  std::span<const InputAttr> input_attrs = {};
  std::span<const TypeAttr> type_attrs = {};
  // The shape rule on partially known shapes (graph mode, inputs of known
  // rank with some unknown dimensions). nullptr: `infer` runs on stand-in
  // sizes, which cannot tell when an output dimension depends on the
  // difference of two unknown ones (Conv2D's in - k + 1).
  ShapeFn infer_partial = nullptr;
  // True for an op that only eager mode runs: a fusion such as FusedMatMul,
  // which TF's grappler makes at run time and no TF graph file holds. Its
  // public function adds the unfused ops' nodes to a graph instead, so that
  // .meta files hold only ops with TF's OpDefs (saving/saver/internal/tf_op_defs.cc).
  bool eager_only = false;
  // The gradient function reads an input attr from OpCall::tensor_attrs when
  // its graph input is not a Const (Sum over BroadcastGradientArgs' axes,
  // Reshape to a Shape op's output), so that gradients of gradients of
  // shapes known at run time can be taken. False: such a node's gradient is
  // refused, naming the input.
  bool gradient_takes_tensor_attrs = false;

  // Graph-only ops (see above): `compute` is nullptr and `run` is the kernel.
  NodeKernelFn run = nullptr;
  int num_outputs = 1;      // kVariadic: as many as the node's specs say (RestoreV2)
  uint32_t ref_inputs = 0;  // bit i: data input i is a variable reference
  // A function call (ops/functional_ops.h): a data input whose producer
  // gives a variable handle (a Variable) is passed as that handle, any other
  // as its value; which ones are handles depends on the function called.
  bool handle_inputs = false;
  // Switch / Merge, which a Session runs itself.
  enum class Flow : uint8_t { kNone, kSwitch, kMerge };
  Flow flow = Flow::kNone;

  bool IsRefInput(size_t i) const { return i < 32 && ((ref_inputs >> i) & 1u) != 0; }

  static constexpr int kVariadic = -1;
};

// Every op, once, graph-only ones included. Defined in ops/op_list.cc.
std::span<const OpDef* const> AllOps();
// The op with TensorFlow type `type`, or nullptr. Older TF graphs' names for
// the same op resolve too ("Add" is AddV2).
const OpDef* FindOp(std::string_view type);

}  // namespace eager
