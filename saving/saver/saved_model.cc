#include "saving/saver/saved_model.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "runtime/errors.h"
#include "runtime/variable.h"
#include "saving/bundle/posix_file.h"
#include "saving/saver/internal/function_library_reader.h"
#include "saving/saver/internal/object_graph_variables.h"
#include "saving/saver/internal/saved_object_graph_reader.h"
#include "saving/saver/internal/saver_for_imported_graph.h"
#include "saving/saver/meta_graph_import_export.h"
#include "saving/saver/saver.h"

namespace eager {
namespace {

// The object graph's functions, each capture resolved to the handle node of
// the variable at its object path ("" when none is: a captured constant,
// table or asset, which a call then refuses naming it).
std::map<std::string, std::vector<SavedConcreteFunction>> SavedFunctionsOf(
    const std::string& object_graph, const std::map<std::string, std::string>& handle_by_path,
    const std::string& where) {
  internal::SavedFunctions read = internal::ReadSavedFunctions(object_graph, where);
  for (auto& [name, traces] : read.functions) {
    for (SavedConcreteFunction& trace : traces) {
      trace.capture_paths.reserve(trace.bound_inputs.size());
      trace.captures.reserve(trace.bound_inputs.size());
      for (const int id : trace.bound_inputs) {
        const std::string& object = read.object_paths[static_cast<size_t>(id)];
        auto it = handle_by_path.find(object);
        trace.capture_paths.push_back(object);
        trace.captures.push_back(it == handle_by_path.end() ? "" : it->second);
      }
    }
  }
  return std::move(read.functions);
}

// TF's collection keys for the op a loader runs after restoring
// (saved_model/constants.py: MAIN_OP_KEY, and the older LEGACY_INIT_OP_KEY).
constexpr char kMainOpKey[] = "saved_model_main_op";
constexpr char kLegacyInitOpKey[] = "legacy_init_op";

std::string SavedModelPath(const std::string& dir) { return dir + "/saved_model.pb"; }
std::string VariablesPrefix(const std::string& dir) { return dir + "/variables/variables"; }

std::string JoinTags(const std::vector<std::string>& tags) {
  std::string out = "{";
  for (size_t i = 0; i < tags.size(); ++i) out += StrCat(i ? ", " : "", "\"", tags[i], "\"");
  return out + "}";
}

MetaTensorInfo InfoOf(const Graph& graph, const Tensor& tensor, const std::string& what) {
  if (!tensor.is_symbolic()) {
    throw InvalidArgumentError(
        StrCat(what, " is an eager tensor; a signature names graph tensors"));
  }
  const Operation op = graph.OperationOf(tensor);  // throws for another graph's tensor
  const NodeInput input = ParseNodeInput(tensor.name());
  const Node& node = op.node();
  const auto index = static_cast<size_t>(input.index);
  MetaTensorInfo info;
  info.name = tensor.name();
  const OutputSpec& spec = node.output_specs.at(index);
  info.tf_dtype = TfDataType(spec.dtype);
  const Shape& shape = spec.shape;
  info.shape = MetaShape{shape.unknown_rank() ? std::vector<int64_t>{} : shape.ToVector(),
                         shape.unknown_rank()};
  return info;
}

// EXPORT_DIR without trailing slashes ("export/1/" is "export/1").
std::string WithoutTrailingSlashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

// The hidden sibling an export of `export_dir` is staged in: a name TF
// Serving ignores (not a number) and that says whose it is.
std::string StagingPrefix(const std::string& export_dir) {
  const size_t slash = export_dir.find_last_of('/');
  const std::string base = slash == std::string::npos ? export_dir : export_dir.substr(slash + 1);
  return StrCat(".", base, ".export-tmp-");
}

}  // namespace

// ---- SavedModelBuilder ---------------------------------------------------

SavedModelBuilder::SavedModelBuilder(std::string export_dir)
    : export_dir_(WithoutTrailingSlashes(std::move(export_dir))) {
  std::error_code error;
  if (std::filesystem::exists(export_dir_, error) &&
      !std::filesystem::is_empty(export_dir_, error)) {
    throw FailedPreconditionError(
        StrCat("Export directory already exists, and isn't empty: ", export_dir_,
               internal::FileExists(SavedModelPath(export_dir_)) ? " holds a saved_model.pb" : "",
               ". Choose another directory (a new version number)."));
  }
  const std::string parent = internal::DirName(export_dir_);
  internal::CreateDirectories(parent);
  internal::RemoveTemporariesOfDeadProcesses(parent, StagingPrefix(export_dir_));
  staging_dir_ = StrCat(parent, "/", internal::TemporaryNameWithPid(StagingPrefix(export_dir_)));
  internal::CreateDirectories(staging_dir_ + "/variables");
}

SavedModelBuilder::~SavedModelBuilder() {
  if (published_) return;
  std::error_code error;
  std::filesystem::remove_all(staging_dir_, error);
}

void SavedModelBuilder::AddGraph(Graph& graph, const std::vector<std::string>& tags,
                                 const std::map<std::string, GraphSignature>& signatures,
                                 const std::string& main_op, bool save_variables) {
  EAGER_CHECK(!tags.empty(), "SavedModelBuilder: a meta graph needs at least one tag");
  const std::set<std::string> tag_set(tags.begin(), tags.end());
  for (const MetaGraph& meta : graphs_) {
    if (std::set<std::string>(meta.tags.begin(), meta.tags.end()) == tag_set) {
      throw InvalidArgumentError(StrCat("SavedModelBuilder: a meta graph with tags ",
                                        JoinTags(tags), " was already added"));
    }
  }
  if (save_variables == variables_saved_) {
    throw FailedPreconditionError(
        save_variables ? "SavedModelBuilder: AddMetaGraphAndVariables may be called only once"
                       : "SavedModelBuilder: AddMetaGraph needs AddMetaGraphAndVariables first");
  }
  if (!main_op.empty()) graph.OperationByName(main_op);  // NotFoundError with suggestions

  std::map<std::string, MetaSignature> defs;
  for (const auto& [key, signature] : signatures) {
    MetaSignature def;
    def.method_name = signature.method_name;
    for (const auto& [name, tensor] : signature.inputs) {
      def.inputs.emplace(name,
                         InfoOf(graph, tensor, StrCat("signature '", key, "' input '", name, "'")));
    }
    for (const auto& [name, tensor] : signature.outputs) {
      def.outputs.emplace(
          name, InfoOf(graph, tensor, StrCat("signature '", key, "' output '", name, "'")));
    }
    defs.emplace(key, std::move(def));
  }

  // The Saver writes the variables and PREFIX.meta: the graph with its
  // save/restore subgraph and SaverDef, which a loader runs. The SavedModel
  // keeps that meta graph; the .meta and the state file are not TF's layout.
  const std::string prefix = VariablesPrefix(staging_dir_);
  MetaGraph meta;
  {
    Graph::AsDefault in(graph);
    const std::vector<Variable*> variables = graph.GlobalVariables();
    if (variables.empty()) {
      meta = GraphToMetaGraph(graph);
    } else {
      SaverOptions options;
      options.max_to_keep = 0;
      Saver saver(variables, options);
      const std::string scratch = save_variables ? prefix : StrCat(prefix, ".scratch");
      saver.Save(scratch);
      meta = ReadMetaGraph(scratch + ".meta");
      internal::RemoveFileNoThrow(scratch + ".meta");
      internal::RemoveFileNoThrow(internal::DirName(scratch) + "/checkpoint");
      if (!save_variables) {
        internal::RemoveFileNoThrow(scratch + ".index");
        internal::RemoveFileNoThrow(scratch + ".data-00000-of-00001");
      }
    }
  }
  meta.tags = tags;
  meta.signatures = std::move(defs);
  if (!main_op.empty()) {
    MetaCollection collection;
    collection.kind = MetaCollection::Kind::kNodeList;
    collection.node_list = {main_op};
    meta.collections[kMainOpKey] = collection;
  }
  graphs_.push_back(std::move(meta));
  if (save_variables) variables_saved_ = true;
}

std::string SavedModelBuilder::Save() {
  if (graphs_.empty()) {
    throw FailedPreconditionError(
        StrCat("SavedModelBuilder(\"", export_dir_, "\").Save(): no meta graph was added"));
  }
  if (published_) {
    throw FailedPreconditionError(
        StrCat("SavedModelBuilder(\"", export_dir_, "\").Save(): already saved"));
  }
  WriteSavedModel(SavedModelPath(staging_dir_), graphs_);
  // The variables' files and saved_model.pb were synced as written; their
  // directory entries are synced here, so the renamed directory is whole
  // after a power cut too.
  internal::SyncDirectory(staging_dir_ + "/variables");
  internal::SyncDirectory(staging_dir_);
  // rename(2) replaces an empty EXPORT_DIR and refuses a filled one
  // (ENOTEMPTY/EEXIST): FailedPreconditionError naming it.
  internal::RenameFile(staging_dir_, export_dir_);
  published_ = true;
  internal::SyncDirectory(internal::DirName(export_dir_));
  return SavedModelPath(export_dir_);
}

// ---- LoadSavedModel ------------------------------------------------------

SavedModelBundle::SavedModelBundle() : graph_(std::make_unique<Graph>()) {}
SavedModelBundle::SavedModelBundle(SavedModelBundle&&) noexcept = default;
SavedModelBundle& SavedModelBundle::operator=(SavedModelBundle&&) noexcept = default;
SavedModelBundle::~SavedModelBundle() {
  // The Saver refers to the graph's variables: it goes first.
  saver_.reset();
}

const MetaSignature& SavedModelBundle::signature(const std::string& key) const {
  auto it = meta_.signatures.find(key);
  if (it == meta_.signatures.end()) {
    std::string known;
    for (const auto& [name, unused] : meta_.signatures)
      known += StrCat(known.empty() ? "" : ", ", "'", name, "'");
    throw NotFoundError(StrCat("SavedModel has no signature '", key,
                               "'; its signatures: ", known.empty() ? "none" : known));
  }
  return it->second;
}

std::pair<std::vector<std::pair<std::string, Tensor>>, std::vector<std::string>>
SavedModelBundle::Plan(const std::string& key, const std::map<std::string, Tensor>& inputs) const {
  const MetaSignature& sig = signature(key);
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [name, info] : sig.inputs) {
    auto it = inputs.find(name);
    if (it == inputs.end()) {
      throw InvalidArgumentError(
          StrCat("signature '", key, "': missing input '", name, "' (", info.name, ")"));
    }
    EAGER_CHECK(!info.name.empty(), "signature '", key, "' input '", name,
                "' is a sparse or composite tensor, which eager does not feed");
    feeds.emplace_back(info.name, it->second);
  }
  for (const auto& [name, unused] : inputs) {
    if (sig.inputs.count(name) == 0) {
      std::string known;
      for (const auto& [k, v] : sig.inputs) known += StrCat(known.empty() ? "" : ", ", "'", k, "'");
      throw InvalidArgumentError(StrCat("signature '", key, "' has no input '", name,
                                        "'; its inputs: ", known.empty() ? "none" : known));
    }
  }
  std::vector<std::string> fetches;
  for (const auto& [name, info] : sig.outputs) {
    EAGER_CHECK(!info.name.empty(), "signature '", key, "' output '", name,
                "' is a sparse or composite tensor, which eager does not fetch");
    fetches.push_back(info.name);
  }
  return {std::move(feeds), std::move(fetches)};
}

