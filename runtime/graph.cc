#include "runtime/graph.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <functional>
#include <limits>

#include "runtime/internal/case_fold.h"
#include "runtime/op_signature.h"
#include "runtime/tensor_access.h"
#include "runtime/variable.h"

namespace eager {
namespace internal {
constinit thread_local Graph* current_graph = nullptr;
}  // namespace internal
using internal::current_graph;

namespace {

uint64_t NewGraphId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// Suggestions stop at this many edits: a name further from every node gets
// none. It bounds the work per candidate, which a hostile graph file (long
// names, many nodes) would otherwise make quadratic in the name length.
constexpr size_t kMaxSuggestionEdits = 16;

// Levenshtein distance of `a` and `b` when it is at most `limit`, else
// limit + 1. Only the diagonal band |i - j| <= limit is computed, and the
// loop ends as soon as a whole row exceeds the limit, so the work is
// O(min(|a|, |b|) * limit) at most, and O(limit^2) for unrelated names.
size_t BoundedEditDistance(std::string_view a, std::string_view b, size_t limit) {
  const size_t over = limit + 1;
  if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) > limit) return over;
  std::vector<size_t> row(b.size() + 1, over);
  for (size_t j = 0; j <= std::min(b.size(), limit); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    const size_t lo = i > limit ? i - limit : 1;
    const size_t hi = std::min(b.size(), i + limit);
    size_t diagonal = row[lo - 1];
    row[lo - 1] = lo == 1 && i <= limit ? i : over;  // cell (i, lo - 1)
    size_t best = row[lo - 1];
    for (size_t j = lo; j <= hi; ++j) {
      const size_t above = row[j];
      row[j] =
          std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1), over});
      best = std::min(best, row[j]);
      diagonal = above;
    }
    if (best > limit) return over;
  }
  return std::min(row[b.size()], over);
}

}  // namespace

namespace {

// The outputs of a node with no signature, guessed from the usual attribute
// names (an op type eager's table lacks, in a file without its OpDef).
void GuessOutputSpecs(Node& node) {
  node.output_specs.clear();
  const auto* known_shapes = std::get_if<std::vector<Shape>>(
      node.FindAttr("_output_shapes") ? node.FindAttr("_output_shapes") : nullptr);
  const auto shape_of = [&](size_t i) {
    if (known_shapes != nullptr && i < known_shapes->size()) return (*known_shapes)[i];
    return Shape::UnknownRank();
  };
  std::optional<DType> dtype;
  for (const char* name : {"dtype", "DstT", "output_type", "out_type", "T", "Tparams"}) {
    if (const AttrValue* a = node.FindAttr(name); a && std::holds_alternative<DType>(*a)) {
      dtype = std::get<DType>(*a);
      break;
    }
  }
  if (!dtype) return;
  for (const char* comparison :
       {"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual", "IsFinite", "IsNan",
        "IsInf", "IsVariableInitialized"}) {
    if (node.op == comparison) dtype = DType::kBool;
  }
  Shape shape = shape_of(0);
  if (shape.unknown_rank()) {
    const AttrValue* attr = node.FindAttr(node.op == "Const" ? "value" : "shape");
    if (const Shape* s = AttrAs<Shape>(attr)) shape = *s;
    if (const Tensor* value = AttrAs<Tensor>(attr)) shape = value->shape();
  }
  node.output_specs.push_back({shape, *dtype});
  // tf.cond's nodes have two outputs: Switch's (false, true) branches,
  // Merge's value and the index of the input it came from.
  if (node.op == "Switch" || node.op == "RefSwitch") {
    node.output_specs.push_back({known_shapes != nullptr ? shape_of(1) : shape, *dtype});
  } else if (node.op == "Merge" || node.op == "RefMerge") {
    node.output_specs.push_back({Shape{}, DType::kInt32});
  }
}

}  // namespace

