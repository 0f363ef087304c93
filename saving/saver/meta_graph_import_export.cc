#include "saving/saver/meta_graph_import_export.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <type_traits>
#include <utility>

#include "runtime/errors.h"
#include "runtime/op_signature.h"
#include "runtime/variable.h"
#include "saving/saver/internal/function_library_reader.h"
#include "saving/saver/internal/meta_graph_scope.h"
#include "saving/saver/internal/saver_for_imported_graph.h"
#include "saving/saver/internal/tf_op_defs.h"
#include "saving/saver/saver.h"

namespace eager {
namespace {

// TF 1.14's GraphDef version: the first TF with AddV2, which graphs built
// by eager use.
constexpr int kProducer = 38;

// ---- Graph -> MetaGraph -------------------------------------------------

MetaShape ToMeta(const Shape& shape) {
  if (shape.unknown_rank()) return {{}, true};
  return {shape.ToVector(), false};
}

MetaAttrValue ToMeta(const AttrValue& attr) {
  return VisitAttr(
      [](const auto& v) -> MetaAttrValue {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, DType>) {
          return MetaType{TfDataType(v)};
        } else if constexpr (std::is_same_v<V, Shape>) {
          return ToMeta(v);
        } else if constexpr (std::is_same_v<V, Tensor>) {
          return MetaTensor{TfDataType(v.dtype()), v.shape().ToVector(), v};
        } else if constexpr (std::is_same_v<V, std::vector<int64_t>>) {
          MetaAttrList list;
          list.i = v;
          return list;
        } else if constexpr (std::is_same_v<V, std::vector<std::string>>) {
          MetaAttrList list;
          list.s = v;
          return list;
        } else if constexpr (std::is_same_v<V, std::vector<DType>>) {
          MetaAttrList list;
          for (DType d : v) list.type.push_back(TfDataType(d));
          return list;
        } else if constexpr (std::is_same_v<V, std::vector<Shape>>) {
          MetaAttrList list;
          for (const Shape& shape : v) list.shape.push_back(ToMeta(shape));
          return list;
        } else if constexpr (std::is_same_v<V, double>) {
          return static_cast<float>(v);  // AttrValue.f is a float
        } else {
          return v;  // bool, int64_t, std::string
        }
      },
      attr);
}

// ---- MetaGraph -> Graph -------------------------------------------------

std::optional<Shape> ToShape(const MetaShape& shape) {
  if (shape.unknown_rank) return Shape::UnknownRank();
  if (shape.dims.size() > static_cast<size_t>(Shape::kMaxRank)) return std::nullopt;
  for (int64_t d : shape.dims) {
    if (d < Shape::kUnknownDim) return std::nullopt;
  }
  return Shape::Partial(shape.dims);
}

// A list attribute as an AttrValue (list(type), list(string), list(shape),
// list(int)), or nullopt for the kinds eager does not hold.
std::optional<AttrValue> FromMetaList(const MetaAttrList& v) {
  if (!v.type.empty()) {
    std::vector<DType> types;
    for (int t : v.type) {
      auto d = DTypeFromTfDataType(t);
      if (!d) return std::nullopt;
      types.push_back(*d);
    }
    return AttrValue(types);
  }
  if (!v.s.empty()) return AttrValue(v.s);
  if (!v.shape.empty()) {
    std::vector<Shape> shapes;
    for (const MetaShape& m : v.shape) {
      auto shape = ToShape(m);
      if (!shape) return std::nullopt;
      shapes.push_back(*shape);
    }
    return AttrValue(shapes);
  }
  // A list of functions (Case's branches) as their names, as a call's "f".
  if (!v.func.empty()) return AttrValue(v.func);
  if (!v.f.empty() || !v.b.empty() || !v.tensor.empty()) return std::nullopt;
  return AttrValue(v.i);  // also the empty list
}

// The attribute as an AttrValue, or nullopt when eager cannot hold it (a dtype
// eager lacks, an unknown-rank shape, a list of floats or tensors): such a
// node still imports, and fails only if a Session runs it.
std::optional<AttrValue> FromMeta(const MetaAttrValue& value) {
  return std::visit(
      [](const auto& v) -> std::optional<AttrValue> {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, float>) {
          return AttrValue(static_cast<double>(v));
        } else if constexpr (std::is_same_v<V, std::string> || std::is_same_v<V, int64_t> ||
                             std::is_same_v<V, bool>) {
          return AttrValue(v);
        } else if constexpr (std::is_same_v<V, MetaType>) {
          if (auto d = DTypeFromTfDataType(v.tf_dtype)) return AttrValue(*d);
          return std::nullopt;
        } else if constexpr (std::is_same_v<V, MetaShape>) {
          if (auto s = ToShape(v)) return AttrValue(*s);
          return std::nullopt;
        } else if constexpr (std::is_same_v<V, MetaTensor>) {
          if (v.value) return AttrValue(*v.value);
          return std::nullopt;
        } else if constexpr (std::is_same_v<V, MetaListBox>) {
          return FromMetaList(*v);
        } else if constexpr (std::is_same_v<V, MetaFunc>) {
          return AttrValue(v.name);  // a call's "f": the function's name
        } else {
          return std::nullopt;  // placeholders, functions, unset
        }
      },
      value);
}

