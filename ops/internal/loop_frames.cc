#include "ops/internal/loop_frames.h"

#include <algorithm>
#include <map>
#include <utility>

#include "runtime/errors.h"

namespace eager::internal {
namespace {

bool IsEnter(std::string_view op) { return op == "Enter" || op == "RefEnter"; }
bool IsExit(std::string_view op) { return op == "Exit" || op == "RefExit"; }
bool IsNextIteration(std::string_view op) {
  return op == "NextIteration" || op == "RefNextIteration";
}
bool IsMerge(std::string_view op) { return op == "Merge" || op == "RefMerge"; }
bool IsSwitch(std::string_view op) { return op == "Switch" || op == "RefSwitch"; }

struct Edge {
  int node = 0;
  int port = 0;
  bool control = false;
};

std::string Named(const Graph& graph, int n) {
  const Node& node = graph.node(n);
  return StrCat("node '", node.name, "' (", node.op, ")");
}

std::string FrameName(const std::vector<LoopFrame>& frames, int f) {
  return f < 0 ? std::string("the graph's top level") : StrCat("frame '", frames[f].name, "'");
}

// An Enter takes a handle when it is a RefEnter or its T is none eager has
// (DT_RESOURCE: a variable handle, a TensorArray).
bool TakesHandle(const Node& node) { return node.op == "RefEnter" || !node.attrs.Has("T"); }

}  // namespace

bool IsLoopNodeType(std::string_view op) {
  return IsEnter(op) || IsExit(op) || IsNextIteration(op) || op == "LoopCond";
}

const LoopFrame* LoopFrames::FrameAt(int exit) const {
  for (const LoopFrame& f : frames_) {
    if (f.parent < 0 && !f.exits.empty() && f.exits.front() == exit) return &f;
  }
  return nullptr;
}

std::unique_ptr<LoopFrames> LoopFrames::Analyze(const Graph& graph) {
  const int n = graph.num_nodes();
  bool any = false;
  for (int i = 0; i < n && !any; ++i) any = IsLoopNodeType(graph.node(i).op);
  if (!any) return nullptr;

  // Inputs by node index; a missing input node is left to BuildRunPlan.
  std::vector<std::vector<Edge>> inputs(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    for (const std::string& in : graph.node(i).inputs) {
      const NodeInput parsed = ParseNodeInput(in);
      const int m = graph.FindNodeIndex(parsed.node);
      if (m >= 0) inputs[static_cast<size_t>(i)].push_back({m, parsed.index, parsed.control});
    }
  }
  // The one back edge of a loop: NextIteration -> Merge.
  const auto back_edge = [&](int consumer, const Edge& e) {
    return IsMerge(graph.node(consumer).op) && IsNextIteration(graph.node(e.node).op);
  };
  // Topological order without the back edges (Kahn's).
  std::vector<int> pending(static_cast<size_t>(n), 0);
  std::vector<std::vector<int>> consumers(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    for (const Edge& e : inputs[static_cast<size_t>(i)]) {
      if (back_edge(i, e)) continue;
      ++pending[static_cast<size_t>(i)];
      consumers[static_cast<size_t>(e.node)].push_back(i);
    }
  }
  std::vector<int> order;
  order.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (pending[static_cast<size_t>(i)] == 0) order.push_back(i);
  }
  for (size_t k = 0; k < order.size(); ++k) {
    for (int c : consumers[static_cast<size_t>(order[k])]) {
      if (--pending[static_cast<size_t>(c)] == 0) order.push_back(c);
    }
  }
  if (order.size() != static_cast<size_t>(n)) {
    int at = 0;
    while (pending[static_cast<size_t>(at)] == 0) ++at;
    throw InvalidArgumentError(StrCat("Session::Run: the graph has a cycle through ",
                                      Named(graph, at),
                                      " that passes through no NextIteration (a while loop's "
                                      "only back edge)"));
  }
  consumers = {};

