#pragma once

// Graph: TensorFlow 1's graph mode, as plain node records.
//
//   eager::Graph graph;
//   {
//     eager::Graph::AsDefault in(graph);              // this thread builds `graph`
//     eager::Variable v1(1.0f, "v1"), v2(2.0f, "v2");  // VariableV2 nodes, uninitialized
//     eager::Tensor sum = v1 + v2;                    // node "add"; sum.name() == "add:0"
//   }
//
// While a Graph is the default on a thread (Graph::AsDefault), every op
// function and operator adds a node to it instead of running, and returns a
// symbolic Tensor naming the node's output ("add:0"); ops/session.h evaluates
// nodes with the same kernels eager uses. Outside any AsDefault scope nothing
// changes (eager).
//
// A Node is what a TensorFlow NodeDef holds, in std types only, so that
// saving/ converts a Graph to and from a MetaGraphDef without seeing ops/:
// the TF op type ("AddV2", "VariableV2"), the inputs as NodeDef writes them
// ("x" for output 0 of node x, "x:1", then control inputs "^y"), the device,
// and the attributes under TF's names with TF's values ("T", "dtype",
// "shape", "value" for Const, "transpose_a", "keep_dims", ...). Attributes
// that TF passes as input tensors (Reshape's shape, Sum's axes) are Const
// nodes feeding the node, as in TF. Each node also records its outputs'
// static specs: dtype and shape (partial shapes allowed: Shape::Partial).
//
// Names follow TF's Graph.unique_name: each Graph owns its NameRegistry
// ("add", "add_1"; scopes from NameScope prefix them), and DefaultNames()
// returns the default graph's registry while one is set. Every node's name
// counts as used in it (case-insensitively, as TF's): after importing nodes
// "A" and "a", UniqueName("a") is "a_1". The registry reads them from the
// Graph's node index rather than keeping copies.
//
// Variables created in a graph are VariableV2 nodes with TF1's companions
// (`v1/initial_value` Const, `v1/Assign`, `v1/read` Identity) and start
// UNinitialized; the value lives in the Variable object, which a Session's
// Assign nodes and a Saver's restore write. The graph keeps TF's collections:
// "variables" (GlobalVariables()), "trainable_variables", and any other key
// holding Variables or node/tensor names.
//
// Lifetime: node records and symbolic tensors' names never dangle (tensors
// keep their own copy of the name); an Operation handle and a Session refer
// to their Graph, which must outlive them. Variables unregister from their
// graph when destroyed; a graph that dies first forgets its variables.
// Building a graph is not thread-safe; one thread builds a graph at a time.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "runtime/attrs.h"
#include "runtime/dtype.h"
#include "runtime/names.h"
#include "runtime/output_spec.h"
#include "runtime/shape.h"
#include "runtime/tensor.h"

namespace eager {

class Graph;
class Variable;
class FunctionLibrary;

// One node of a graph: a NodeDef plus its outputs' static specs.
struct Node {
  std::string name = {};                      // "add", "v1/read"
  std::string op = {};                        // TF op type: "AddV2", "VariableV2"
  std::vector<std::string> inputs = {};       // "x", "x:1", then "^ctrl"
  std::string device = {};                    // "" (any), or "/device:CPU:0" as imported
  Attrs attrs = {};                           // TF attribute names -> values
  std::vector<OutputSpec> output_specs = {};  // one per output; shapes may be partial