// The file's OpDefs by op type, each converted to a signature once (a graph
// of 2M nodes has a handful of op types).
class FileOps {
 public:
  explicit FileOps(const MetaGraph& meta) {
    for (const MetaOpDef& op : meta.stripped_op_list) ops_.emplace(op.name, &op);
  }
  const OpSignature* Find(const std::string& type) {
    auto it = ops_.find(type);
    if (it == ops_.end()) return nullptr;
    auto [sig, fresh] = signatures_.try_emplace(type);
    if (fresh) sig->second = internal::SignatureOf(*it->second);
    return &sig->second;
  }

 private:
  std::map<std::string, const MetaOpDef*, std::less<>> ops_;
  std::map<std::string, OpSignature, std::less<>> signatures_;
};

// A MetaGraphNode as a Node; moved from when `m` is an rvalue (its
// attributes freed once converted).
template <typename M>
Node ToNode(M&& m, FileOps& file_ops) {
  Node node{.name = std::forward<M>(m).name,
            .op = std::forward<M>(m).op,
            .inputs = std::forward<M>(m).inputs,
            .device = std::forward<M>(m).device};
  node.attrs.Reserve(m.attrs.size());  // no slack: a graph may hold millions
  for (const auto& [name, value] : m.attrs) {
    // MetaAttrs are unique by name: no search per attribute (quadratic).
    if (auto attr = FromMeta(value)) node.attrs.AddUnique(name, std::move(*attr));
  }
  if constexpr (!std::is_const_v<std::remove_reference_t<M>> && std::is_rvalue_reference_v<M&&>) {
    m.attrs.clear();
  }
  // The outputs from the op's OpDef: the file's, else eager's table.
  if (const OpSignature* signature = file_ops.Find(node.op)) {
    SetOutputSpecs(node, signature);
  } else {
    SetDefaultOutputSpecs(node);
  }
  return node;
}

}  // namespace

namespace internal {
// For the function library reader (internal/function_library_reader.h).
Node GraphNodeFromMeta(MetaGraphNode&& node) {
  FileOps eager_ops{MetaGraph{}};  // no file op list: eager's table
  return ToNode(std::move(node), eager_ops);
}
}  // namespace internal

