#pragma once

// MetaGraph: TensorFlow's MetaGraphDef (a `.meta` file, FORMAT.md 6) as plain
// C++ values, read from and written to TF's binary protobuf.
//
//   eager::MetaGraph meta = eager::ReadMetaGraph("model.ckpt.meta");
//   for (const eager::MetaGraphNode& node : meta.nodes) ...      // the GraphDef
//   meta.saver_def->restore_op_name;                              // "save/restore_all"
//   eager::VariableDefsOf(meta, "trainable_variables");           // the collections
//
// A large file is read node by node with MetaGraphFile: each NodeDef is
// converted and handed over as it is parsed, never kept as a list.
//
//   eager::MetaGraphFile file("export/saved_model.pb", eager::MetaGraphFile::Kind::kSavedModel);
//   file.graph(0).tags;                                           // all but the nodes
//   file.ForEachNode(0, [](eager::MetaGraphNode&& node) { ... });  // in file order
//
// The GraphDef's nodes keep TF's op types and attribute values as stored
// (constants decoded to Tensors when eager has their dtype), so that a graph
// can be rebuilt from them; nothing is checked against any op registry here:
// an op eager lacks reads fine. A SavedModel's signatures and asset files
// are kept; parts eager does not interpret (function library, the
// SavedObjectGraph) are not.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "runtime/tensor.h"

namespace eager {

namespace internal {
class RandomAccessFile;
}  // namespace internal

// A TensorShapeProto: dims of -1 are unknown.
struct MetaShape {
  std::vector<int64_t> dims{};
  bool unknown_rank = false;
  friend bool operator==(const MetaShape&, const MetaShape&) = default;
};

// A value on the heap, or none, copied deeply: what keeps an attribute
// value small (a graph of 2M nodes holds millions of them; a Tensor or a
// list record inline made each some 220 bytes). Reads as std::optional:
// `if (box)`, `*box`, `box->`, `box.has_value()`, assignment from a T.
template <typename T>
class MetaBox {
 public:
  MetaBox() = default;
  MetaBox(T value) : value_(std::make_unique<T>(std::move(value))) {}  // NOLINT: as optional
  MetaBox(const MetaBox& other) : value_(other ? std::make_unique<T>(*other) : nullptr) {}
  MetaBox(MetaBox&&) noexcept = default;
  MetaBox& operator=(const MetaBox& other) {
    if (this != &other) value_ = other ? std::make_unique<T>(*other) : nullptr;
    return *this;
  }
  MetaBox& operator=(MetaBox&&) noexcept = default;
  ~MetaBox() = default;

  bool has_value() const { return value_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  // REQUIRES: has_value().
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return value_.get(); }
  const T* operator->() const { return value_.get(); }

 private:
  std::unique_ptr<T> value_;
};

// A TensorProto. `value` is empty when eager has no such dtype or the
// shape has unknown dims.
struct MetaTensor {
  int tf_dtype = 0;
  std::vector<int64_t> dims{};
  MetaBox<Tensor> value{};
};

// A DataType attribute value (TF's enum number: DT_FLOAT = 1, ...).
struct MetaType {
  int tf_dtype = 0;
  friend bool operator==(const MetaType&, const MetaType&) = default;
};

// AttrValue.list: TF fills one of these.
struct MetaAttrList {
  std::vector<std::string> s{};
  std::vector<int64_t> i{};
  std::vector<float> f{};
  std::vector<bool> b{};
  std::vector<int> type{};
  std::vector<MetaShape> shape{};
  std::vector<MetaTensor> tensor{};
  std::vector<std::string> func{};  // function names
};

// A placeholder ("$T") in a function body, or a function's name.
struct MetaPlaceholder {
  std::string name{};
};
struct MetaFunc {
  std::string name{};
};

// One AttrValue: bytes (s), int, float, bool, type, shape, tensor, list
// (boxed: `*std::get<MetaListBox>(value)`), placeholder or function.
// monostate for an attr with no value set.
using MetaListBox = MetaBox<MetaAttrList>;
using MetaAttrValue = std::variant<std::monostate, std::string, int64_t, float, bool, MetaType,
                                   MetaShape, MetaTensor, MetaListBox, MetaPlaceholder, MetaFunc>;

// A node's attributes by name, sorted as TF writes them: a std::map's
// interface (find, at, contains, emplace, iteration in name order) on one
// sorted vector, without a tree node per attribute.
class MetaAttrs {
 public:
  using value_type = std::pair<std::string, MetaAttrValue>;
  using iterator = std::vector<value_type>::iterator;
  using const_iterator = std::vector<value_type>::const_iterator;

