#include "autodiff/internal/keras_operations.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "autodiff/layer.h"

namespace eager::internal {
namespace {

using MaskOutput = Layer::KerasMaskOutput;

// A node of Keras's graph: a layer call or a mask op, its parents in
// argument order. `key` identifies the operation: the first call of its
// layer (a layer called twice is one operation), a mask op's own index.
struct Node {
  int key = 0;
  KerasOperation op;
  std::vector<int> parents;
};

// A symbolic mask: the node that makes it, and its rank.
struct Mask {
  int node = 0;
  int rank = -1;
};

class Builder {
 public:
  Builder(const std::vector<KerasCall>& calls, bool mask_operations) {
    nodes_.resize(calls.size());
    std::map<const Layer*, int> first_call;
    for (size_t c = 0; c < calls.size(); ++c) {
      const KerasCall& call = calls[c];
      Node& node = nodes_[c];
      node.key = first_call.emplace(call.layer, static_cast<int>(c)).first->second;
      node.op.layer = call.layer;
      for (const KerasTensorRef& in : call.inputs) node.parents.push_back(in.call);
      if (!mask_operations || call.inputs.empty()) continue;
      const Layer::KerasMaskRule rule = call.layer->KerasMasking();
      const std::optional<Mask> first = MaskOf(call.inputs[0]);
      if (rule.call_takes_mask && first) nodes_[c].parents.push_back(first->node);
      const std::optional<Mask> made = OutputMask(call, rule.output);
      if (made) masks_[c] = *made;
    }
  }

  std::vector<Node>& nodes() { return nodes_; }

 private:
  std::optional<Mask> MaskOf(const KerasTensorRef& t) const {
    if (t.output != 0) return std::nullopt;  // masks ride on a call's first output
    const auto it = masks_.find(t.call);
    if (it == masks_.end()) return std::nullopt;
    return it->second;
  }

  int Op(std::string_view kind, std::vector<int> parents) {
    Node node;
    node.op.mask_op = kind;
    node.parents = std::move(parents);
    node.key = static_cast<int>(nodes_.size());
    nodes_.push_back(std::move(node));
    return static_cast<int>(nodes_.size()) - 1;
  }

  std::optional<Mask> OutputMask(const KerasCall& call, MaskOutput output) {
    const int rank0 = call.input_ranks.empty() ? -1 : call.input_ranks[0];
    std::vector<std::optional<Mask>> in;
    for (const KerasTensorRef& t : call.inputs) in.push_back(MaskOf(t));
    switch (output) {
      case MaskOutput::kNone:
        return std::nullopt;
      case MaskOutput::kInput:
        return in[0];
      case MaskOutput::kNotEqual:
        return Mask{Op("NotEqual", {call.inputs[0].call}), rank0};
      case MaskOutput::kNotEqualAny: {
        const int not_equal = Op("NotEqual", {call.inputs[0].call});
        return Mask{Op("Any", {not_equal}), rank0 < 0 ? -1 : rank0 - 1};
      }
      case MaskOutput::kLogicalOr: {
        if (std::any_of(in.begin(), in.end(), [](const auto& m) { return !m; })) {
          return std::nullopt;
        }
        Mask acc = *in[0];
        for (size_t i = 1; i < in.size(); ++i) acc.node = Op("LogicalOr", {acc.node, in[i]->node});
        return acc;
      }
      case MaskOutput::kConcatenate: {
        if (std::none_of(in.begin(), in.end(), [](const auto& m) { return m.has_value(); })) {
          return std::nullopt;
        }
        std::vector<int> parts;
        for (size_t i = 0; i < in.size(); ++i) {
          const int producer = call.inputs[i].call;
          const int rank = i < call.input_ranks.size() ? call.input_ranks[i] : -1;
          if (!in[i]) {
            parts.push_back(Op("OnesLike", {producer}));
          } else if (in[i]->rank >= 0 && rank >= 0 && in[i]->rank < rank) {
            const int expanded = Op("ExpandDims", {in[i]->node});
            const int zeros = Op("ZerosLike", {producer});
            parts.push_back(Op("LogicalOr", {expanded, zeros}));
          } else {
            parts.push_back(in[i]->node);
          }
        }
        const int joined = Op("Concatenate", parts);
        return Mask{Op("Any", {joined}), rank0 < 0 ? -1 : rank0 - 1};
      }
    }
    return std::nullopt;
  }

