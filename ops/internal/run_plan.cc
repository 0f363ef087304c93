#include "ops/internal/run_plan.h"

#include <algorithm>
#include <string>

#include "ops/internal/loop_frames.h"

namespace eager::internal {
namespace {

// The position of `e` in the sorted `feeds`, or -1.
int FeedIndex(const std::vector<Endpoint>& feeds, const Endpoint& e) {
  if (feeds.empty()) return -1;
  const auto it = std::lower_bound(feeds.begin(), feeds.end(), e);
  return it != feeds.end() && *it == e ? static_cast<int>(it - feeds.begin()) : -1;
}

// Appends node n's inputs to `out`: producers by node index (from) and
// output index (port), or fed tensors as ~feed.
// Node n's record as a plan sees it: a while loop's replacement, or its own.
const Node& PlannedNode(const Graph& graph, const LoopFrames* frames, int n) {
  if (frames != nullptr) {
    if (const Node* replacement = frames->Replacement(n)) return *replacement;
  }
  return graph.node(n);
}

void ResolveInputs(const Graph& graph, const LoopFrames* frames, int n,
                   const std::vector<Endpoint>& feeds, std::vector<PlanInput>& out) {
  const Node& node = PlannedNode(graph, frames, n);
  for (const std::string& input : node.inputs) {
    const NodeInput in = ParseNodeInput(input);
    const int m = graph.FindNodeIndex(in.node);
    if (m < 0) {
      throw InvalidArgumentError(StrCat("Session::Run: node '", node.name, "' (", node.op,
                                        ") has input '", input, "', but there is no node '",
                                        in.node, "'"));
    }
    if (in.control) {
      out.push_back({m, PlanInput::kControl});
      continue;
    }
    const int feed = FeedIndex(feeds, {m, in.index});
    out.push_back({feed >= 0 ? ~feed : m, in.index});
  }
}

// The nodes the fetches need, each once, inputs first: a depth-first
// search, iterative (graphs can be millions of nodes deep). Nodes are
// numbered as first reached (their inputs resolved then, into `found`,
// contiguously), and listed in `order` once their inputs are.
struct Search {
  std::vector<int32_t> visit_of;  // per graph node: its visit number, or -1
  std::vector<int32_t> nodes;     // per visit: the graph node
  std::vector<uint32_t> ends;     // per visit: the end of its inputs in `found`
  std::vector<char> done;         // per visit: listed in `order`
  std::vector<PlanInput> found;   // from: a graph node index, or ~feed
  std::vector<int32_t> order;     // visits, inputs first

  const LoopFrames* frames = nullptr;

  int32_t Reach(const Graph& graph, int n, const std::vector<Endpoint>& feeds) {
    const auto v = static_cast<int32_t>(nodes.size());
    visit_of[static_cast<size_t>(n)] = v;
    nodes.push_back(n);
    ResolveInputs(graph, frames, n, feeds, found);
    ends.push_back(static_cast<uint32_t>(found.size()));
    done.push_back(0);
    return v;
  }
  uint32_t Begin(int32_t v) const { return v == 0 ? 0 : ends[static_cast<size_t>(v) - 1]; }