  MetaAttrs() = default;
  MetaAttrs(std::initializer_list<value_type> items) {
    for (const value_type& item : items) emplace(item.first, item.second);
  }

  const_iterator find(std::string_view name) const {
    auto it = LowerBound(name);
    return it != items_.end() && it->first == name ? it : items_.end();
  }
  iterator find(std::string_view name) {
    auto it = LowerBound(name);
    return it != items_.end() && it->first == name ? it : items_.end();
  }
  bool contains(std::string_view name) const { return find(name) != end(); }
  size_t count(std::string_view name) const { return contains(name) ? 1 : 0; }
  // Throws std::out_of_range for a missing name, as std::map::at.
  const MetaAttrValue& at(std::string_view name) const {
    auto it = find(name);
    if (it == items_.end()) throw std::out_of_range("MetaAttrs::at: no such attribute");
    return it->second;
  }
  MetaAttrValue& at(std::string_view name) {
    auto it = find(name);
    if (it == items_.end()) throw std::out_of_range("MetaAttrs::at: no such attribute");
    return it->second;
  }
  // Inserts `name` unless present; the attribute and whether it was new.
  template <typename V>
  std::pair<iterator, bool> emplace(std::string_view name, V&& value) {
    auto it = LowerBound(name);
    if (it != items_.end() && it->first == name) return {it, false};
    return {items_.emplace(it, std::string(name), MetaAttrValue(std::forward<V>(value))), true};
  }
  // Replaces the attributes with `items`, in any order, sorted once (n log n;
  // emplacing each in place is quadratic for a protobuf map's order). Of
  // items with one name the first is kept.
  void Assign(std::vector<value_type> items) {
    std::stable_sort(items.begin(), items.end(),
                     [](const value_type& a, const value_type& b) { return a.first < b.first; });
    items.erase(
        std::unique(items.begin(), items.end(),
                    [](const value_type& a, const value_type& b) { return a.first == b.first; }),
        items.end());
    items_ = std::move(items);
  }
  MetaAttrValue& operator[](std::string_view name) {
    return emplace(name, MetaAttrValue{}).first->second;
  }
  size_t erase(std::string_view name) {
    auto it = find(name);
    if (it == items_.end()) return 0;
    items_.erase(it);
    return 1;
  }

  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  void clear() { items_ = {}; }