  // The attribute `name`, or nullptr.
  const AttrValue* FindAttr(std::string_view name) const { return attrs.Find(name); }
  // The attribute `name` of type T; throws InvalidArgumentError naming the
  // node and the attribute when it is missing or of another type.
  template <typename T>
  const T& Attr(std::string_view name) const;
};
// A graph may hold millions (issue 27): three strings and three vectors.
static_assert(sizeof(Node) <= 3 * sizeof(std::string) + 3 * sizeof(std::vector<int>));

// An imported node's output specs (one place decides them, for every
// importer): the dtypes from its op's `signature` (runtime/op_signature.h:
// type attributes, "N", list(type) attributes), shaped by "_output_shapes",
// else a single output by a Const's "value" or a "shape" attribute
// (Placeholder, VariableV2), else of unknown rank. Without a signature, or
// when its attributes are missing, they are guessed from the usual
// attribute names: one output whose dtype is the first of "dtype", "DstT",
// "output_type", "out_type", "T", "Tparams" (bool for TF's comparison ops),
// two for Switch and Merge; none when none of those is present.
struct OpSignature;
void SetOutputSpecs(Node& node, const OpSignature* signature);
// SetOutputSpecs with the signature of node.op from eager's table.
void SetDefaultOutputSpecs(Node& node);

// A node input string taken apart: "x" -> {x, 0}, "x:1" -> {x, 1},
// "^x" -> {x, 0, control}. Throws InvalidArgumentError on a malformed one.
struct NodeInput {
  std::string node;
  int index = 0;
  bool control = false;
};
NodeInput ParseNodeInput(std::string_view input);
// The input string for output `index` of `node` ("x" or "x:1").
std::string NodeInputName(std::string_view node, int index);

// A handle to one node of a graph, as fetched and run by a Session (tf.Operation).
// A default-constructed Operation is "none": what graph-only builders return
// in eager mode, where their work is already done; a Session skips it.
class Operation {
 public:
  Operation() = default;
  Operation(const Graph* graph, int node) : graph_(graph), node_(node) {}

  bool is_none() const { return graph_ == nullptr; }
  const Graph* graph() const { return graph_; }
  int index() const { return node_; }
  // REQUIRES: !is_none().
  const Node& node() const;
  const std::string& name() const { return node().name; }

 private:
  const Graph* graph_ = nullptr;
  int node_ = -1;
};

// What TF's VariableDef records about a graph variable.
struct GraphVariable {
  Variable* variable = nullptr;
  std::string variable_node = {};  // "v1" (the VariableV2 node); the tensor is "v1:0"
  std::string initializer = {};    // "v1/Assign", or "" when it has no initializer
  std::string snapshot = {};       // "v1/read:0"
  std::string initial_value = {};  // "v1/initial_value:0", or ""
  bool trainable = true;
};

namespace internal {
// The graph Graph::AsDefault made current on this thread. constinit: the
// compiler then reads it directly instead of calling a TLS wrapper.
extern constinit thread_local Graph* current_graph;

// What a symbolic Tensor points at (see Tensor::is_symbolic).
struct SymbolicOutput {
  uint64_t graph_id = 0;  // Graph::id() of the owner
  int node = 0;           // index of the node in its graph
  int index = 0;          // output index
  std::string name;       // "add:0"
};
}  // namespace internal

class Graph {
 public:
  // TF's collection keys.
  static constexpr std::string_view kGlobalVariables = "variables";
  static constexpr std::string_view kTrainableVariables = "trainable_variables";
  static constexpr std::string_view kMovingAverageVariables = "moving_average_variables";
  // tf.GraphKeys.UPDATE_OPS: ops a training step runs beside its train op
  // (a BatchNormalization's moving-statistics Assigns).
  static constexpr std::string_view kUpdateOps = "update_ops";

  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // `with graph.as_default():` on this thread while the object lives. Scopes
  // nest; the innermost graph is the default.
  class AsDefault {
   public:
    explicit AsDefault(Graph& graph);
    ~AsDefault();
    AsDefault(const AsDefault&) = delete;
    AsDefault& operator=(const AsDefault&) = delete;

   private:
    Graph* previous_;
  };
  // This thread's default graph, or nullptr in eager mode (one thread-local
  // load, inline: every op asks).
  static Graph* Current() { return internal::current_graph; }

  // A process-unique id (never 0); symbolic tensors carry it.
  uint64_t id() const { return id_; }
  // This graph's names (DefaultNames() while it is the default). It reads
  // the graph's node names, so naming is part of building the graph: one
  // thread at a time.
  NameRegistry& names() { return names_; }
  // The current NameScope prefix + `base`, made unique in this graph
  // ("add", "add_1", "dense/MatMul").
  std::string UniqueName(std::string_view base);
  // Keras's layer names in this graph (backend.unique_object_name counts per
  // graph): "dense", then "dense_1"; a new graph starts again at "dense".
  // UniqueObjectName() (runtime/names.h) uses this while the graph is the
  // default.
  std::string UniqueObjectName(std::string_view base);

