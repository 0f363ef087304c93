#include "autodiff/graph_gradients.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "autodiff/internal/inline_call.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/control_flow_ops.h"
#include "ops/graph_ops.h"
#include "ops/internal/graph_builder.h"
#include "ops/shape_ops.h"
#include "runtime/function_library.h"
#include "runtime/graph.h"
#include "runtime/names.h"

namespace eager {
namespace {

enum : uint8_t { kUnvisited = 0, kAncestor = 1, kRelevant = 2 };

// One backward pass over the nodes of `graph`, as GradientTape's over its
// records: 1. the target's ancestors; 2. in topological order, those fed by
// a source (relevant), counting each relevant node's relevant consumers;
// 3. a ready stack from the target, each node's gradient function called
// once all its consumers have passed their gradients back.
class GraphBackprop {
 public:
  // `inlined_prefix`: the prefix of the nodes of an inlined function body
  // (autodiff/internal/inline_call.h), left out of their gradients' name
  // scopes so that names grow with the nesting depth, not twice per level.
  GraphBackprop(const Graph& graph, const std::vector<int>& sources,
                std::string inlined_prefix = {})
      : graph_(graph),
        inlined_prefix_(std::move(inlined_prefix)),
        state_(static_cast<size_t>(graph.num_nodes()), kUnvisited),
        is_source_(static_cast<size_t>(graph.num_nodes()), 0),
        uses_(static_cast<size_t>(graph.num_nodes()), 0),
        grads_(static_cast<size_t>(graph.num_nodes())) {
    for (int s : sources) is_source_[static_cast<size_t>(s)] = 1;
  }

  void Run(int root, const Tensor& seed) {
    const std::vector<int> order = AncestorsInTopologicalOrder(root);
    for (int n : order) {
      const Node& node = graph_.node(n);
      if (is_source_[static_cast<size_t>(n)]) continue;  // a VariableV2: no data inputs
      bool relevant = false;
      for (const int p : DataInputs(node)) {
        if (!Derived(p)) continue;
        relevant = true;
        ++uses_[static_cast<size_t>(p)];
      }
      if (relevant) state_[static_cast<size_t>(n)] = kRelevant;
    }
    grads_[static_cast<size_t>(root)] = seed;
    std::vector<int> stack;
    if (state_[static_cast<size_t>(root)] == kRelevant) stack.push_back(root);
    while (!stack.empty()) {
      const int n = stack.back();
      stack.pop_back();
      const Node& node = graph_.node(n);
      const std::vector<int> producers = DataInputs(node);
      std::vector<std::optional<Tensor>> input_grads;
      if (std::optional<Tensor>& out = grads_[static_cast<size_t>(n)]; out.has_value()) {
        input_grads = CallGradient(n, producers, *out);
      }
      for (size_t i = 0; i < producers.size(); ++i) {
        const int p = producers[i];
        if (!Derived(p)) continue;
        if (i < input_grads.size() && input_grads[i].has_value()) {
          std::optional<Tensor>& slot = grads_[static_cast<size_t>(p)];
          slot = slot.has_value() ? Add(*slot, *input_grads[i]) : *input_grads[i];
        }
        if (--uses_[static_cast<size_t>(p)] == 0 && state_[static_cast<size_t>(p)] == kRelevant) {
          stack.push_back(p);
        }
      }
    }
  }

  const std::optional<Tensor>& GradientOf(int node) const {
    return grads_[static_cast<size_t>(node)];
  }

 private:
  bool Derived(int p) const {
    return state_[static_cast<size_t>(p)] == kRelevant || is_source_[static_cast<size_t>(p)];
  }