void SetOutputSpecs(Node& node, const OpSignature* signature) {
  std::optional<std::vector<DType>> dtypes;
  if (signature != nullptr) dtypes = OutputDTypes(*signature, node.attrs);
  if (!dtypes) return GuessOutputSpecs(node);
  node.output_specs.clear();
  node.output_specs.reserve(dtypes->size());
  for (DType dtype : *dtypes) node.output_specs.push_back({Shape::UnknownRank(), dtype});
  if (const auto* known = std::get_if<std::vector<Shape>>(node.FindAttr("_output_shapes"))) {
    for (size_t i = 0; i < node.output_specs.size() && i < known->size(); ++i) {
      node.output_specs[i].shape = (*known)[i];
    }
    return;
  }
  if (node.output_specs.size() != 1) return;
  const AttrValue* attr = node.FindAttr(node.op == "Const" ? "value" : "shape");
  if (const Shape* shape = AttrAs<Shape>(attr)) node.output_specs[0].shape = *shape;
  if (const Tensor* value = AttrAs<Tensor>(attr)) node.output_specs[0].shape = value->shape();
}

void SetDefaultOutputSpecs(Node& node) { SetOutputSpecs(node, FindOpSignature(node.op)); }

NodeInput ParseNodeInput(std::string_view input) {
  NodeInput out;
  if (!input.empty() && input[0] == '^') {
    out.control = true;
    input.remove_prefix(1);
  }
  const size_t colon = input.rfind(':');
  if (colon != std::string_view::npos && !out.control) {
    std::string_view digits = input.substr(colon + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out.index);
    if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty() ||
        out.index < 0) {
      throw InvalidArgumentError(StrCat("malformed node input '", input,
                                        "': expected \"node\", \"node:<output index>\" or "
                                        "\"^node\""));
    }
    input = input.substr(0, colon);
  }
  if (input.empty()) throw InvalidArgumentError("malformed node input: the node name is empty");
  out.node = std::string(input);
  return out;
}

std::string NodeInputName(std::string_view node, int index) {
  return index == 0 ? std::string(node) : StrCat(node, ":", index);
}

const Node& Operation::node() const {
  EAGER_CHECK(graph_ != nullptr, "Operation::node: this Operation is none (eager mode)");
  return graph_->node(node_);
}

// ---- Graph ---------------------------------------------------------------------

Graph::Graph() : id_(NewGraphId()) {}

Graph::~Graph() {
  // Variables that outlive the graph keep their symbolic read and state but
  // must not unregister from a dead graph.
  for (const GraphVariable& v : variables_) v.variable->graph_ = nullptr;
}

Graph::AsDefault::AsDefault(Graph& graph) : previous_(current_graph) { current_graph = &graph; }

Graph::AsDefault::~AsDefault() { current_graph = previous_; }

std::string Graph::UniqueName(std::string_view base) {
  return names_.UniqueName(NameScope::Current() + std::string(base));
}

std::string Graph::UniqueObjectName(std::string_view base) {
  EAGER_CHECK(!base.empty(), "UniqueObjectName: a name must not be empty");
  auto it = object_name_uses_.find(base);
  if (it == object_name_uses_.end()) it = object_name_uses_.emplace(std::string(base), 0).first;
  const int n = it->second++;
  return n == 0 ? std::string(base) : StrCat(base, "_", n);
}

Graph::ControlDependencies::ControlDependencies(Graph& graph, const std::vector<Operation>& ops)
    : graph_(graph), previous_size_(graph.control_inputs_.size()) {
  for (const Operation& op : ops) {
    if (op.is_none()) continue;
    EAGER_CHECK(op.graph() == &graph, "ControlDependencies: operation '", op.name(),
                "' belongs to another graph");
    graph.control_inputs_.push_back("^" + op.name());
  }
}

Graph::ControlDependencies::~ControlDependencies() {
  graph_.control_inputs_.resize(previous_size_);
}