  std::vector<Node> nodes_;
  std::map<int, Mask> masks_;  // by call: the mask of its output 0
};

}  // namespace

std::vector<KerasOperation> KerasOperationOrder(const std::vector<KerasCall>& calls,
                                                const std::vector<KerasTensorRef>& outputs,
                                                const std::vector<int>& model_inputs,
                                                bool mask_operations) {
  Builder builder(calls, mask_operations);
  const std::vector<Node>& nodes = builder.nodes();
  const auto is_model_input = [&](int n) {
    return std::find(model_inputs.begin(), model_inputs.end(), n) != model_inputs.end();
  };
  // Keras's _build_map: a depth-first walk from the outputs, stopping at
  // the model's inputs, iterative (a model may be deep). `order` gets the
  // nodes parents first; `first_seen` the order operations are first met.
  std::vector<int> order;
  std::map<int, int> first_seen;
  std::vector<char> finished(nodes.size(), 0);
  for (const KerasTensorRef& out : outputs) {
    std::vector<std::pair<int, size_t>> stack;  // node, next parent to visit
    if (finished[out.call] != 0) continue;
    first_seen.emplace(nodes[out.call].key, static_cast<int>(first_seen.size()));
    stack.emplace_back(out.call, 0);
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      const bool walk_parents = !is_model_input(n);
      if (walk_parents && next < nodes[n].parents.size()) {
        const int parent = nodes[n].parents[next++];
        if (finished[parent] != 0) continue;
        first_seen.emplace(nodes[parent].key, static_cast<int>(first_seen.size()));
        stack.emplace_back(parent, 0);
        continue;
      }
      finished[n] = 1;
      order.push_back(n);
      stack.pop_back();
    }
  }
  // Depths from the outputs (0) up; an operation's depth is its deepest
  // node's.
  std::vector<int> node_depth(nodes.size(), -1);
  std::map<int, int> op_depth;
  std::vector<int> ops_seen;  // a node per operation, in insertion order (Keras's dict)
  std::vector<char> in_graph(nodes.size(), 0);
  for (int n : order) in_graph[n] = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int n = *it;
    int depth = std::max(node_depth[n], 0);
    const auto [at, fresh] = op_depth.emplace(nodes[n].key, depth);
    if (fresh) ops_seen.push_back(n);
    depth = std::max(depth, at->second);
    at->second = depth;
    node_depth[n] = depth;
    if (is_model_input(n)) continue;
    for (int parent : nodes[n].parents) {
      if (in_graph[parent] == 0) continue;
      node_depth[parent] = std::max(depth + 1, node_depth[parent]);
    }
  }
  // Inputs no output depends on: InputLayers at depth 0, first.
  for (int n : model_inputs) {
    if (op_depth.emplace(nodes[n].key, 0).second) {
      first_seen[nodes[n].key] = -1;
      ops_seen.push_back(n);
    }
  }
  std::stable_sort(ops_seen.begin(), ops_seen.end(), [&](int x, int y) {
    const int dx = op_depth[nodes[x].key], dy = op_depth[nodes[y].key];
    if (dx != dy) return dx > dy;
    return first_seen[nodes[x].key] < first_seen[nodes[y].key];
  });
  std::vector<KerasOperation> ops;
  ops.reserve(ops_seen.size());
  for (int n : ops_seen) ops.push_back(nodes[n].op);
  return ops;
}

}  // namespace eager::internal