MetaGraph GraphToMetaGraph(const Graph& graph) {
  MetaGraph meta;
  meta.producer = kProducer;
  // The TF release whose GraphDef version (kProducer) and OpDefs
  // (saving/saver/internal/tf_op_defs.cc) the file follows; the git version says
  // who wrote it.
  meta.tensorflow_version = "1.14.0";
  meta.tensorflow_git_version = "eager";
  for (int i = 0; i < graph.num_nodes(); ++i) {
    const Node& n = graph.node(i);
    MetaGraphNode node{n.name, n.op, n.inputs, n.device, {}};
    const OpSignature* sig = FindOpSignature(n.op);
    for (const auto& [name, value] : n.attrs) {
      if (name == "_output_shapes") continue;  // written below
      // A function attribute ("f", "body") is held as the function's name.
      const OpAttrSignature* attr = sig == nullptr ? nullptr : sig->FindAttr(name);
      const std::string* function = std::get_if<std::string>(&value);
      if (attr != nullptr && attr->type == "func" && function != nullptr) {
        node.attrs.emplace(name, MetaFunc{*function});
        continue;
      }
      const auto* functions = std::get_if<std::vector<std::string>>(&value);
      if (attr != nullptr && attr->type == "list(func)" && functions != nullptr) {
        MetaAttrList list;
        list.func = *functions;
        node.attrs.emplace(name, list);
        continue;
      }
      node.attrs.emplace(name, ToMeta(value));
    }
    if (!n.output_specs.empty()) {
      MetaAttrList shapes;
      for (const OutputSpec& s : n.output_specs) shapes.shape.push_back(ToMeta(s.shape));
      // TF's importer wants one shape per output of the op's TF signature;
      // where eager computes fewer (SparseSoftmaxCrossEntropyWithLogits has
      // no backprop output in eager), the rest are written as unknown.
      if (const OpSignature* signature = FindOpSignature(n.op)) {
        const std::optional<std::vector<DType>> types = OutputDTypes(*signature, n.attrs);
        if (types && shapes.shape.size() < types->size()) {
          shapes.shape.resize(types->size(), MetaShape{{}, /*unknown_rank=*/true});
        }
      }
      node.attrs.emplace("_output_shapes", shapes);
    }
    meta.nodes.push_back(std::move(node));
  }
  meta.stripped_op_list = internal::StrippedOpList(meta.nodes);
  for (const std::string& key : graph.CollectionKeys()) {
    const std::vector<Variable*> variables = graph.VariableCollection(key);
    if (!variables.empty()) {
      std::vector<MetaVariableDef> defs;
      for (const Variable* v : variables) {
        const GraphVariable* record = graph.FindVariable(v);
        if (record == nullptr) continue;
        defs.push_back({record->variable_node + ":0", record->initializer, record->snapshot,
                        record->initial_value, false, record->trainable});
      }
      meta.collections.emplace(key, VariableDefCollection(defs));
    } else {
      MetaCollection names;
      names.kind = MetaCollection::Kind::kNodeList;
      names.node_list = graph.NameCollection(key);
      meta.collections.emplace(key, std::move(names));
    }
  }
  return meta;
}

namespace {

void CheckNewName(const MetaGraphNode& m, const Graph& graph) {
  EAGER_CHECK(graph.FindNode(m.name) == nullptr, "ImportMetaGraph: the graph already has a node '",
              m.name, "' (import into a fresh Graph)");
}

// ImportIntoGraph's nodes, copied from a const meta graph.
void ImportNodes(const MetaGraph& meta, Graph& graph) {
  FileOps file_ops(meta);
  for (const MetaGraphNode& m : meta.nodes) {
    CheckNewName(m, graph);
    graph.AddNode(ToNode(m, file_ops));
  }
}

// ImportIntoGraphMovingNodes's: each node moved out of `meta` and its record
// dropped at once (the deque frees its blocks from the front), so that a
// large graph never exists twice.
void ImportNodesMoving(MetaGraph& meta, Graph& graph) {
  FileOps file_ops(meta);
  while (!meta.nodes.empty()) {
    MetaGraphNode& m = meta.nodes.front();
    CheckNewName(m, graph);
    graph.AddNode(ToNode(std::move(m), file_ops));
    meta.nodes.pop_front();
  }
}

// Nodes `first` on of `graph` are the meta graph's.
void ImportVariablesAndCollections(const MetaGraph& meta, int first, Graph& graph);

}  // namespace

void ImportIntoGraph(const MetaGraphFile& file, size_t index, Graph& graph,
                     const std::function<void(MetaGraphNode&)>& edit) {
  const MetaGraph& meta = file.graph(index);
  const int first = graph.num_nodes();
  FileOps file_ops(meta);
  file.ForEachNode(index, [&](MetaGraphNode&& m) {
    if (edit) edit(m);
    CheckNewName(m, graph);
    graph.AddNode(ToNode(std::move(m), file_ops));
  });
  ImportVariablesAndCollections(meta, first, graph);
}

void ImportIntoGraphMovingNodes(MetaGraph& meta, Graph& graph) {
  const int first = graph.num_nodes();
  ImportNodesMoving(meta, graph);
  ImportVariablesAndCollections(meta, first, graph);
}

void ImportIntoGraph(const MetaGraph& meta, Graph& graph) {
  const int first = graph.num_nodes();
  ImportNodes(meta, graph);
  ImportVariablesAndCollections(meta, first, graph);
}