Graph::InitScope::InitScope(Graph& graph) : graph_(graph) { saved_.swap(graph.control_inputs_); }

Graph::InitScope::~InitScope() { graph_.control_inputs_.swap(saved_); }

int Graph::AddNode(Node node) {
  EAGER_CHECK(!node.name.empty(), "Graph::AddNode: a node of type '", node.op,
              "' has an empty name");
  EAGER_CHECK(FindNodeIndex(node.name) < 0, "Graph::AddNode: duplicate node name '", node.name,
              "' (op ", node.op, ")");
  if (node.output_specs.empty()) SetDefaultOutputSpecs(node);
  for (const std::string& control : control_inputs_) {
    if (std::find(node.inputs.begin(), node.inputs.end(), control) == node.inputs.end()) {
      node.inputs.push_back(control);
    }
  }
  const int index = num_nodes_;
  EAGER_CHECK(index < std::numeric_limits<int32_t>::max(), "Graph::AddNode: too many nodes");
  if (static_cast<size_t>(index) == node_chunks_.size() * kChunkSize) {
    node_chunks_.push_back(std::make_unique<Node[]>(kChunkSize));
  }
  MutableNode(index) = std::move(node);
  ++num_nodes_;
  IndexNode(index);
  // Indexed, the name counts as used in names_ (NodeNames); MarkUsed drops
  // the registry's copy of it when UniqueName made it, or makes one when
  // names_ was cleared since (TF's graph marks every node's name used).
  names_.MarkUsed(this->node(index).name);
  return index;
}

void Graph::IndexNode(int node_index) {
  if (static_cast<size_t>(num_nodes_) * 2 > index_.size()) {
    // Grow (doubling) and put every node back.
    index_.assign(std::max<size_t>(64, index_.size() * 2), -1);
    for (int i = 0; i < num_nodes_; ++i) {
      if (i != node_index) IndexNode(i);
    }
  }
  const size_t mask = index_.size() - 1;
  size_t slot = internal::HashIgnoringCase(node(node_index).name) & mask;
  while (index_[slot] >= 0) slot = (slot + 1) & mask;
  index_[slot] = node_index;
}

const Node* Graph::FindNode(std::string_view name) const {
  const int i = FindNodeIndex(name);
  return i < 0 ? nullptr : &node(i);
}

int Graph::FindNodeIndex(std::string_view name) const {
  if (index_.empty()) return -1;
  const size_t mask = index_.size() - 1;
  for (size_t slot = internal::HashIgnoringCase(name) & mask;; slot = (slot + 1) & mask) {
    const int32_t i = index_[slot];
    if (i < 0) return -1;
    if (node(i).name == name) return i;
  }
}

bool Graph::NodeNames::ContainsIgnoringCase(std::string_view name) const {
  const std::vector<int32_t>& index = graph_.index_;
  if (index.empty()) return false;
  const size_t mask = index.size() - 1;
  for (size_t slot = internal::HashIgnoringCase(name) & mask;; slot = (slot + 1) & mask) {
    const int32_t i = index[slot];
    if (i < 0) return false;
    if (internal::EqualsIgnoringCase(graph_.node(i).name, name)) return true;
  }
}

Tensor Graph::Output(int node_index, int index) const {
  EAGER_INTERNAL_CHECK(node_index >= 0 && node_index < num_nodes());
  const Node& n = node(node_index);
  // Grown on first use: an imported graph whose tensors are never asked
  // for pays nothing per node here.
  if (outputs_.size() <= static_cast<size_t>(node_index)) {
    outputs_.resize(static_cast<size_t>(node_index) + 1);
  }
  std::vector<Tensor>& outputs = outputs_[static_cast<size_t>(node_index)];
  const size_t count = n.output_specs.size();
  if (index < 0 || static_cast<size_t>(index) >= count) {
    throw OutOfRangeError(StrCat("node '", n.name, "' (", n.op, ") has ", count,
                                 " outputs; there is no output ", index));
  }
  if (outputs.size() != count) outputs.resize(count);
  Tensor& out = outputs[static_cast<size_t>(index)];
  if (!out.is_symbolic()) {
    auto symbolic = std::make_shared<internal::SymbolicOutput>(
        internal::SymbolicOutput{id_, node_index, index, StrCat(n.name, ":", index)});
    const OutputSpec& spec = n.output_specs[static_cast<size_t>(index)];
    out = Tensor(std::move(symbolic), spec.shape, spec.dtype, internal::NewTensorId());
  }
  return out;
}

