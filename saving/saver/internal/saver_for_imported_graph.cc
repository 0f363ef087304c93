#include "saving/saver/internal/saver_for_imported_graph.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtime/errors.h"
#include "runtime/variable.h"

namespace eager::internal {
namespace {

// The checkpoint key an Assign's value input reads: RestoreV2:i (maybe
// through Identity nodes) -> tensor_names[i]; nullopt when it is not that.
// A chain longer than the graph has nodes is a cycle (a crafted file spun
// here forever); the node reached then is on it.
std::optional<std::string> RestoredKey(const Graph& graph, const std::string& input) {
  NodeInput in = ParseNodeInput(input);
  const Node* n = graph.FindNode(in.node);
  for (int steps = 0; n != nullptr && n->op == "Identity" && !n->inputs.empty(); ++steps) {
    if (steps > graph.num_nodes()) {
      throw InvalidArgumentError(
          StrCat("the restore op's Identity nodes form a cycle through node '", n->name,
                 "' (reading the value of an Assign, ", input, "); a graph has no cycles"));
    }
    in = ParseNodeInput(n->inputs[0]);
    n = graph.FindNode(in.node);
  }
  if (n == nullptr || n->op != "RestoreV2" || n->inputs.size() < 2) return std::nullopt;
  const Node* names = graph.FindNode(ParseNodeInput(n->inputs[1]).node);
  if (names == nullptr || names->op != "Const") return std::nullopt;
  const Tensor* value = AttrAs<Tensor>(names->FindAttr("value"));
  if (value == nullptr) return std::nullopt;
  const Tensor& t = *value;
  if (t.dtype() != DType::kString || in.index >= t.num_elements()) return std::nullopt;
  return t.data<std::string>()[static_cast<size_t>(in.index)];
}

// The Variable of VariableV2 (or VarHandleOp) node `name`; one is made for a node that no
// collection listed (a graph exported without collections), as TF's
// restore op would assign the node anyway. nullptr when eager cannot hold
// it (another op, a dtype eager lacks, an unknown shape).
Variable* VariableOfNode(Graph& graph, const std::string& name) {
  if (Variable* v = graph.VariableForNode(name)) return v;
  const Node* n = graph.FindNode(name);
  if (n == nullptr || !IsVariableOp(n->op)) return nullptr;
  const Shape* shape = AttrAs<Shape>(n->FindAttr("shape"));
  if (AttrAs<DType>(n->FindAttr("dtype")) == nullptr || shape == nullptr ||
      !shape->IsFullyDefined() || n->output_specs.empty()) {
    return nullptr;
  }
  GraphVariable record;
  record.variable_node = name;
  record.trainable = false;
  return &graph.ImportVariable(record);
}

// The Assigns under the restore op, through NoOps (its control inputs): a
// depth-first search in input order, iterative (a crafted file's chain of a
// million NoOps overflowed the stack of a recursive one), a cycle an error.
void Walk(Graph& graph, const std::string& restore_op_name, std::map<std::string, Variable*>& out) {
  enum : char { kUnseen, kOnPath, kDone };
  std::vector<char> state(static_cast<size_t>(graph.num_nodes()), kUnseen);
  std::vector<std::pair<int, size_t>> stack;  // a NoOp, its next input
  const auto reach = [&](const std::string& name, const Node* from) {
    const int index = graph.FindNodeIndex(name);
    if (index < 0) return;
    if (static_cast<size_t>(index) >= state.size()) state.resize(static_cast<size_t>(index) + 1);
    char& s = state[static_cast<size_t>(index)];
    if (s == kDone) return;
    if (s == kOnPath) {
      throw InvalidArgumentError(StrCat(
          "the restore op '", restore_op_name, "' has a cycle through node '", name,
          "' (an input of '", from != nullptr ? from->name : name, "'); a graph has no cycles"));
    }
    const Node& n = graph.node(index);
    if (n.op == "NoOp") {
      s = kOnPath;
      stack.emplace_back(index, 0);
      return;
    }
    s = kDone;
    // A resource variable's restore assigns its handle (AssignVariableOp).
    if ((n.op == "Assign" || n.op == "AssignVariableOp") && n.inputs.size() >= 2) {
      Variable* v = VariableOfNode(graph, ParseNodeInput(n.inputs[0]).node);
      std::optional<std::string> key = RestoredKey(graph, n.inputs[1]);
      if (v != nullptr && key) out.emplace(*key, v);
    }
  };
  reach(restore_op_name, nullptr);
  while (!stack.empty()) {
    auto& [index, next] = stack.back();
    const Node& n = graph.node(index);
    if (next == n.inputs.size()) {
      state[static_cast<size_t>(index)] = kDone;
      stack.pop_back();
      continue;
    }
    const std::string input = ParseNodeInput(n.inputs[next++]).node;
    reach(input, &n);  // may grow the stack: `index` and `next` are not used after
  }
}

}  // namespace

bool IsRefVariableOp(std::string_view op) { return op == "VariableV2" || op == "Variable"; }

bool IsVariableOp(std::string_view op) { return IsRefVariableOp(op) || op == "VarHandleOp"; }

std::map<std::string, Variable*> VariablesRestoredBy(Graph& graph,
                                                     const std::string& restore_op_name) {
  Graph::AsDefault in(graph);
  std::map<std::string, Variable*> variables;
  Walk(graph, restore_op_name, variables);
  return variables;
}

MetaSaverDef ScopedSaverDef(const MetaSaverDef& def, const std::string& scope) {
  if (scope.empty()) return def;
  MetaSaverDef out = def;
  for (std::string* name :
       {&out.filename_tensor_name, &out.save_tensor_name, &out.restore_op_name}) {
    if (!name->empty()) *name = scope + "/" + *name;
  }
  return out;
}

std::unique_ptr<Saver> SaverForImportedGraph(const MetaGraph& meta, Graph& graph) {
  Graph::AsDefault in(graph);
  if (meta.saver_def && !meta.saver_def->restore_op_name.empty()) {
    if (!VariablesRestoredBy(graph, meta.saver_def->restore_op_name).empty()) {
      SaverOptions options;
      options.max_to_keep = meta.saver_def->max_to_keep;
      options.keep_checkpoint_every_n_hours = meta.saver_def->keep_checkpoint_every_n_hours;
      options.sharded = meta.saver_def->sharded;
      options.saver_def = meta.saver_def;
      return std::make_unique<Saver>(options);
    }
  }
  if (graph.GlobalVariables().empty()) return nullptr;
  return std::make_unique<Saver>(graph.GlobalVariables());
}

}  // namespace eager::internal
