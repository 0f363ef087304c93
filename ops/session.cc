#include "ops/session.h"

#include <deque>
#include <map>

#include "ops/execute.h"
#include "ops/internal/graph_builder.h"
#include "ops/internal/memory_limit.h"
#include "ops/internal/node_check.h"
#include "ops/op_def.h"
#include "runtime/flush_denormal.h"
#include "runtime/variable.h"

namespace eager {
namespace internal {

// One input of a node with its producer found: node index, output index
// (0 for a control input, as ParseNodeInput gives it), whether control.
struct ResolvedInput {
  int node;
  int index;
  bool control;
};

// What a Session works out about a node once, the first time it needs it:
// its inputs' producers (when first visited), then its OpDef and the
// attributes its kernel gets (when it first runs).
struct ResolvedNode {
  std::optional<std::vector<ResolvedInput>> inputs;
  const OpDef* op = nullptr;         // nullptr: not resolved yet
  Attrs attrs;                       // the node's, with TF's defaults
  std::unique_ptr<NodeState> state;  // a stateful kernel's, across runs (NodeContext::state)
};

// Per node index (a deque: growing it keeps references to the entries made).
struct ResolvedInputs {
  std::deque<ResolvedNode> by_node;
};

}  // namespace internal

namespace {

using internal::ResolvedInput;
using internal::ResolvedNode;

// eager's kernels compute TF's default layout, NHWC; a node imported with
// another "data_format" must not run as if it were NHWC.
void CheckLayoutIsNhwc(const Node& node) {
  const AttrValue* format = node.FindAttr("data_format");
  if (format == nullptr) return;
  const auto* value = std::get_if<std::string>(format);
  if (value == nullptr || *value != "NHWC") {
    throw UnimplementedError(StrCat("Session::Run: node '", node.name, "' (", node.op,
                                    ") has data_format '", value ? *value : "?",
                                    "'; eager computes only NHWC"));
  }
}

// TF's node context suffix.
std::string NodeContext(const Node& node) { return StrCat("\n\t [[{{node ", node.name, "}}]]"); }

using Endpoint = std::pair<int, int>;  // node index, output index

// One Session::Run call: which nodes to run, their outputs.
class RunState {
 public:
  RunState(Graph& graph, internal::ResolvedInputs& resolved, const Feeds& feeds)
      : graph_(graph), resolved_(resolved) {
    outputs_.resize(static_cast<size_t>(graph.num_nodes()));
    refs_.resize(static_cast<size_t>(graph.num_nodes()), nullptr);
    dead_.resize(static_cast<size_t>(graph.num_nodes()), 0);
    for (const auto& [key, value] : feeds) AddFeed(key, value);
  }

  // Runs what `fetches` need and returns their values.
  std::vector<std::optional<Tensor>> Run(const std::vector<Fetch>& fetches) {
    std::vector<Endpoint> endpoints;
    endpoints.reserve(fetches.size());
    for (const Fetch& f : fetches) endpoints.push_back(Resolve(f));
    std::vector<char> state(static_cast<size_t>(graph_.num_nodes()), 0);
    std::vector<int> order;
    for (const Endpoint& e : endpoints) {
      if (e.second >= 0 && feeds_.contains(e)) continue;
      Visit(e.first, state, order);
    }
    CheckEveryOpRuns(order);
    CountUses(order, endpoints);
    for (int n : order) {
      RunNode(n);
      Release(n);
    }
    std::vector<std::optional<Tensor>> out;
    for (const Endpoint& e : endpoints) {
      if (e.second < 0) {
        out.emplace_back(std::nullopt);
        continue;
      }
      const Node& node = graph_.node(e.first);
      if (IsDead(e.first, e.second)) {
        throw InvalidArgumentError(
            StrCat("Session::Run: the fetched tensor '", node.name, ":", e.second,
                   "' has no value: it is dead, on the untaken branch of a Switch (tf.cond)"));
      }
      out.emplace_back(Value(e.first, e.second, node));
    }
    return out;
  }