  // ---- Nodes ---------------------------------------------------------------

  // `with graph.control_dependencies(ops):` while the object lives: every
  // node added to `graph` meanwhile gets control inputs "^op" on each of
  // `ops` (none ones skipped) after its own inputs. Scopes nest; an inner one
  // adds to the outer ones. REQUIRES: the graph outlives the object.
  class ControlDependencies {
   public:
    ControlDependencies(Graph& graph, const std::vector<Operation>& ops);
    ~ControlDependencies();
    ControlDependencies(const ControlDependencies&) = delete;
    ControlDependencies& operator=(const ControlDependencies&) = delete;

   private:
    Graph& graph_;
    size_t previous_size_;
  };

  // The part of tf.init_scope() that concerns a graph: while the object
  // lives, no open ControlDependencies scope applies (nodes added get none);
  // scopes opened inside it apply as usual. TF builds every variable and its
  // initializer in one, so a variable created under control dependencies
  // (an ExponentialMovingAverage's shadow) can be initialized on its own.
  // REQUIRES: the graph outlives the object; scopes nest properly.
  class InitScope {
   public:
    explicit InitScope(Graph& graph);
    ~InitScope();
    InitScope(const InitScope&) = delete;
    InitScope& operator=(const InitScope&) = delete;

   private:
    Graph& graph_;
    std::vector<std::string> saved_;
  };

  // Adds `node` as is (its name is marked used), plus the control inputs of
  // any open ControlDependencies scope, and returns its index.
  // Inputs are not resolved here (an imported GraphDef may list a node before
  // its inputs); a Session resolves them when it runs. A node given without
  // output specs (an imported NodeDef) gets SetDefaultOutputSpecs's. Throws
  // InvalidArgumentError for an empty or duplicate name.
  int AddNode(Node node);
  int num_nodes() const { return num_nodes_; }
  // REQUIRES: 0 <= index < num_nodes().
  const Node& node(int index) const {
    return node_chunks_[static_cast<size_t>(index) >> kChunkBits]
                       [static_cast<size_t>(index) & (kChunkSize - 1)];
  }
  // The node called `name`, or nullptr / -1.
  const Node* FindNode(std::string_view name) const;
  int FindNodeIndex(std::string_view name) const;

  // The symbolic tensor for output `index` of node `node` ("name:index").
  // Throws OutOfRangeError when the node has no such output.
  Tensor Output(int node, int index = 0) const;
  // The operation that produced a symbolic tensor of this graph; throws
  // InvalidArgumentError for an eager tensor or another graph's tensor.
  Operation OperationOf(const Tensor& tensor) const;

  // tf.Graph.get_operation_by_name / get_tensor_by_name. An unknown name
  // throws NotFoundError listing the closest existing names ("did you mean
  // 'add_1:0'?"); a tensor name needs its ":index" (InvalidArgumentError
  // otherwise, as TF).
  Operation OperationByName(std::string_view name) const;
  Tensor TensorByName(std::string_view name) const;

  // ---- Collections ---------------------------------------------------------

  // Adds a node or tensor name ("train_op", "loss:0") under `key`.
  void AddToCollection(std::string_view key, std::string name);
  // Adds a Variable of this graph under `key` (once; later adds are no-ops).
  void AddToCollection(std::string_view key, Variable* variable);
  // The names under `key`, in insertion order (empty if none).
  std::vector<std::string> NameCollection(std::string_view key) const;
  // The Variables under `key`, in insertion order (empty if none).
  std::vector<Variable*> VariableCollection(std::string_view key) const;
  // Every key that holds names or Variables, sorted.
  std::vector<std::string> CollectionKeys() const;

  // ---- Variables -----------------------------------------------------------

  // The "variables" / "trainable_variables" collections.
  std::vector<Variable*> GlobalVariables() const { return VariableCollection(kGlobalVariables); }
  std::vector<Variable*> TrainableVariables() const {
    return VariableCollection(kTrainableVariables);
  }
  // The record of a variable of this graph, or nullptr.
  const GraphVariable* FindVariable(const Variable* variable) const;
  // Whether `variable` is a resource variable of this graph (its node is a
  // VarHandleOp: imported from a TF 2.x graph, or made under
  // UseResourceVariables); false for a VariableV2 or another graph's.
  bool IsResourceVariable(const Variable& variable) const;