Operation Graph::OperationOf(const Tensor& tensor) const {
  if (!tensor.is_symbolic()) {
    throw InvalidArgumentError(StrCat("expected a graph tensor, got an eager ", tensor.dtype(),
                                      " tensor of shape ", tensor.shape()));
  }
  if (tensor.symbolic()->graph_id != id_) {
    throw InvalidArgumentError(StrCat("tensor '", tensor.name(), "' belongs to another graph"));
  }
  return Operation(this, tensor.symbolic()->node);
}

std::string Graph::DidYouMean(std::string_view name, bool tensors) const {
  if (num_nodes_ == 0) return " The graph is empty.";
  // A tensor name is matched by its node's name; the suggestion keeps the
  // asked output index where the node has it.
  const NodeInput asked = tensors ? ParseNodeInput(name) : NodeInput{std::string(name), 0};
  // The three nearest, ordered by (distance, name); the third's distance
  // bounds the search for the rest.
  std::vector<std::pair<size_t, const Node*>> best;
  for (int k = 0; k < num_nodes_; ++k) {
    const Node* n = &node(k);
    if (tensors && n->output_specs.empty()) continue;  // no tensor to suggest
    const size_t limit = best.size() < 3 ? kMaxSuggestionEdits : best.back().first;
    const size_t d = BoundedEditDistance(asked.node, n->name, limit);
    if (d > limit) continue;
    const std::pair<size_t, const Node*> candidate{d, n};
    const auto before = [](const auto& x, const auto& y) {
      return x.first != y.first ? x.first < y.first : x.second->name < y.second->name;
    };
    if (best.size() == 3 && !before(candidate, best.back())) continue;
    best.insert(std::upper_bound(best.begin(), best.end(), candidate, before), candidate);
    if (best.size() > 3) best.pop_back();
  }
  if (best.empty()) return "";
  std::string out = " Did you mean ";
  for (size_t i = 0; i < best.size(); ++i) {
    if (i > 0) out += i + 1 == best.size() ? " or " : ", ";
    const Node& n = *best[i].second;
    if (!tensors) {
      out += StrCat("'", n.name, "'");
    } else {
      const bool has_index =
          asked.index >= 0 && static_cast<size_t>(asked.index) < n.output_specs.size();
      out += StrCat("'", n.name, ":", has_index ? asked.index : 0, "'");
    }
  }
  return out + "?";
}

Operation Graph::OperationByName(std::string_view name) const {
  const int i = FindNodeIndex(name);
  if (i < 0) {
    throw NotFoundError(StrCat("The name '", name, "' refers to an Operation not in the graph.",
                               DidYouMean(name, false)));
  }
  return Operation(this, i);
}

Tensor Graph::TensorByName(std::string_view name) const {
  const size_t colon = name.rfind(':');
  if (colon == std::string_view::npos) {
    throw InvalidArgumentError(StrCat(
        "The name '", name,
        "' looks like an (invalid) Operation name, not a Tensor. Tensor names must be of the "
        "form \"<op_name>:<output_index>\"."));
  }
  const NodeInput parsed = ParseNodeInput(name);
  const int i = FindNodeIndex(parsed.node);
  if (i < 0) {
    throw NotFoundError(
        StrCat("The name '", name, "' refers to a Tensor which does not exist. The operation, '",
               parsed.node, "', does not exist in the graph.", DidYouMean(name, true)));
  }
  const Node& n = node(i);
  if (parsed.index >= static_cast<int>(n.output_specs.size())) {
    throw NotFoundError(
        StrCat("The name '", name, "' refers to a Tensor which does not exist. The operation, '",
               parsed.node, "', exists but only has ", n.output_specs.size(), " outputs."));
  }
  return Output(i, parsed.index);
}