 private:
  Endpoint Resolve(const Fetch& f) const {
    if (f.tensor()) {
      const Tensor& t = *f.tensor();
      const Operation op = graph_.OperationOf(t);  // throws for eager or another graph's tensors
      return {op.index(), t.symbolic()->index};
    }
    if (f.operation()) {
      const Operation& op = *f.operation();
      EAGER_CHECK(!op.is_none(), "Session::Run: cannot fetch a none Operation");
      EAGER_CHECK(op.graph() == &graph_, "Session::Run: operation '", op.name(),
                  "' belongs to another graph");
      return {op.index(), -1};
    }
    const std::string& name = *f.name();
    if (name.find(':') != std::string::npos) {
      const Tensor t = graph_.TensorByName(name);
      return {t.symbolic()->node, t.symbolic()->index};
    }
    return {graph_.OperationByName(name).index(), -1};
  }

  void AddFeed(const Fetch& key, const Tensor& value) {
    const Endpoint e = Resolve(key);
    const Node& node = graph_.node(e.first);
    if (e.second < 0) {
      throw InvalidArgumentError(StrCat("Session::Run: cannot feed the operation '", node.name,
                                        "'; feed one of its tensors, e.g. '", node.name, ":0'"));
    }
    const std::string name = StrCat(node.name, ":", e.second);
    if (value.is_symbolic()) {
      throw InvalidArgumentError(StrCat("Session::Run: the value fed for '", name,
                                        "' is the graph tensor '", value.name(),
                                        "'; feed a value"));
    }
    const DType dtype = node.output_specs[static_cast<size_t>(e.second)].dtype;
    const Shape& shape = node.output_specs[static_cast<size_t>(e.second)].shape;
    if (value.dtype() != dtype || !value.shape().IsCompatibleWith(shape)) {
      throw InvalidArgumentError(StrCat("Cannot feed value of dtype ", value.dtype(), " and shape ",
                                        value.shape(), " for Tensor '", name, "', which has dtype ",
                                        dtype, " and shape ", shape));
    }
    feeds_[e] = value;
  }

  // Depth-first, iteratively (graphs can be deep), appending nodes to
  // `order` after their inputs. A fed tensor's producer is not visited.
  void Visit(int root, std::vector<char>& state, std::vector<int>& order) {
    if (state[static_cast<size_t>(root)] == 2) return;
    std::vector<std::pair<int, size_t>> stack = {{root, 0}};
    state[static_cast<size_t>(root)] = 1;
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      const std::vector<ResolvedInput>& inputs = InputsOf(n);
      if (next == inputs.size()) {
        state[static_cast<size_t>(n)] = 2;
        order.push_back(n);
        stack.pop_back();
        continue;
      }
      const ResolvedInput& in = inputs[next++];
      const int m = in.node;
      if (!in.control && !feeds_.empty() && feeds_.contains({m, in.index})) continue;
      if (state[static_cast<size_t>(m)] == 2) continue;
      if (state[static_cast<size_t>(m)] == 1) {
        throw InvalidArgumentError(StrCat("Session::Run: the graph has a cycle through node '",
                                          graph_.node(m).name, "' (an input of '",
                                          graph_.node(n).name, "')"));
      }
      state[static_cast<size_t>(m)] = 1;
      stack.emplace_back(m, 0);
    }
  }

  // Intermediate lifetimes: how many data inputs of the nodes in `order`
  // read each node's outputs. A node's outputs are dropped once its last
  // reader has run (Release), so a long chain holds O(width) tensors, not
  // one per node; fetched nodes keep theirs to the end (variables live in
  // their Variable objects, fed values in feeds_, neither is dropped).
  void CountUses(const std::vector<int>& order, const std::vector<Endpoint>& endpoints) {
    uses_.assign(static_cast<size_t>(graph_.num_nodes()), 0);
    for (int n : order) {
      for (const ResolvedInput& in : InputsOf(n)) {
        if (!in.control) ++uses_[static_cast<size_t>(in.node)];
      }
    }
    for (const Endpoint& e : endpoints) uses_[static_cast<size_t>(e.first)] = kPinned;
  }

  // After node n ran (or was found dead): one read fewer of each of its
  // inputs; outputs nobody reads any more (n's own included, when nothing in
  // this run reads them) are freed.
  void Release(int n) {
    for (const ResolvedInput& in : InputsOf(n)) {
      if (!in.control) Drop(in.node);
    }
    if (uses_[static_cast<size_t>(n)] == 0)
      std::vector<Tensor>().swap(outputs_[static_cast<size_t>(n)]);
  }
  void Drop(int m) {
    int& uses = uses_[static_cast<size_t>(m)];
    if (uses == kPinned || uses == 0) return;
    if (--uses == 0) std::vector<Tensor>().swap(outputs_[static_cast<size_t>(m)]);
  }