  auto result = std::make_unique<LoopFrames>();
  std::vector<LoopFrame>& frames = result->frames_;
  std::map<std::string, int, std::less<>> frame_by_name;
  std::vector<int> frame_of(static_cast<size_t>(n), -1);
  for (int i : order) {
    const Node& node = graph.node(i);
    int f = -1, witness = -1;
    for (const Edge& e : inputs[static_cast<size_t>(i)]) {
      if (back_edge(i, e)) continue;
      const int g = frame_of[static_cast<size_t>(e.node)];
      if (witness < 0) {
        f = g;
        witness = e.node;
      } else if (g != f) {
        throw InvalidArgumentError(StrCat(
            Named(graph, i), " has inputs from different while loop frames: '",
            graph.node(witness).name, "' in ", FrameName(frames, f), " and '",
            graph.node(e.node).name, "' in ", FrameName(frames, g),
            " (a value enters a loop only through an Enter, and leaves it through an Exit)"));
      }
    }
    if (IsEnter(node.op)) {
      const auto* name = AttrAs<std::string>(node.FindAttr("frame_name"));
      if (name == nullptr || name->empty()) {
        throw InvalidArgumentError(StrCat(Named(graph, i), " has no frame_name attribute"));
      }
      auto [it, added] = frame_by_name.try_emplace(*name, static_cast<int>(frames.size()));
      if (added) {
        frames.push_back({.name = *name, .parent = f});
      } else if (frames[static_cast<size_t>(it->second)].parent != f) {
        throw InvalidArgumentError(
            StrCat(Named(graph, i), " enters frame '", *name, "' from ", FrameName(frames, f),
                   ", but the frame's other Enters enter it from ",
                   FrameName(frames, frames[static_cast<size_t>(it->second)].parent)));
      }
      frames[static_cast<size_t>(it->second)].enters.push_back(i);
      frame_of[static_cast<size_t>(i)] = it->second;
      continue;
    }
    const bool exit = IsExit(node.op);
    if (f < 0 && (exit || IsNextIteration(node.op) || node.op == "LoopCond")) {
      throw InvalidArgumentError(
          StrCat(Named(graph, i), " is outside any while loop frame: no Enter leads to it"));
    }
    if (exit) {
      frames[static_cast<size_t>(f)].exits.push_back(i);
      frame_of[static_cast<size_t>(i)] = frames[static_cast<size_t>(f)].parent;
      continue;
    }
    frame_of[static_cast<size_t>(i)] = f;
    if (node.op == "LoopCond") {
      LoopFrame& frame = frames[static_cast<size_t>(f)];
      if (frame.loop_cond >= 0) {
        throw InvalidArgumentError(StrCat(Named(graph, i), " is a second LoopCond of frame '",
                                          frame.name, "' (the first is '",
                                          graph.node(frame.loop_cond).name, "')"));
      }
      frame.loop_cond = i;
    }
  }

  // NextIteration -> Merge: each NextIteration feeds one Merge of its frame.
  std::vector<int> merge_of(static_cast<size_t>(n), -1);
  for (int i = 0; i < n; ++i) {
    if (!IsMerge(graph.node(i).op)) continue;
    for (const Edge& e : inputs[static_cast<size_t>(i)]) {
      if (e.control || !back_edge(i, e)) continue;
      if (merge_of[static_cast<size_t>(e.node)] >= 0) {
        throw InvalidArgumentError(StrCat(Named(graph, e.node), " feeds two Merge nodes, '",
                                          graph.node(merge_of[static_cast<size_t>(e.node)]).name,
                                          "' and '", graph.node(i).name, "'"));
      }
      merge_of[static_cast<size_t>(e.node)] = i;
    }
  }
  for (int i = 0; i < n; ++i) {
    if (!IsNextIteration(graph.node(i).op)) continue;
    const int m = merge_of[static_cast<size_t>(i)];
    if (m < 0) {
      throw InvalidArgumentError(
          StrCat(Named(graph, i),
                 " feeds no Merge: a loop variable's NextIteration must feed "
                 "the Merge that starts its next iteration"));
    }
    const int f = frame_of[static_cast<size_t>(i)];
    if (frame_of[static_cast<size_t>(m)] != f) {
      throw InvalidArgumentError(StrCat(Named(graph, i), " in ", FrameName(frames, f),
                                        " feeds Merge '", graph.node(m).name, "' in ",
                                        FrameName(frames, frame_of[static_cast<size_t>(m)])));
    }
    frames[static_cast<size_t>(f)].merges.push_back(m);
    frames[static_cast<size_t>(f)].nexts.push_back(i);
  }