// ---- Collections -----------------------------------------------------------------

void Graph::AddToCollection(std::string_view key, std::string name) {
  auto it = collections_.find(key);
  if (it == collections_.end()) it = collections_.emplace(std::string(key), Collection{}).first;
  it->second.names.push_back(std::move(name));
}

void Graph::AddToCollection(std::string_view key, Variable* variable) {
  EAGER_CHECK(variable != nullptr, "Graph::AddToCollection('", key, "'): null variable");
  EAGER_CHECK(FindVariable(variable) != nullptr, "Graph::AddToCollection('", key, "'): variable '",
              variable->shared_name(), "' does not belong to this graph");
  auto it = collections_.find(key);
  if (it == collections_.end()) it = collections_.emplace(std::string(key), Collection{}).first;
  std::vector<Variable*>& list = it->second.variables;
  if (std::find(list.begin(), list.end(), variable) == list.end()) list.push_back(variable);
}

std::vector<std::string> Graph::NameCollection(std::string_view key) const {
  auto it = collections_.find(key);
  return it == collections_.end() ? std::vector<std::string>{} : it->second.names;
}

std::vector<Variable*> Graph::VariableCollection(std::string_view key) const {
  auto it = collections_.find(key);
  return it == collections_.end() ? std::vector<Variable*>{} : it->second.variables;
}

std::vector<std::string> Graph::CollectionKeys() const {
  std::vector<std::string> keys;
  for (const auto& [key, c] : collections_) {
    if (!c.names.empty() || !c.variables.empty()) keys.push_back(key);
  }
  return keys;
}

// ---- Variables --------------------------------------------------------------------

const GraphVariable* Graph::FindVariable(const Variable* variable) const {
  for (const GraphVariable& v : variables_) {
    if (v.variable == variable) return &v;
  }
  return nullptr;
}

bool Graph::IsResourceVariable(const Variable& variable) const {
  const GraphVariable* record = FindVariable(&variable);
  if (record == nullptr) return false;
  const Node* node = FindNode(record->variable_node);
  return node != nullptr && node->op == "VarHandleOp";
}

Graph::UseResourceVariables::UseResourceVariables(Graph& graph, bool use_resource)
    : graph_(graph), previous_(graph.resource_variables_) {
  graph.resource_variables_ = use_resource;
}

Graph::UseResourceVariables::~UseResourceVariables() { graph_.resource_variables_ = previous_; }

Variable* Graph::VariableForNode(std::string_view node_name) const {
  for (const GraphVariable& v : variables_) {
    if (v.variable_node == node_name) return v.variable;
  }
  return nullptr;
}

void Graph::RegisterVariable(const GraphVariable& record) {
  variables_.push_back(record);
  AddToCollection(kGlobalVariables, record.variable);
  if (record.trainable) AddToCollection(kTrainableVariables, record.variable);
}

void Graph::UnregisterVariable(const Variable* variable) {
  std::erase_if(variables_, [&](const GraphVariable& v) { return v.variable == variable; });
  for (auto& [key, c] : collections_) std::erase(c.variables, variable);
}