  ResolvedNode& Resolved(int n) {
    auto& by_node = resolved_.by_node;
    if (by_node.size() <= static_cast<size_t>(n)) by_node.resize(static_cast<size_t>(n) + 1);
    return by_node[static_cast<size_t>(n)];
  }

  // Node n's inputs, resolved the first time any Run needs them (kept in
  // the Session). Throws InvalidArgumentError for an input naming no node;
  // that is not kept, as the graph may get the node later.
  const std::vector<ResolvedInput>& InputsOf(int n) {
    std::optional<std::vector<ResolvedInput>>& slot = Resolved(n).inputs;
    if (slot) return *slot;
    const Node& node = graph_.node(n);
    std::vector<ResolvedInput> inputs;
    inputs.reserve(node.inputs.size());
    for (const std::string& input : node.inputs) {
      const NodeInput in = ParseNodeInput(input);
      const int m = graph_.FindNodeIndex(in.node);
      if (m < 0) {
        throw InvalidArgumentError(StrCat("Session::Run: node '", node.name, "' (", node.op,
                                          ") has input '", input, "', but there is no node '",
                                          in.node, "'"));
      }
      inputs.push_back({m, in.index, in.control});
    }
    return slot.emplace(std::move(inputs));
  }

  // Before anything runs: every node of `order` whose op type eager lacks,
  // named with its node, in TF's words (TF builds every kernel of the
  // pruned graph before running any). A node behind a Switch (up to its
  // Merge) may sit on the untaken branch and is not run then: it is left to
  // fail when it runs.
  void CheckEveryOpRuns(const std::vector<int>& order) const {
    std::vector<char> conditional(static_cast<size_t>(graph_.num_nodes()), 0);
    std::vector<const Node*> missing;
    for (int n : order) {  // inputs come first in `order`
      const Node& node = graph_.node(n);
      bool behind_switch = false;
      for (const std::string& input : node.inputs) {
        const int from = graph_.FindNodeIndex(ParseNodeInput(input).node);
        if (from < 0) continue;
        const std::string& op = graph_.node(from).op;
        behind_switch |=
            op == "Switch" || op == "RefSwitch" || conditional[static_cast<size_t>(from)];
      }
      conditional[static_cast<size_t>(n)] = behind_switch && node.op != "Merge";
      if (!conditional[static_cast<size_t>(n)] && FindOp(node.op) == nullptr) {
        missing.push_back(&node);
      }
    }
    if (missing.empty()) return;
    const Node& first = *missing.front();
    std::string message =
        StrCat("No OpKernel was registered to support Op '", first.op, "' used by {{node ",
               first.name, "}}: Session::Run: node '", first.name, "' has op type '", first.op,
               "', which eager does not implement; nothing was run. ", missing.size(),
               " node(s) this run needs have no eager kernel:");
    for (const Node* node : missing) message += StrCat(" '", node->name, "' (", node->op, ")");
    throw UnimplementedError(message);
  }

  // Node n's OpDef and kernel attributes, worked out the first time it runs
  // and kept. Throws UnimplementedError for an op type eager lacks or a
  // layout it does not compute (not kept: thrown each time such a node must
  // run).
  const ResolvedNode& OpOf(int n, const Node& node) {
    ResolvedNode& r = Resolved(n);
    if (r.op != nullptr) return r;
    const OpDef* def = FindOp(node.op);
    if (def == nullptr) {
      throw UnimplementedError(StrCat("Session::Run: node '", node.name, "' has op type '", node.op,
                                      "', which eager does not implement"));
    }
    if (def->compute != nullptr) CheckLayoutIsNhwc(node);
    Attrs attrs = internal::NodeKernelAttrs(node, *def);
    internal::CheckNode(node, *def, attrs);
    r.attrs = std::move(attrs);
    r.op = def;
    return r;
  }

  // The Variable that ref input `input` of node n reaches (VariableV2's
  // output, passed on by a RefSwitch).
  Variable& RefVariable(const Node& node, const ResolvedInput& in, size_t input) {
    Variable* v = refs_[static_cast<size_t>(in.node)];
    if (v == nullptr) {
      const Node& producer = graph_.node(in.node);
      throw InvalidArgumentError(StrCat("node '", node.name, "' (", node.op, "): input ", input,
                                        " must be a variable reference; '", producer.name, "' (",
                                        producer.op, ") gives none"));
    }
    return *v;
  }