  // Per frame: one LoopCond; each Exit reads a Switch(one of its Merges, LoopCond).
  for (LoopFrame& frame : frames) {
    if (frame.loop_cond < 0) {
      throw InvalidArgumentError(StrCat("while loop frame '", frame.name, "' (entered by '",
                                        graph.node(frame.enters.front()).name,
                                        "') has no LoopCond node"));
    }
    std::stable_sort(frame.enters.begin(), frame.enters.end(), [&](int a, int b) {
      return TakesHandle(graph.node(a)) && !TakesHandle(graph.node(b));
    });
    std::sort(frame.exits.begin(), frame.exits.end());
    for (int x : frame.exits) {
      const std::vector<Edge>& in = inputs[static_cast<size_t>(x)];
      int var = -1;
      if (!in.empty() && !in[0].control && in[0].port == 0 && IsSwitch(graph.node(in[0].node).op)) {
        const std::vector<Edge>& sw = inputs[static_cast<size_t>(in[0].node)];
        if (sw.size() >= 2 && sw[1].node == frame.loop_cond) {
          const auto it = std::find(frame.merges.begin(), frame.merges.end(), sw[0].node);
          if (it != frame.merges.end() && sw[0].port == 0) {
            var = static_cast<int>(it - frame.merges.begin());
          }
        }
      }
      if (var < 0) {
        throw InvalidArgumentError(StrCat(Named(graph, x), " of frame '", frame.name,
                                          "' must read output 0 of a Switch of one of the "
                                          "loop's Merge nodes on its LoopCond '",
                                          graph.node(frame.loop_cond).name, "'"));
      }
      frame.exit_merge.push_back(var);
    }
  }

  // Members of the outermost frames, and the plan's replacement records.
  result->slot_.assign(static_cast<size_t>(n), -1);
  std::vector<Node>& replacements = result->replacements_;
  replacements.push_back({.op = std::string(kInFrameStepType)});
  for (int i = 0; i < n; ++i) {
    int f = frame_of[static_cast<size_t>(i)];
    if (f < 0) continue;
    while (frames[static_cast<size_t>(f)].parent >= 0) f = frames[static_cast<size_t>(f)].parent;
    frames[static_cast<size_t>(f)].members.push_back(i);
    result->slot_[static_cast<size_t>(i)] = 0;
  }
  for (const LoopFrame& frame : frames) {
    if (frame.parent >= 0 || frame.exits.empty()) continue;
    const Node& first = graph.node(frame.exits.front());
    Node loop{.name = first.name, .op = std::string(kWhileLoopStepType)};
    std::vector<std::string> controls;
    for (int e : frame.enters) {
      for (const std::string& in : graph.node(e).inputs) {
        (in.starts_with('^') ? controls : loop.inputs).push_back(in);
      }
    }
    loop.inputs.insert(loop.inputs.end(), controls.begin(), controls.end());
    result->slot_[static_cast<size_t>(frame.exits.front())] =
        static_cast<int32_t>(replacements.size());
    replacements.push_back(std::move(loop));
    for (size_t k = 1; k < frame.exits.size(); ++k) {
      const Node& exit = graph.node(frame.exits[k]);
      result->slot_[static_cast<size_t>(frame.exits[k])] =
          static_cast<int32_t>(replacements.size());
      replacements.push_back({.name = exit.name,
                              .op = "Identity",
                              .inputs = {NodeInputName(first.name, static_cast<int>(k))}});
    }
  }
  return result;
}

