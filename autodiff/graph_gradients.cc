#include "autodiff/graph_gradients.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "autodiff/internal/inline_call.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/internal/graph_builder.h"
#include "ops/shape_ops.h"
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

  // A call's: its function's body copied into the graph
  // (autodiff/internal/inline_call.h) and differentiated by a backward pass
  // of its own from the copy's output to the nodes standing for the
  // arguments.
  std::vector<std::optional<Tensor>> FunctionCallGradient(int n, const Tensor& grad) {
    const Node& node = graph_.node(n);
    if (inline_depth >= kMaxInlineDepth) {
      throw InvalidArgumentError(StrCat("Gradients: node '", node.name, "' (", node.op,
                                        ") nests function calls deeper than ", kMaxInlineDepth,
                                        ": the function library recurses"));
    }
    ++inline_depth;
    struct Leave {
      ~Leave() { --inline_depth; }
    } leave;
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