  // Producers of the data inputs, in order (control inputs dropped). Eager's
  // ops have one output, so a gradient is that of output 0.
  std::vector<int> DataInputs(const Node& node) const {
    std::vector<int> out;
    for (const std::string& input : node.inputs) {
      const NodeInput in = ParseNodeInput(input);
      if (in.control) continue;
      const int p = graph_.FindNodeIndex(in.node);
      if (p < 0) {
        throw InvalidArgumentError(StrCat("Gradients: node '", node.name, "' has input '", input,
                                          "', but there is no node '", in.node, "'"));
      }
      out.push_back(p);
    }
    return out;
  }

  // Post-order depth-first walk from `root` along data inputs.
  std::vector<int> AncestorsInTopologicalOrder(int root) {
    std::vector<int> order;
    std::vector<std::pair<int, size_t>> stack = {{root, 0}};
    state_[static_cast<size_t>(root)] = kAncestor;
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      const std::vector<int> inputs = DataInputs(graph_.node(n));
      if (next == inputs.size()) {
        order.push_back(n);
        stack.pop_back();
        continue;
      }
      const int p = inputs[next++];
      if (state_[static_cast<size_t>(p)] != kUnvisited) continue;
      state_[static_cast<size_t>(p)] = kAncestor;
      stack.emplace_back(p, 0);
    }
    return order;
  }

  std::vector<std::optional<Tensor>> CallGradient(int n, const std::vector<int>& producers,
                                                  const Tensor& grad) {
    const Node& node = graph_.node(n);
    if (internal::IsInlinableCall(node.op)) return FunctionCallGradient(n, grad);
    if (internal::IsIf(node.op)) return IfGradient(n, grad);
    OpCall call = internal::NodeCall(graph_, n);
    if (call.op->gradient == nullptr) {
      throw UnimplementedError(StrCat("Gradients: no gradient defined for operation '", node.name,
                                      "' (op type: ", node.op, ")"));
    }
    for (size_t i = 0; i < call.inputs.size() && i < 64; ++i) {
      if (!Derived(producers[i])) call.skip_gradient |= uint64_t{1} << i;
    }
    NameScope scope(ScopeName(node));
    std::vector<std::optional<Tensor>> grads = call.op->gradient(call, grad);
    if (grads.size() != call.inputs.size()) {
      throw InternalError(StrCat("Gradients: the gradient of ", node.op, " returned ", grads.size(),
                                 " gradients for ", call.inputs.size(), " inputs"));
    }
    return grads;
  }

  // One more level of inlined function bodies while alive (a call's or an
  // If's); refuses to go past kMaxInlineDepth, which only a recursive
  // function library reaches.
  class InlineDepth {
   public:
    explicit InlineDepth(const Node& node) {
      if (inline_depth >= kMaxInlineDepth) {
        throw InvalidArgumentError(StrCat("Gradients: node '", node.name, "' (", node.op,
                                          ") nests function calls deeper than ", kMaxInlineDepth,
                                          ": the function library recurses"));
      }
      ++inline_depth;
    }
    ~InlineDepth() { --inline_depth; }
    InlineDepth(const InlineDepth&) = delete;
    InlineDepth& operator=(const InlineDepth&) = delete;
  };

  // A call's: its function's body copied into the graph
  // (autodiff/internal/inline_call.h) and differentiated by a backward pass
  // of its own from the copy's output to the nodes standing for the
  // arguments.
  std::vector<std::optional<Tensor>> FunctionCallGradient(int n, const Tensor& grad) {
    const Node& node = graph_.node(n);
    const InlineDepth depth(node);
    Graph& graph = *Graph::Current();  // Gradients checked it is graph_
    NameScope scope(ScopeName(node));
    const std::string prefix = graph.UniqueName("inlined") + "/";
    const internal::InlinedCall inlined = internal::InlineCall(graph, n, prefix);
    GraphBackprop inner(graph, inlined.args, prefix);
    inner.Run(inlined.output, grad);
    std::vector<std::optional<Tensor>> grads;
    grads.reserve(inlined.args.size());
    for (const int arg : inlined.args) grads.push_back(inner.GradientOf(arg));
    return grads;
  }