Variable& Graph::ImportVariable(const GraphVariable& record) {
  const Node* n = FindNode(record.variable_node);
  if (n == nullptr) {
    throw NotFoundError(StrCat("Graph::ImportVariable: no node '", record.variable_node,
                               "' in the graph.", DidYouMean(record.variable_node, false)));
  }
  // TF < 1.0 graphs hold the legacy "Variable" op, the same ref variable.
  // A resource variable's VarHandleOp has the same dtype and shape attributes.
  EAGER_CHECK(n->op == "VariableV2" || n->op == "Variable" || n->op == "VarHandleOp",
              "Graph::ImportVariable: node '", n->name, "' is a ", n->op,
              ", expected a VariableV2 (or legacy Variable) or a VarHandleOp");
  EAGER_CHECK(VariableForNode(n->name) == nullptr, "Graph::ImportVariable: node '", n->name,
              "' already has a Variable");
  const DType dtype = n->Attr<DType>("dtype");
  const Shape& shape = n->Attr<Shape>("shape");
  EAGER_CHECK(shape.IsFullyDefined(), "Graph::ImportVariable: variable '", n->name,
              "' has a partially known shape ", shape);
  GraphVariable full = record;
  owned_variables_.push_back(
      std::unique_ptr<Variable>(new Variable(Variable::GraphNodeTag{}, *this, full, dtype, shape)));
  return *owned_variables_.back();
}

Variable* Graph::StoredVariable(std::string_view name) const {
  const auto it = stored_variables_.find(name);
  return it == stored_variables_.end() ? nullptr : it->second;
}

Variable& Graph::StoreVariable(std::unique_ptr<Variable> variable) {
  EAGER_CHECK(variable != nullptr && FindVariable(variable.get()) != nullptr,
              "Graph::StoreVariable: not a variable of this graph");
  const std::string name(variable->shared_name());
  EAGER_CHECK(!stored_variables_.contains(name), "Graph::StoreVariable: '", name,
              "' is stored already");
  owned_variables_.push_back(std::move(variable));
  stored_variables_.emplace(name, owned_variables_.back().get());
  return *owned_variables_.back();
}

Graph::CaptureVariables::CaptureVariables(Graph& graph,
                                          std::map<const Variable*, const Variable*> read_instead)
    : graph_(graph), previous_(std::move(read_instead)) {
  graph_.read_instead_.swap(previous_);
  ++graph_.capturing_;
}

Graph::CaptureVariables::~CaptureVariables() {
  --graph_.capturing_;
  graph_.read_instead_.swap(previous_);
}

Variable* Graph::CapturedVariable(const Variable& source) const {
  auto it = captured_.find(&source);
  return it == captured_.end() ? nullptr : it->second;
}

Tensor Graph::Capture(const Variable& source) {
  const Variable* from = &source;
  if (auto it = read_instead_.find(&source); it != read_instead_.end()) {
    from = it->second;
    EAGER_CHECK(from->dtype() == source.dtype() && from->shape() == source.shape(),
                "Graph::CaptureVariables: '", source.shared_name(), "' (", source.dtype(), ", ",
                source.shape(), ") is read as '", from->shared_name(), "', which is ",
                from->dtype(), " of shape ", from->shape(), "; a substitute must match");
  }
  if (auto it = captured_.find(from); it != captured_.end()) return it->second->value();
  EAGER_CHECK(!from->in_graph(), "Graph::CaptureVariables: '", from->shared_name(),
              "' is a graph variable, not an eager one");
  const Tensor value = from->stored_value();  // FailedPreconditionError when uninitialized
  owned_variables_.push_back(std::unique_ptr<Variable>(
      new Variable(Variable::CaptureTag{}, *this, from->name(), from->trainable(), value)));
  Variable* mirror = owned_variables_.back().get();
  captured_.emplace(from, mirror);
  return mirror->value();
}

std::vector<Variable*> GlobalVariables() {
  Graph* g = Graph::Current();
  return g == nullptr ? std::vector<Variable*>{} : g->GlobalVariables();
}

std::vector<Variable*> TrainableVariables() {
  Graph* g = Graph::Current();
  return g == nullptr ? std::vector<Variable*>{} : g->TrainableVariables();
}

}  // namespace eager