  // Output `index` of node `n` as input to (or fetch of) `consumer`. A
  // variable reference (VariableV2's output) reads the variable now.
  Tensor Value(int n, int index, const Node& consumer) {
    if (!feeds_.empty()) {
      if (auto it = feeds_.find({n, index}); it != feeds_.end()) return it->second;
    }
    const std::vector<Tensor>& outs = outputs_[static_cast<size_t>(n)];
    if (Variable* v = refs_[static_cast<size_t>(n)]; v != nullptr && outs.empty()) {
      if (!v->is_initialized()) {
        throw FailedPreconditionError(StrCat("Attempting to use uninitialized value ",
                                             graph_.node(n).name, NodeContext(consumer)));
      }
      return v->stored_value();
    }
    if (index < 0 || static_cast<size_t>(index) >= outs.size()) {
      const Node& node = graph_.node(n);
      throw InvalidArgumentError(StrCat("node '", consumer.name, "' uses output ", index,
                                        " of node '", node.name, "' (", node.op, "), which has ",
                                        outs.size(), " outputs when run"));
    }
    return outs[static_cast<size_t>(index)];
  }

  // Whether output `index` of node `n` is dead in this run (TF's executor:
  // see ops/control_flow_ops.h). Fed tensors and variables never are.
  bool IsDead(int n, int index) const {
    if (feeds_.contains({n, index})) return false;
    const uint64_t mask = dead_[static_cast<size_t>(n)];
    return index >= 64 ? mask != 0 : ((mask >> index) & 1u) != 0;
  }

  // A node other than Merge with a dead input, data or control, is dead.
  bool HasDeadInput(int n) {
    for (const ResolvedInput& in : InputsOf(n)) {
      if (IsDead(in.node, in.index)) return true;
    }
    return false;
  }

  // Merge: its first live input and that input's position among the data
  // inputs (TF's value_index, output 1); dead when none is live.
  void RunMerge(int n, const Node& node) {
    int value_index = 0;
    for (const ResolvedInput& in : InputsOf(n)) {
      if (in.control) continue;
      if (!IsDead(in.node, in.index)) {
        outputs_[static_cast<size_t>(n)] = {Value(in.node, in.index, node),
                                            Tensor(static_cast<int32_t>(value_index))};
        return;
      }
      ++value_index;
    }
    dead_[static_cast<size_t>(n)] = ~uint64_t{0};
  }

  // Switch: `data` on the branch `pred` selects; the other output is dead.
  // A switched variable reference stays a reference (RefSwitch).
  void RunSwitch(int n, const Node& node) {
    std::vector<Tensor> inputs;
    for (const ResolvedInput& in : InputsOf(n)) {
      if (!in.control) inputs.push_back(Value(in.node, in.index, node));
    }
    if (inputs.size() != 2) {
      throw InvalidArgumentError(StrCat("node '", node.name, "' (", node.op,
                                        ") needs 2 inputs (data, pred), has ", inputs.size()));
    }
    const Tensor& pred = inputs[1];
    if (pred.dtype() != DType::kBool || pred.num_elements() != 1) {
      throw InvalidArgumentError(StrCat("The second input must be a scalar, but it has shape ",
                                        pred.shape(), " and dtype ", pred.dtype()));
    }
    const bool taken = pred.data<bool>()[0];
    outputs_[static_cast<size_t>(n)] = {inputs[0], inputs[0]};
    const ResolvedInput& data = InputsOf(n)[0];
    if (!feeds_.contains({data.node, data.index})) {
      refs_[static_cast<size_t>(n)] = refs_[static_cast<size_t>(data.node)];
    }
    dead_[static_cast<size_t>(n)] = taken ? 1u : 2u;  // output_false is 0, output_true 1
    any_dead_ = true;
  }