  // An If's: TF1's tf.cond of the branches' gradients, as dataflow. Each
  // branch is inlined behind a Switch of every value argument and of the
  // incoming gradient on the predicate, so only the taken branch's copy
  // runs (the other's tensors are dead, ops/control_flow_ops.h), and each
  // argument's gradient is the Merge of the two branches' (zeros where a
  // branch gives none).
  std::vector<std::optional<Tensor>> IfGradient(int n, const Tensor& grad) {
    const Node& node = graph_.node(n);
    const InlineDepth depth(node);
    Graph& graph = *Graph::Current();
    NameScope scope(ScopeName(node));
    std::vector<std::string> inputs;
    for (const std::string& input : node.inputs) {
      if (!ParseNodeInput(input).control) inputs.push_back(input);
    }
    const auto tensor = [&](const std::string& input) {
      const NodeInput in = ParseNodeInput(input);
      return graph.Output(graph.FindNodeIndex(in.node), in.index);
    };
    const Tensor pred = tensor(inputs.at(0));
    if (pred.dtype() != DType::kBool || pred.shape().rank() > 0) {
      throw UnimplementedError(StrCat("Gradients: node '", node.name, "' (", node.op,
                                      "): the gradient needs a bool scalar predicate, not ",
                                      pred.dtype(), " ", pred.shape()));
    }
    const SwitchOutputs seeds = Switch(grad, pred);
    std::vector<std::optional<Tensor>> sides[2];
    std::vector<Tensor> switched[2];
    std::vector<bool> resource;
    for (int side = 0; side < 2; ++side) {
      const char* branch = side == 1 ? "then_branch" : "else_branch";
      const std::string* function = AttrAs<std::string>(node.FindAttr(branch));
      if (function == nullptr) {
        throw InvalidArgumentError(
            StrCat("Gradients: node '", node.name, "' has no attribute '", branch, "'"));
      }
      if (graph.functions() == nullptr) {
        throw NotFoundError(StrCat("Gradients: node '", node.name, "' calls function '", *function,
                                   "', but its graph has no function library"));
      }
      const FunctionDefinition& f = graph.functions()->Get(*function, node.name);
      if (f.inputs.size() + 1 != inputs.size()) {
        throw InvalidArgumentError(StrCat("Gradients: node '", node.name, "' passes ",
                                          inputs.size() - 1, " arguments to '", f.name,
                                          "', which takes ", f.inputs.size()));
      }
      std::vector<std::string> args;
      resource.assign(f.inputs.size(), false);
      for (size_t i = 1; i < inputs.size(); ++i) {
        if (f.inputs[i - 1].tf_type == kTfResourceType) {
          resource[i - 1] = true;
          args.push_back(inputs[i]);  // the handle itself: a read of it is a read of the variable
          switched[side].emplace_back();
          continue;
        }
        const SwitchOutputs s = Switch(tensor(inputs[i]), pred);
        switched[side].push_back(side == 1 ? s.output_true : s.output_false);
        args.push_back(switched[side].back().name());
      }
      const std::string prefix = graph.UniqueName(side == 1 ? "then" : "else") + "/";
      const internal::InlinedCall inlined =
          internal::InlineFunction(graph, node, *function, args, prefix);
      GraphBackprop inner(graph, inlined.args, prefix);
      inner.Run(inlined.output, side == 1 ? seeds.output_true : seeds.output_false);
      for (const int arg : inlined.args) sides[side].push_back(inner.GradientOf(arg));
    }
    std::vector<std::optional<Tensor>> grads(inputs.size());  // none for the predicate
    for (size_t i = 0; i + 1 < inputs.size(); ++i) {
      if (!sides[0][i] && !sides[1][i]) continue;
      for (int side = 0; side < 2; ++side) {
        if (!sides[side][i]) {
          sides[side][i] = ZerosOfSide(graph, inputs[i + 1], switched[side][i], resource[i],
                                       side == 1 ? seeds.output_true : seeds.output_false);
        }
      }
      grads[i + 1] = Merge({*sides[0][i], *sides[1][i]}).output;
    }
    return grads;
  }