  // `with tf.compat.v1.variable_scope(..., use_resource=True):` while the
  // object lives: Variables created in `graph` are resource variables, as
  // TF 2.x makes them: a VarHandleOp "v", its initializer "v/Assign" (an
  // AssignVariableOp of the initial value) and the snapshot
  // "v/Read/ReadVariableOp", instead of VariableV2, Assign and "v/read".
  // TF1's optimizers make the slots of a resource variable so
  // (slot_creator's use_resource). REQUIRES: the graph outlives the object;
  // scopes nest properly.
  class UseResourceVariables {
   public:
    explicit UseResourceVariables(Graph& graph, bool use_resource = true);
    ~UseResourceVariables();
    UseResourceVariables(const UseResourceVariables&) = delete;
    UseResourceVariables& operator=(const UseResourceVariables&) = delete;

   private:
    Graph& graph_;
    bool previous_;
  };
  bool creates_resource_variables() const { return resource_variables_; }
  // The Variable that owns VariableV2 node `node_name` ("v1"), or nullptr.
  Variable* VariableForNode(std::string_view node_name) const;

  // For importers (ImportMetaGraph): makes a Variable, owned by this graph,
  // for the existing VariableV2 node record.variable_node (its dtype and
  // shape attributes give the variable's), adds it to "variables" (and to
  // "trainable_variables" if record.trainable), uninitialized. Throws
  // NotFoundError when the node is missing, InvalidArgumentError when it is
  // not a VariableV2 (or a resource variable's VarHandleOp:
  // ops/resource_variable_ops.h) with dtype and fully defined shape
  // attributes or already has a Variable. record.variable is ignored.
  Variable& ImportVariable(const GraphVariable& record);

  // TF1's variable store (tf.compat.v1.get_variable, ops/variable_scope.h):
  // the variables it made in this graph, owned by the graph, by full name
  // ("foo/v"); nullptr when get_variable made none of that name.
  Variable* StoredVariable(std::string_view name) const;
  // Takes `variable` (a variable of this graph) into the store under its
  // shared name. REQUIRES: no stored variable has that name.
  Variable& StoreVariable(std::unique_ptr<Variable> variable);

  // ---- Tracing: capturing eager variables (tf.function's captures) ---------

  // While a CaptureVariables scope of this graph lives and the graph is the
  // default, reading a Variable that belongs to no graph (an eager model's
  // weight) yields the read tensor of this graph's mirror of it, not a Const
  // of its value: on the first read, a VariableV2 node named as the source
  // (its shared name, whatever the current NameScope), with TF1's companions
  // (initializer: zeros), in "variables" and, when the source is trainable,
  // "trainable_variables", holding the source's value as of that read (what
  // a Saver or SavedModelBuilder saves). Later reads reuse the mirror, in any
  // later scope too. Without a scope, an eager variable's read is its value
  // (a Const node), as before. Assigning an eager variable inside a scope
  // throws UnimplementedError naming it: the traced graph would not repeat it.
  //
  // `read_instead` maps a source to another eager variable whose mirror its
  // reads yield (an ExponentialMovingAverage's shadow for a weight, to trace
  // a model with its averaged weights).
  //
  // A read throws InvalidArgumentError when the mirror's name is taken in
  // this graph (two sources with one name, or a node of that name) or a
  // substitute's dtype or shape differs from its source's, and
  // FailedPreconditionError for an uninitialized source. REQUIRES: sources
  // outlive the graph's tracing (they are keyed by address); the graph
  // outlives the scope; scopes nest properly.
  class CaptureVariables {
   public:
    explicit CaptureVariables(Graph& graph,
                              std::map<const Variable*, const Variable*> read_instead = {});
    ~CaptureVariables();
    CaptureVariables(const CaptureVariables&) = delete;
    CaptureVariables& operator=(const CaptureVariables&) = delete;

   private:
    Graph& graph_;
    std::map<const Variable*, const Variable*> previous_;
  };
  // The mirror made for reads of `source` (after read_instead), or nullptr.
  Variable* CapturedVariable(const Variable& source) const;
  // Whether a CaptureVariables scope is open: the graph is a trace, which
  // must hold only ops with a TensorFlow graph form (no eager-only op).
  bool capturing() const { return capturing_ > 0; }