 private:
  const_iterator LowerBound(std::string_view name) const {
    return std::lower_bound(
        items_.begin(), items_.end(), name,
        [](const value_type& item, std::string_view n) { return item.first < n; });
  }
  iterator LowerBound(std::string_view name) {
    return std::lower_bound(
        items_.begin(), items_.end(), name,
        [](const value_type& item, std::string_view n) { return item.first < n; });
  }
  std::vector<value_type> items_;
};

struct MetaGraphNode {
  std::string name{};
  std::string op{};                   // TF's op type: "VariableV2", "MatMul"
  std::vector<std::string> inputs{};  // "x", "x:1", "^control"
  std::string device{};
  MetaAttrs attrs{};
};

// A graph's nodes, in file order. A deque: an importer that moves nodes out
// front first (ImportIntoGraphMovingNodes) frees each block of records as
// it goes, so a large graph does not exist twice.
using MetaGraphNodes = std::deque<MetaGraphNode>;

struct MetaSaverDef {
  std::string filename_tensor_name{};  // "save/Const:0"
  std::string save_tensor_name{};      // "save/control_dependency:0"
  std::string restore_op_name{};       // "save/restore_all"
  int max_to_keep = 0;
  bool sharded = false;
  float keep_checkpoint_every_n_hours = 0;
  int version = 0;  // 0 LEGACY, 1 V1, 2 V2
};

// CollectionDef: exactly one list is filled (by `kind`).
struct MetaCollection {
  enum class Kind { kNone, kNodeList, kBytesList, kInt64List, kFloatList };
  Kind kind = Kind::kNone;
  std::vector<std::string> node_list{};
  std::vector<std::string> bytes_list{};  // serialized protos, e.g. VariableDefs
  std::vector<int64_t> int64_list{};
  std::vector<float> float_list{};
};

// VariableDef, the element of the "variables" and "trainable_variables"
// collections.
struct MetaVariableDef {
  std::string variable_name{};       // "v1:0"
  std::string initializer_name{};    // "v1/Assign"
  std::string snapshot_name{};       // "v1/read:0"
  std::string initial_value_name{};  // "Const:0"
  bool is_resource = false;
  bool trainable = false;
};

// An OpDef of the stripped op list (what the graph's ops take and make).
struct MetaArgDef {
  std::string name{};
  int type = 0;               // a fixed DataType, or 0 with type_attr set
  std::string type_attr{};    // "T"
  std::string number_attr{};  // "N": a list of that many
  std::string type_list_attr{};
  bool is_ref = false;
};
struct MetaAttrDef {
  std::string name{};
  std::string type{};  // "type", "shape", "tensor", "list(type)", "int", "bool", "string", ...
  std::optional<MetaAttrValue> default_value{};
  bool has_minimum = false;
  int64_t minimum = 0;
  std::optional<MetaAttrValue> allowed_values{};
};
struct MetaOpDef {
  std::string name{};
  std::vector<MetaArgDef> inputs{};
  std::vector<MetaArgDef> outputs{};
  std::vector<MetaAttrDef> attrs{};
  bool is_stateful = false;
  bool is_commutative = false;
  bool is_aggregate = false;
  bool allows_uninitialized_input = false;
};

// TensorInfo: a graph tensor named "x:0" with its dtype (TF's enum number)
// and shape. `name` is empty for a sparse or composite tensor, which eager
// does not interpret.
struct MetaTensorInfo {
  std::string name{};
  int tf_dtype = 0;
  MetaShape shape{.dims = {}, .unknown_rank = true};
};

// SignatureDef: a named function of the graph, its inputs and outputs keyed
// by the names callers use ("images" -> "Placeholder:0").
struct MetaSignature {
  std::map<std::string, MetaTensorInfo> inputs{};
  std::map<std::string, MetaTensorInfo> outputs{};
  std::string method_name{};  // "tensorflow/serving/predict"
};

// AssetFileDef: the graph tensor that holds an asset's path, and the file's
// name under assets/.
struct MetaAssetFile {
  MetaTensorInfo tensor_info{};
  std::string filename{};
};

struct MetaGraph {
  // MetaInfoDef.
  std::string meta_graph_version{};
  std::string tensorflow_version{};
  std::string tensorflow_git_version{};
  std::vector<std::string> tags{};
  bool stripped_default_attrs = false;
  std::vector<MetaOpDef> stripped_op_list{};
  // GraphDef.
  MetaGraphNodes nodes{};
  int producer = 0;
  int min_consumer = 0;
  std::optional<MetaSaverDef> saver_def{};
  std::map<std::string, MetaCollection> collections{};
  // SignatureDefs by key ("serving_default") and AssetFileDefs (SavedModel).
  std::map<std::string, MetaSignature> signatures{};
  std::vector<MetaAssetFile> asset_files{};
  // Whether a SavedObjectGraph is present (a TF2 SavedModel), and its
  // bytes as read (saved_function.h reads its functions).
  bool has_object_graph = false;
  std::string object_graph{};
};

// A graph file read for streaming: kept open, each meta graph's fields other
// than its nodes parsed and checked on opening; the nodes are read from the
// file and converted only by ForEachNode, one at a time. What a graph of
// millions of nodes costs in memory is then one node (and a 64 KB window).
// The file is read again by each ForEachNode and OpTypes: one changed since
// it was opened throws DataLossError where it no longer parses. Calls on
// one MetaGraphFile must not overlap (they share its fill budget).
class MetaGraphFile {
 public:
  // What the file holds: a MetaGraphDef (a `.meta`), a SavedModel
  // (saved_model.pb: one meta graph per tag set), or a bare GraphDef (its
  // one graph has nodes and versions only).
  enum class Kind { kMetaGraphDef, kSavedModel, kGraphDef };