FrameBody BuildFrameBody(const Graph& graph, const LoopFrame& frame) {
  FrameBody body;
  body.graph = std::make_unique<Graph>();
  body.graph->SetFunctionLibrary(graph.functions());
  body.num_enters = frame.enters.size();
  // The loop's own Switches, by node: the index of their Merge.
  std::map<int, size_t> loop_switch;
  std::map<int, size_t> arg_of;  // Enter or Merge node -> _Arg index
  for (size_t k = 0; k < frame.enters.size(); ++k) arg_of[frame.enters[k]] = k;
  for (size_t v = 0; v < frame.merges.size(); ++v) arg_of[frame.merges[v]] = body.num_enters + v;
  const std::vector<int>& nexts = frame.nexts;
  for (int m : frame.members) {
    const Node& node = graph.node(m);
    if (!IsSwitch(node.op) || node.inputs.size() < 2) continue;
    const NodeInput data = ParseNodeInput(node.inputs[0]);
    const NodeInput pred = ParseNodeInput(node.inputs[1]);
    if (pred.node != graph.node(frame.loop_cond).name) continue;
    const auto it = std::find_if(frame.merges.begin(), frame.merges.end(),
                                 [&](int merge) { return graph.node(merge).name == data.node; });
    if (it == frame.merges.end()) {
      throw InvalidArgumentError(StrCat(Named(graph, m), " switches on LoopCond '",
                                        graph.node(frame.loop_cond).name,
                                        "' a value that is not one of the loop's Merge nodes"));
    }
    loop_switch[m] = static_cast<size_t>(it - frame.merges.begin());
  }
  // An input of a frame node, in the body graph: a loop Switch's true
  // branch is its Merge's value (the variable's argument).
  const auto rename = [&](const Node& consumer, const std::string& input) -> std::string {
    const NodeInput in = ParseNodeInput(input);
    const int m = graph.FindNodeIndex(in.node);
    const auto sw = loop_switch.find(m);
    if (sw != loop_switch.end()) {
      const std::string& merge = graph.node(frame.merges[sw->second]).name;
      if (in.control) return "^" + merge;
      if (in.index != 1) {
        throw InvalidArgumentError(StrCat("node '", consumer.name, "' (", consumer.op, ") reads '",
                                          input,
                                          "', the exit branch of a loop Switch, inside its frame"));
      }
      return merge;
    }
    if (!in.control && in.index != 0 && arg_of.contains(m) && IsMerge(graph.node(m).op)) {
      throw UnimplementedError(StrCat("node '", consumer.name, "' (", consumer.op, ") reads '",
                                      input,
                                      "', a loop Merge's value_index, which eager does not give"));
    }
    return in.control ? input : NodeInputName(in.node, in.index);
  };
  // A tensor to fetch: "name:port", also for port 0.
  const auto fetch = [&](const Node& consumer, const std::string& input) {
    const NodeInput in = ParseNodeInput(rename(consumer, input));
    return StrCat(in.node, ":", in.index);
  };
  for (int m : frame.members) {
    const Node& node = graph.node(m);
    if (loop_switch.contains(m) || std::find(nexts.begin(), nexts.end(), m) != nexts.end()) {
      continue;
    }
    if (const auto arg = arg_of.find(m); arg != arg_of.end()) {
      Node a{.name = node.name, .op = "_Arg"};
      a.attrs.Set("index", static_cast<int64_t>(arg->second));
      if (const AttrValue* t = node.FindAttr("T")) a.attrs.Set("T", *t);
      if (!node.output_specs.empty()) a.output_specs = {node.output_specs[0]};
      body.graph->AddNode(std::move(a));
      continue;
    }
    Node copy = node;
    if (m == frame.loop_cond) copy.op = "Identity";
    for (std::string& in : copy.inputs) in = rename(node, in);
    body.graph->AddNode(std::move(copy));
  }
  const Node& loop_cond = graph.node(frame.loop_cond);
  if (loop_cond.inputs.empty() || loop_cond.inputs[0].starts_with('^')) {
    throw InvalidArgumentError(StrCat(Named(graph, frame.loop_cond), " has no input"));
  }
  body.cond = fetch(loop_cond, loop_cond.inputs[0]);
  for (size_t v = 0; v < frame.merges.size(); ++v) {
    const Node& merge = graph.node(frame.merges[v]);
    // The variable's Enter: the Merge's input that is not its NextIteration.
    size_t initial = body.num_enters;
    for (const std::string& in : merge.inputs) {
      if (in.starts_with('^')) continue;
      const int m = graph.FindNodeIndex(ParseNodeInput(in).node);
      const auto k = std::find(frame.enters.begin(), frame.enters.end(), m);
      if (k != frame.enters.end()) initial = static_cast<size_t>(k - frame.enters.begin());
    }
    if (initial == body.num_enters) {
      throw InvalidArgumentError(StrCat(Named(graph, frame.merges[v]), " of frame '", frame.name,
                                        "' has no Enter of the frame among its inputs"));
    }
    body.initial_value.push_back(initial);
    const Node& next = graph.node(frame.nexts[v]);
    bool has_data = false;
    for (const std::string& in : next.inputs) {
      if (in.starts_with('^')) {
        body.next_ops.push_back(rename(next, in).substr(1));
      } else if (!has_data) {
        body.next.push_back(fetch(next, in));
        has_data = true;
      }
    }
    if (!has_data)
      throw InvalidArgumentError(StrCat(Named(graph, frame.nexts[v]), " has no input"));
  }
  return body;
}

}  // namespace eager::internal