  void RunNode(int n) {
    const Node& node = graph_.node(n);
    try {
      // Merge runs with dead inputs; any other node with one is dead
      // without running, even of a type eager lacks.
      const OpDef* def = Resolved(n).op;
      if (def == nullptr) def = FindOp(node.op);
      if (def != nullptr && def->flow == OpDef::Flow::kMerge) return RunMerge(n, node);
      if (any_dead_ && HasDeadInput(n)) {
        dead_[static_cast<size_t>(n)] = ~uint64_t{0};
        return;
      }
      const ResolvedNode& r = OpOf(n, node);
      if (r.op->flow == OpDef::Flow::kSwitch) return RunSwitch(n, node);
      Compute(n, node, r);
    } catch (const Error& e) {
      const std::string message = e.what();
      if (message.find("[[{{node ") != std::string::npos) throw;  // context already there
      ThrowError(e.code(), message + NodeContext(node));
    }
  }

  void Compute(int n, const Node& node, const ResolvedNode& r) {
    const OpDef& def = *r.op;
    const std::vector<ResolvedInput>& resolved = *r.inputs;
    std::vector<Tensor> inputs;
    inputs.reserve(resolved.size());
    std::vector<Variable*> refs;
    for (size_t i = 0; i < resolved.size(); ++i) {
      const ResolvedInput& in = resolved[i];
      if (in.control) continue;
      if (def.IsRefInput(i)) {
        refs.push_back(&RefVariable(node, in, i));
      } else {
        inputs.push_back(Value(in.node, in.index, node));
      }
    }
    if (def.run != nullptr) {
      NodeOutputs out = def.run({graph_, node, r.attrs, refs, inputs, &Resolved(n).state});
      outputs_[static_cast<size_t>(n)] = std::move(out.values);
      refs_[static_cast<size_t>(n)] = out.ref;
      return;
    }
    const size_t num_attr_inputs = def.input_attrs.size();
    if (inputs.size() < num_attr_inputs) {
      throw InvalidArgumentError(StrCat("node '", node.name, "' (", node.op, ") has ",
                                        inputs.size(), " inputs; expected at least ",
                                        num_attr_inputs));
    }
    const size_t num_tensors = inputs.size() - num_attr_inputs;
    const std::span<const Tensor> all(inputs);
    if (num_attr_inputs == 0) {
      outputs_[static_cast<size_t>(n)] = {RunKernel(def, all, r.attrs)};
      return;
    }
    Attrs attrs = r.attrs;
    internal::SetInputAttrs(node, def, all.subspan(num_tensors), attrs);
    outputs_[static_cast<size_t>(n)] = {RunKernel(def, all.first(num_tensors), attrs)};
  }

  Graph& graph_;
  internal::ResolvedInputs& resolved_;
  std::map<Endpoint, Tensor> feeds_;
  std::vector<std::vector<Tensor>> outputs_;
  std::vector<Variable*> refs_;  // per node: the Variable its output 0 refers to, if any
  std::vector<uint64_t> dead_;   // per node: bit i set when output i is dead
  // Per node: reads of its outputs still to come in this run (CountUses).
  static constexpr int kPinned = -1;  // fetched: kept to the end
  std::vector<int> uses_;
  bool any_dead_ = false;  // whether a Switch ran (else nothing is dead)
};

}  // namespace

Session::Session(Graph& graph, SessionOptions options)
    : graph_(graph), options_(options), inputs_(std::make_unique<internal::ResolvedInputs>()) {}
Session::~Session() = default;

std::vector<std::optional<Tensor>> Session::Run(const std::vector<Fetch>& fetches,
                                                const Feeds& feeds) {
  // Every node runs in TF's kernel mode (denormals flushed, round to
  // nearest), set once here rather than per node.
  const internal::ScopedFlushDenormal flush;
  const internal::ScopedMemoryLimit limit(options_.memory_limit_bytes);
  return RunState(graph_, *inputs_, feeds).Run(fetches);
}

Tensor Session::Run(const Tensor& fetch, const Feeds& feeds) {
  return *Run(std::vector<Fetch>{fetch}, feeds)[0];
}

Tensor Session::Run(const char* tensor_name, const Feeds& feeds) {
  std::string name(tensor_name);
  if (name.find(':') == std::string::npos) {
    throw InvalidArgumentError(StrCat("Session::Run(\"", name,
                                      "\"): a tensor name needs its output index (\"", name,
                                      ":0\"); run an operation with Run(Operation)"));
  }
  return *Run(std::vector<Fetch>{std::move(name)}, feeds)[0];
}

void Session::Run(const Operation& target, const Feeds& feeds) {
  if (target.is_none()) return;
  Run(std::vector<Fetch>{target}, feeds);
}

}  // namespace eager