namespace {

void ImportVariablesAndCollections(const MetaGraph& meta, int first, Graph& graph) {
  std::set<std::string> trainable;
  for (const MetaVariableDef& v : VariableDefsOf(meta, "trainable_variables")) {
    trainable.insert(v.variable_name);
  }
  for (const MetaVariableDef& v : VariableDefsOf(meta, "variables")) {
    // A resource variable (is_resource) is its VarHandleOp node's.
    const std::string node = v.variable_name.substr(0, v.variable_name.rfind(':'));
    const Node* n = graph.FindNode(node);
    if (n == nullptr || !internal::IsVariableOp(n->op) || graph.VariableForNode(node) != nullptr) {
      continue;
    }
    const Shape* shape = AttrAs<Shape>(n->FindAttr("shape"));
    if (shape == nullptr || !shape->IsFullyDefined() ||
        AttrAs<DType>(n->FindAttr("dtype")) == nullptr) {
      continue;  // a dtype eager lacks, or an unknown shape
    }
    GraphVariable record;
    record.variable_node = node;
    record.initializer = v.initializer_name;
    record.snapshot = v.snapshot_name;
    record.initial_value = v.initial_value_name;
    record.trainable = v.trainable || trainable.count(v.variable_name) != 0;
    graph.ImportVariable(record);
  }
  // A bare GraphDef has no collections: every VariableV2 node it has is a
  // variable then (non-trainable: nothing says otherwise).
  if (meta.collections.count("variables") == 0) {
    for (int i = first; i < graph.num_nodes(); ++i) {
      const Node* n = &graph.node(i);
      if (!internal::IsRefVariableOp(n->op) || graph.VariableForNode(n->name) != nullptr) continue;
      const Shape* shape = AttrAs<Shape>(n->FindAttr("shape"));
      if (shape == nullptr || !shape->IsFullyDefined() ||
          AttrAs<DType>(n->FindAttr("dtype")) == nullptr) {
        continue;
      }
      GraphVariable record;
      record.variable_node = n->name;
      if (graph.FindNode(n->name + "/Assign") != nullptr) record.initializer = n->name + "/Assign";
      if (graph.FindNode(n->name + "/read") != nullptr) record.snapshot = n->name + "/read:0";
      record.trainable = false;
      graph.ImportVariable(record);
    }
  }
  for (const auto& [key, c] : meta.collections) {
    if (c.kind != MetaCollection::Kind::kNodeList) continue;
    for (const std::string& name : c.node_list) graph.AddToCollection(key, name);
  }
}

}  // namespace

std::unique_ptr<Saver> ImportMetaGraph(const std::string& path) {
  return ImportMetaGraph(path, ImportMetaGraphOptions{});
}

std::unique_ptr<Saver> ImportMetaGraph(const std::string& path,
                                       const ImportMetaGraphOptions& options) {
  Graph* graph = Graph::Current();
  if (graph == nullptr) {
    throw FailedPreconditionError(
        StrCat("ImportMetaGraph(\"", path,
               "\"): no default graph. Importing a meta graph needs graph mode: "
               "eager::Graph graph; eager::Graph::AsDefault in(graph); ..."));
  }
  const std::string scope =
      options.import_scope.empty() ? "" : graph->UniqueName(options.import_scope);
  MetaGraphFile file(path, MetaGraphFile::Kind::kMetaGraphDef);
  MetaGraph& meta = file.graph(0);
  meta = internal::ScopedMetaGraph(std::move(meta), scope, options.clear_devices);
  // The functions its call nodes run (a tf.function called in a TF 2.x
  // graph, control flow v2's branches): read before any node goes in.
  std::shared_ptr<FunctionLibrary> functions = internal::ReadMetaGraphFunctions(path);
  if (functions != nullptr && graph->functions() != nullptr) {
    throw UnimplementedError(StrCat("ImportMetaGraph(\"", path,
                                    "\"): the graph has a function library already; merging two "
                                    "is not implemented"));
  }
  ImportIntoGraph(file, 0, *graph, [&](MetaGraphNode& node) {
    internal::ScopeNode(node, scope, options.clear_devices);
  });
  if (functions != nullptr) graph->SetFunctionLibrary(std::move(functions));
  std::unique_ptr<Saver> saver = internal::SaverForImportedGraph(meta, *graph);
  if (saver == nullptr) {
    // TF's words (import_meta_graph returns None and logs them), with the file.
    const std::string why = StrCat("ImportMetaGraph(\"", path,
                                   "\"): Saver not created because there are no variables in "
                                   "the graph to restore");
    if (options.require_saver) throw NotFoundError(why);
    std::fprintf(stderr, "INFO: %s\n", why.c_str());
  }
  return saver;
}

}  // namespace eager