  // Reads `path` and checks the framing of everything in it down to each
  // node's bytes, so a truncated or mangled file throws here, before any
  // node is handed out. Throws NotFoundError when `path` does not exist,
  // DataLossError naming the file when it does not parse as `kind`.
  MetaGraphFile(std::string path, Kind kind);
  MetaGraphFile(MetaGraphFile&&) noexcept;
  MetaGraphFile& operator=(MetaGraphFile&&) noexcept;
  ~MetaGraphFile();

  const std::string& path() const { return path_; }
  size_t num_graphs() const { return graphs_.size(); }
  // Graph `index` without its nodes (`nodes` empty): tags, versions, the
  // SaverDef, collections, signatures, the stripped op list. A caller may
  // change or move it: ForEachNode does not read it.
  MetaGraph& graph(size_t index) { return graphs_.at(index).header; }
  const MetaGraph& graph(size_t index) const { return graphs_.at(index).header; }
  // How many NodeDefs graph `index` has (counted when opening).
  size_t num_nodes(size_t index) const { return graphs_.at(index).num_nodes; }

  // The op types of graph `index`'s nodes, sorted and distinct, read without
  // converting the nodes. Throws DataLossError naming the file for a node
  // that does not parse.
  std::vector<std::string> OpTypes(size_t index) const;

  // Converts the nodes of graph `index` one at a time, in file order (the
  // nodes of repeated graph_def fields one after the other, as protobuf
  // merges them), and hands each to `sink`, which may take it apart. Throws
  // DataLossError naming the file (and the node, for a bad attribute value)
  // and ResourceExhaustedError when the constants fill more than a file's
  // budget (shared by every graph of the file and every call); the nodes
  // before the failing one have reached `sink` then. The exceptions of
  // `sink` pass through.
  void ForEachNode(size_t index, const std::function<void(MetaGraphNode&&)>& sink) const;

 private:
  // Hands each node's bytes of graph `index` to `on_node` (false: they do
  // not parse); throws DataLossError then.
  void ForEachNodeBytes(size_t index,
                        const std::function<bool(const std::string& bytes)>& on_node) const;

  struct Frame {
    MetaGraph header;
    // Where its GraphDef(s) lie in the file: offset and length of each.
    std::vector<std::pair<uint64_t, uint32_t>> graph_defs;
    size_t num_nodes = 0;
  };
  std::string path_;
  Kind kind_;
  std::unique_ptr<internal::RandomAccessFile> file_;
  std::vector<Frame> graphs_;
  mutable int64_t fill_budget_left_;
};

// Parses a binary MetaGraphDef file. Throws NotFoundError when `path` does
// not exist, DataLossError naming the file when it does not parse as one.
MetaGraph ReadMetaGraph(const std::string& path);
// A bare binary GraphDef (what tf.io.write_graph(..., as_text=False) and
// TF's reference-data "expected_graph" files hold): nodes and versions only.
MetaGraph ReadGraphDef(const std::string& path);
// The MetaGraphDefs of a SavedModel's saved_model.pb (errors as above).
std::vector<MetaGraph> ReadSavedModelMetaGraphs(const std::string& path);

// Writes a SavedModel (schema version 1) holding `graphs` to `path`
// atomically, as WriteMetaGraph does.
void WriteSavedModel(const std::string& path, const std::vector<MetaGraph>& graphs);

// Writes `meta` as a binary MetaGraphDef to `path` atomically (temp file,
// fsync, rename). Throws InvalidArgumentError for an attribute value that
// cannot be written (a tensor without a value), the OS error naming the file.
void WriteMetaGraph(const std::string& path, const MetaGraph& meta);

// The VariableDefs stored in collection `name` ("variables",
// "trainable_variables", ...); empty when there is no such collection.
// Throws DataLossError naming the collection for a malformed entry, and
// InvalidArgumentError when the collection is not a bytes list.
std::vector<MetaVariableDef> VariableDefsOf(const MetaGraph& meta, const std::string& name);
// A collection holding `defs`, serialized as TF does.
MetaCollection VariableDefCollection(const std::vector<MetaVariableDef>& defs);

}  // namespace eager