  // Zeros for a branch that gives argument `input` no gradient, dead when
  // the branch is: ZerosLike of the branch's Switch output `arg`, or for a
  // resource argument (a handle is not switched) of a read of the variable
  // that waits for the branch's seed.
  Tensor ZerosOfSide(Graph& graph, const std::string& input, const Tensor& arg, bool resource,
                     const Tensor& seed) {
    if (!resource) return ZerosLike(arg);
    const Node* handle = graph.FindNode(ParseNodeInput(input).node);
    const AttrValue* dtype = handle == nullptr ? nullptr : handle->FindAttr("dtype");
    if (dtype == nullptr || AttrAs<DType>(dtype) == nullptr) {
      throw UnimplementedError(StrCat("Gradients: an If's variable handle '", input,
                                      "' does not come from a VarHandleOp"));
    }
    const Operation live = graph.OperationOf(Identity(seed));
    const Graph::ControlDependencies after(graph, {live});
    Node read{.name = graph.UniqueName("ReadVariableOp"), .op = "ReadVariableOp"};
    read.inputs = {input};
    read.attrs = {{"dtype", *AttrAs<DType>(dtype)}};
    return ZerosLike(graph.Output(graph.AddNode(std::move(read))));
  }

  // "MatMul_grad" for node "MatMul" (or "<prefix>MatMul" when inlined).
  std::string ScopeName(const Node& node) const {
    std::string_view name = node.name;
    if (!inlined_prefix_.empty() && name.starts_with(inlined_prefix_)) {
      name.remove_prefix(inlined_prefix_.size());
    }
    return StrCat(name, "_grad");
  }

  static constexpr int kMaxInlineDepth = 64;
  static thread_local int inline_depth;

  const Graph& graph_;
  std::string inlined_prefix_;
  std::vector<uint8_t> state_;
  std::vector<uint8_t> is_source_;
  std::vector<int32_t> uses_;
  std::vector<std::optional<Tensor>> grads_;
};

thread_local int GraphBackprop::inline_depth = 0;

}  // namespace

std::vector<std::optional<Tensor>> Gradients(const Tensor& target,
                                             std::span<Variable* const> variables) {
  Graph* graph = Graph::Current();
  if (graph == nullptr) {
    throw FailedPreconditionError(
        "Gradients builds a graph's backward pass: call it while the graph is the default "
        "(use GradientTape in eager mode)");
  }
  const int root = graph->OperationOf(target).index();  // throws for an eager tensor
  std::vector<int> sources;
  for (const Variable* v : variables) {
    EAGER_CHECK(v != nullptr, "Gradients: variable ", sources.size(), " is null");
    const GraphVariable* record = graph->FindVariable(v);
    if (record == nullptr) {
      throw InvalidArgumentError(StrCat("Gradients: variable '", v->shared_name(),
                                        "' does not belong to the default graph"));
    }
    sources.push_back(graph->FindNodeIndex(record->variable_node));
  }
  std::vector<std::optional<Tensor>> result(variables.size());
  if (!IsFloating(target.dtype())) return result;
  NameScope scope("gradients");
  // Ones of the target's shape; as TF's gradients_util, from the Shape op
  // when the shape is only known at run time.
  const Tensor seed =
      target.shape().IsFullyDefined()
          ? Constant(Ones(target.shape(), target.dtype()), "grad_ys_0")
          : BroadcastTo(Constant(Ones(Shape{}, target.dtype()), "grad_ys_0"), ShapeOf(target));
  GraphBackprop pass(*graph, sources);
  pass.Run(root, seed);
  for (size_t i = 0; i < variables.size(); ++i) {
    if (IsFloating(variables[i]->dtype())) result[i] = pass.GradientOf(sources[i]);
  }
  return result;
}

}  // namespace eager