std::shared_ptr<const FunctionLibrary> ReadSavedModelFunctionLibrary(const std::string& path,
                                                                     size_t index) {
  return internal::ReadSavedModelFunctions(path, index);
}

SavedFunction SavedModelBundle::Function(const std::string& path) const {
  if (functions_error_) ThrowError(functions_error_->first, functions_error_->second);
  auto it = functions_.find(path);
  if (it == functions_.end()) {
    std::string known;
    for (const auto& [name, unused] : functions_) {
      known += StrCat(known.empty() ? "" : ", ", "'", name, "'");
    }
    throw NotFoundError(StrCat("SavedModel has no function '", path,
                               "'; its functions: ", known.empty() ? "none" : known));
  }
  return SavedFunction(path, it->second, graph_.get());
}

std::vector<std::string> SavedModelBundle::FunctionNames() const {
  std::vector<std::string> names;
  names.reserve(functions_.size());
  for (const auto& [name, unused] : functions_) names.push_back(name);
  return names;
}

SavedModelBundle LoadSavedModel(const std::string& export_dir,
                                const std::vector<std::string>& tags) {
  const std::string path = SavedModelPath(export_dir);
  if (!internal::FileExists(path)) {
    throw NotFoundError(StrCat("Could not find SavedModel .pb at supplied export directory path: ",
                               export_dir, " (no ", path, ")"));
  }
  MetaGraphFile file(path, MetaGraphFile::Kind::kSavedModel);
  const std::set<std::string> wanted(tags.begin(), tags.end());
  size_t index = 0;
  while (index < file.num_graphs() &&
         std::set<std::string>(file.graph(index).tags.begin(), file.graph(index).tags.end()) !=
             wanted) {
    ++index;
  }
  if (index == file.num_graphs()) {
    std::string known;
    for (size_t i = 0; i < file.num_graphs(); ++i)
      known += StrCat(known.empty() ? "" : ", ", JoinTags(file.graph(i).tags));
    throw NotFoundError(StrCat("MetaGraphDef associated with tags ", JoinTags(tags),
                               " could not be found in SavedModel ", export_dir,
                               ". Available tag sets: ", known.empty() ? "none" : known));
  }

  // The nodes go into the bundle's graph as they are read; on any error
  // the half-built bundle is dropped with the exception.
  SavedModelBundle bundle;
  bool calls = false;  // a node runs a library function
  ImportIntoGraph(file, index, *bundle.graph_, [&](const MetaGraphNode& node) {
    calls = calls || node.attrs.contains("f") || node.attrs.contains("body") ||
            node.attrs.contains("then_branch") || node.attrs.contains("branches");
  });
  // A TF 2 SavedModel: its computation is in the function library, its
  // variables are resource variables, restored as TF's restore function
  // says. The library is read (the file once more) only when a node calls
  // one: a TF1 graph of millions of nodes is not held twice.
  const bool tf2 = file.graph(index).has_object_graph;
  if (calls || tf2) {
    bundle.graph_->SetFunctionLibrary(internal::ReadSavedModelFunctions(path, index));
  }
  bundle.meta_ = std::move(file.graph(index));
  for (const char* key : {kMainOpKey, kLegacyInitOpKey}) {
    auto c = bundle.meta_.collections.find(key);
    if (c != bundle.meta_.collections.end() && !c->second.node_list.empty()) {
      bundle.main_op_ = c->second.node_list.front();
      break;
    }
  }
  if (tf2) {
    const std::string restore_op =
        bundle.meta_.saver_def ? bundle.meta_.saver_def->restore_op_name : "";
    std::map<std::string, std::string> handle_by_path;
    bundle.saver_ = internal::SaverForObjectGraphVariables(
        *bundle.graph_, VariablesPrefix(export_dir), restore_op, &handle_by_path);
    // A malformed object graph leaves the signatures runnable: Function()
    // reports it.
    try {
      bundle.functions_ = SavedFunctionsOf(bundle.meta_.object_graph, handle_by_path, path);
    } catch (const Error& e) {
      bundle.functions_error_.emplace(e.code(), e.what());
    }
  } else {
    Graph::AsDefault in(*bundle.graph_);
    bundle.saver_ = internal::SaverForImportedGraph(bundle.meta_, *bundle.graph_);
  }
  if (bundle.saver_ != nullptr) bundle.saver_->Restore(VariablesPrefix(export_dir));
  // Variables kept out of every collection (TF Serving's half_plus_two has a
  // "filename_tensor" that only its main op assigns) get a Variable too, so
  // that the main op can run; they are not in variables/.
  Graph& graph = *bundle.graph_;
  for (int i = 0; i < graph.num_nodes(); ++i) {
    const Node& node = graph.node(i);
    if (node.op == "VariableV2" && graph.VariableForNode(node.name) == nullptr) {
      graph.ImportVariable({.variable = nullptr,
                            .variable_node = node.name,
                            .initializer = "",
                            .snapshot = "",
                            .initial_value = "",
                            .trainable = false});
    }
  }
  return bundle;
}

}  // namespace eager