  void Visit(const Graph& graph, int root, const std::vector<Endpoint>& feeds) {
    if (visit_of[static_cast<size_t>(root)] >= 0) return;  // done: the stack is empty
    std::vector<std::pair<int32_t, uint32_t>> stack;       // visit, its next input
    const int32_t first = Reach(graph, root, feeds);
    stack.emplace_back(first, Begin(first));
    while (!stack.empty()) {
      const int32_t v = stack.back().first;
      const uint32_t next = stack.back().second;
      if (next == ends[static_cast<size_t>(v)]) {
        done[static_cast<size_t>(v)] = 1;
        order.push_back(v);
        stack.pop_back();
        continue;
      }
      ++stack.back().second;
      const PlanInput in = found[next];
      if (in.fed()) continue;
      const int32_t w = visit_of[static_cast<size_t>(in.from)];
      if (w >= 0) {
        if (done[static_cast<size_t>(w)] != 0) continue;
        throw InvalidArgumentError(StrCat("Session::Run: the graph has a cycle through node '",
                                          graph.node(in.from).name, "' (an input of '",
                                          graph.node(nodes[static_cast<size_t>(v)]).name, "')"));
      }
      const int32_t reached = Reach(graph, in.from, feeds);
      stack.emplace_back(reached, Begin(reached));
    }
  }
};

// Before anything runs: every step whose op type eager lacks, named with
// its node, in TF's words. A step behind a Switch (up to its Merge) may sit
// on the untaken branch and is not run then: it is left to fail when it runs.
void CheckEveryOpRuns(const Graph& graph, const RunPlan& plan) {
  std::vector<char> conditional(plan.steps.size(), 0);
  std::vector<const Node*> missing;
  const auto is_switch = [](const OpDef* op) {
    return op != nullptr && op->flow == OpDef::Flow::kSwitch;
  };
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    bool behind_switch = false;
    for (const PlanInput& in : plan.InputsOf(s)) {
      if (in.fed()) {
        behind_switch |= is_switch(FindOp(graph.node(plan.feeds[in.feed()].first).op));
      } else {
        behind_switch |= is_switch(plan.OpOf(in.step())) || conditional[in.step()] != 0;
      }
    }
    const OpDef* op = plan.OpOf(s);
    conditional[s] = behind_switch && (op == nullptr || op->flow != OpDef::Flow::kMerge) ? 1 : 0;
    if (conditional[s] == 0 && op == nullptr) missing.push_back(&graph.node(plan.steps[s].node));
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

}  // namespace

RunPlan BuildRunPlan(const Graph& graph, std::vector<Endpoint> fetches, std::vector<Endpoint> feeds,
                     LoopFramesCache* frames) {
  RunPlan plan;
  plan.fetches = std::move(fetches);
  plan.feeds = std::move(feeds);
  Search search;
  if (frames != nullptr) search.frames = frames->For(graph);
  search.visit_of.assign(static_cast<size_t>(graph.num_nodes()), -1);
  for (const Endpoint& e : plan.fetches) {
    if (e.second >= 0 && FeedIndex(plan.feeds, e) >= 0) continue;
    search.Visit(graph, e.first, plan.feeds);
  }

  // Steps in run order; inputs from visits to steps.
  std::vector<int32_t> step_of(search.nodes.size(), -1);
  for (size_t s = 0; s < search.order.size(); ++s) {
    step_of[static_cast<size_t>(search.order[s])] = static_cast<int32_t>(s);
  }
  const auto step_of_node = [&](int n) {
    return step_of[static_cast<size_t>(search.visit_of[static_cast<size_t>(n)])];
  };
  plan.steps.reserve(search.order.size());
  plan.inputs.reserve(search.found.size());
  for (const int32_t v : search.order) {
    const auto begin = search.found.begin() + search.Begin(v);
    const auto end = search.found.begin() + search.ends[static_cast<size_t>(v)];
    for (auto it = begin; it != end; ++it) {
      plan.inputs.push_back({it->fed() ? it->from : step_of_node(it->from), it->port});
    }
    PlanStep step;
    step.node = search.nodes[static_cast<size_t>(v)];
    step.inputs_end = static_cast<uint32_t>(plan.inputs.size());
    if (const OpDef* op = FindOp(PlannedNode(graph, search.frames, step.node).op); op != nullptr) {
      const auto known = std::find(plan.ops.begin(), plan.ops.end(), op);
      step.op = static_cast<uint16_t>(known - plan.ops.begin());
      if (known == plan.ops.end()) plan.ops.push_back(op);
      plan.has_control_flow |= op->flow != OpDef::Flow::kNone;
    }
    plan.steps.push_back(step);
  }
  for (const Endpoint& e : plan.fetches) {
    const int feed = e.second >= 0 ? FeedIndex(plan.feeds, e) : -1;
    plan.results.push_back({feed >= 0 ? ~feed : step_of_node(e.first), e.second});
  }
  search = Search();  // the graph-sized part goes before the check's
  CheckEveryOpRuns(graph, plan);
  return plan;
}

RunPlan& RunPlanCache::Get(const Graph& graph, const std::vector<Endpoint>& fetches,
                           const std::vector<Endpoint>& feeds, LoopFramesCache* frames) {
  const auto hit = std::find_if(plans_.begin(), plans_.end(), [&](const auto& plan) {
    return plan->fetches == fetches && plan->feeds == feeds;
  });
  if (hit != plans_.end()) {
    std::rotate(plans_.begin(), hit, hit + 1);
    return *plans_.front();
  }
  plans_.insert(plans_.begin(),
                std::make_unique<RunPlan>(BuildRunPlan(graph, fetches, feeds, frames)));
  const size_t budget = 2 * static_cast<size_t>(graph.num_nodes()) + kSpareSteps;
  size_t steps = 0;
  for (size_t i = 0; i < plans_.size(); ++i) {
    steps += plans_[i]->steps.size();
    if (i > 0 && (i >= kMaxPlans || steps > budget)) {
      plans_.resize(i);
      break;
    }
  }
  return *plans_.front();
}

}  // namespace eager::internal