  // ---- Functions (runtime/function_library.h) ------------------------------

  // The functions this graph's call nodes (StatefulPartitionedCall, If,
  // While) run: a GraphDef's library, shared with the graphs of its bodies.
  void SetFunctionLibrary(std::shared_ptr<const FunctionLibrary> library) {
    functions_ = std::move(library);
  }
  // nullptr when the graph has none.
  const std::shared_ptr<const FunctionLibrary>& functions() const { return functions_; }

 private:
  friend class Variable;
  // Called by Variable's graph-mode constructor and destructor.
  void RegisterVariable(const GraphVariable& record);
  void UnregisterVariable(const Variable* variable);
  std::string DidYouMean(std::string_view name, bool tensors) const;
  // Variable::value() of an eager variable inside a CaptureVariables scope.
  Tensor Capture(const Variable& source);

  struct Collection {
    std::vector<std::string> names;
    std::vector<Variable*> variables;
  };

  // The node names, as names_ sees them: every node's name counts as used
  // without a copy in the registry (found through index_).
  class NodeNames final : public NameRegistry::ExternalNames {
   public:
    explicit NodeNames(const Graph& graph) : graph_(graph) {}
    bool ContainsIgnoringCase(std::string_view name) const override;

   private:
    const Graph& graph_;
  };

  uint64_t id_;
  NodeNames node_names_{*this};
  NameRegistry names_{&node_names_};
  std::map<std::string, int, std::less<>> object_name_uses_;  // Keras names per base
  // The nodes, in chunks of kChunkSize that never move (node records and
  // references to them stay valid as nodes are added), without a heap block
  // per node: a graph of millions of nodes pays for its records only.
  static constexpr int kChunkBits = 8;
  static constexpr size_t kChunkSize = size_t{1} << kChunkBits;
  std::vector<std::unique_ptr<Node[]>> node_chunks_;
  int num_nodes_ = 0;
  Node& MutableNode(int index) {
    return node_chunks_[static_cast<size_t>(index) >> kChunkBits]
                       [static_cast<size_t>(index) & (kChunkSize - 1)];
  }
  // Node names -> indices: an open-addressing table (linear probing) of
  // node indices, -1 for a free slot, at most half full; the names are the
  // nodes' own, so a node costs 8 to 16 bytes here, not a copy of its name.
  // Names hash with ASCII case folded (internal/case_fold.h): FindNode
  // compares exactly, NodeNames (TF's case-insensitive name counts) not.
  std::vector<int32_t> index_;
  void IndexNode(int node);
  // One symbolic output per node output, made on first use and then shared
  // (indexed by node; as long as the last node asked for).
  mutable std::vector<std::vector<Tensor>> outputs_;
  std::map<std::string, Collection, std::less<>> collections_;
  std::vector<GraphVariable> variables_;
  std::vector<std::unique_ptr<Variable>> owned_variables_;
  std::map<std::string, Variable*, std::less<>> stored_variables_;  // of owned_variables_
  std::vector<std::string> control_inputs_;  // "^op" of open ControlDependencies scopes
  int capturing_ = 0;                        // open CaptureVariables scopes
  bool resource_variables_ = false;          // an open UseResourceVariables scope
  std::map<const Variable*, const Variable*> read_instead_;  // of the innermost scope
  std::map<const Variable*, Variable*> captured_;            // source -> mirror (owned)
  std::shared_ptr<const FunctionLibrary> functions_;
};

// The default graph's GlobalVariables() / TrainableVariables(); empty in
// eager mode (TensorFlow 2 has no collections).
std::vector<Variable*> GlobalVariables();
std::vector<Variable*> TrainableVariables();

// ---------------------------------------------------------------------------
// Implementation details follow.

template <typename T>
const T& Node::Attr(std::string_view attr_name) const {
  const T* value = AttrAs<T>(FindAttr(attr_name));
  if (value == nullptr) {
    throw InvalidArgumentError(
        StrCat("node '", name, "' (", op, "): attribute '", attr_name,
               FindAttr(attr_name) == nullptr ? "' is missing" : "' has another type"));
  }
  return *value;
}

}  // namespace eager
