#pragma once

// SavedModel: TensorFlow's deployment format (what TF Serving,
// `saved_model_cli` and TF's loaders in every language read), TF1 style.
//
//   export/1/saved_model.pb              a SavedModel: MetaGraphDefs by tag set,
//                                        each with its signature_defs
//   export/1/variables/variables.index   the variables, a TensorBundle
//   export/1/variables/variables.data-00000-of-00001
//   export/1/assets/                     extra files (none written by eager)
//
// Writing, from a graph built by hand (TF1's SavedModelBuilder):
//
//   eager::Graph graph;
//   eager::Graph::AsDefault in(graph);
//   eager::Tensor x = eager::Placeholder(eager::DType::kFloat32, eager::Shape::Partial({-1, 1}),
//   "x"); eager::Variable a(0.5f, "a"); eager::Tensor y = eager::Identity(a.value() * x, "y");
//   eager::Session sess(graph);
//   sess.Run(eager::GlobalVariablesInitializer());
//   eager::SavedModelBuilder builder("export/1");
//   builder.AddMetaGraphAndVariables(sess, {"serve"},
//                                    {{"serving_default", {{{"x", x}}, {{"y", y}}}}});
//   builder.Save();                       // writes saved_model.pb
//
// An export appears whole or not at all (as TF's exporters write theirs):
// everything is written into a hidden sibling, ".<name>.export-tmp-<pid>-<n>"
// beside EXPORT_DIR, synced, and renamed to EXPORT_DIR by Save(). A server
// watching the base directory (TF Serving loads numbered subdirectories)
// never sees a version without its saved_model.pb, even when the exporting
// process is killed; the next builder for that directory removes what a dead
// process left.
//
// Reading a TF1 SavedModel (tf.compat.v1.saved_model.loader.load):
//
//   eager::SavedModelBundle model = eager::LoadSavedModel("export/1", {"serve"});
//   eager::Session sess(model.graph());
//   model.RunMainOp(sess);                // the main / legacy init op, if any
//   auto out = model.Run(sess, "serving_default", {{"x", batch}});  // out["y"]
//
// The variables are restored when LoadSavedModel returns: they live in the
// graph's Variable objects, which every Session of the graph reads.
//
// TF 2 SavedModels (tf.saved_model.save, Keras 3's model.export()) load the
// same way and run by the same calls: their computation is in the graph's
// function library (runtime/function_library.h), which graph nodes call
// (StatefulPartitionedCall: ops/functional_ops.h), and their variables are
// resource variables (VarHandleOp nodes), restored under the keys TF's own
// restore function gives them. A signature runs by its key and its input
// names as saved_model_cli shows them:
//
//   eager::SavedModelBundle model = eager::LoadSavedModel("mlp", {"serve"});
//   eager::Session sess(model.graph());
//   auto out = model.Run(sess, "serving_default", {{"x", batch}});  // out["output_0"]
//
// Its other tf.functions (a tf.Module's __call__, any traced method) run by
// their object path: model.Function("__call__")(sess, {x}) (saved_function.h).

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/errors.h"
#include "runtime/function_library.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"
#include "saving/saver/meta_graph_def.h"
#include "saving/saver/saved_function.h"

namespace eager {

class Saver;

// TF's tag and signature constants (tf.saved_model.SERVING, ...).
inline constexpr char kServingTag[] = "serve";
inline constexpr char kDefaultServingSignature[] = "serving_default";
inline constexpr char kPredictMethod[] = "tensorflow/serving/predict";

// A signature to export: its inputs and outputs as symbolic tensors of the
// graph, keyed by the names callers use.
struct GraphSignature {
  std::map<std::string, Tensor> inputs = {};
  std::map<std::string, Tensor> outputs = {};
  std::string method_name = kPredictMethod;
};

// tf.compat.v1.saved_model.Builder: one SavedModel directory, one or more
// meta graphs (one per tag set), the variables saved once.
class SavedModelBuilder {
 public:
  // Throws FailedPreconditionError when `export_dir` exists and is not
  // empty (TF refuses to overwrite an export). Removes the staging
  // directories of earlier builders for `export_dir` whose process is dead.
  explicit SavedModelBuilder(std::string export_dir);
  // Removes the staging directory when Save() did not publish it.
  ~SavedModelBuilder();
  SavedModelBuilder(const SavedModelBuilder&) = delete;
  SavedModelBuilder& operator=(const SavedModelBuilder&) = delete;

  // Saves every global variable of the session's graph to
  // EXPORT_DIR/variables/variables and records the graph under `tags` with
  // `signatures` and, if not empty, `main_op` (an operation's name, run by
  // loaders after the restore). Must be called once, before AddMetaGraph.
  // Throws FailedPreconditionError naming an uninitialized variable or when
  // called twice, InvalidArgumentError for empty tags, a signature tensor of
  // another graph or an eager tensor, or an unknown main_op.
  template <typename SessionLike>
  requires requires(SessionLike& s) { s.graph(); }
  void AddMetaGraphAndVariables(SessionLike& sess, const std::vector<std::string>& tags,
                                const std::map<std::string, GraphSignature>& signatures,
                                const std::string& main_op = "") {
    AddGraph(sess.graph(), tags, signatures, main_op, /*save_variables=*/true);
  }
  // Another tag set of the same graph's variables (the graph may differ, its
  // variables must be the same). Throws FailedPreconditionError before
  // AddMetaGraphAndVariables, InvalidArgumentError for a tag set already added.
  template <typename SessionLike>
  requires requires(SessionLike& s) { s.graph(); }
  void AddMetaGraph(SessionLike& sess, const std::vector<std::string>& tags,
                    const std::map<std::string, GraphSignature>& signatures,
                    const std::string& main_op = "") {
    AddGraph(sess.graph(), tags, signatures, main_op, /*save_variables=*/false);
  }
  // Writes saved_model.pb, syncs, and renames the staging directory to
  // EXPORT_DIR; returns EXPORT_DIR/saved_model.pb. Throws
  // FailedPreconditionError when no meta graph was added, when called twice,
  // or when EXPORT_DIR was filled meanwhile (another exporter won).
  std::string Save();

 private:
  void AddGraph(Graph& graph, const std::vector<std::string>& tags,
                const std::map<std::string, GraphSignature>& signatures, const std::string& main_op,
                bool save_variables);

  std::string export_dir_;
  std::string staging_dir_;  // where everything is written until Save()
  std::vector<MetaGraph> graphs_;
  bool variables_saved_ = false;
  bool published_ = false;
};

// What LoadSavedModel returns: the imported graph with its restored
// variables, and the meta graph's signatures.
class SavedModelBundle {
 public:
  SavedModelBundle(SavedModelBundle&&) noexcept;
  SavedModelBundle& operator=(SavedModelBundle&&) noexcept;
  ~SavedModelBundle();

  Graph& graph() const { return *graph_; }
  // The MetaGraphDef as read (tags, signatures, collections, SaverDef, op
  // list) without its nodes (`nodes` is empty): they went straight from the
  // file into graph().
  const MetaGraph& meta_graph() const { return meta_; }
  const std::map<std::string, MetaSignature>& signatures() const { return meta_.signatures; }
  // Signature `key`; throws NotFoundError listing the signatures there are.
  const MetaSignature& signature(const std::string& key) const;
  // The main op (collection "saved_model_main_op", else "legacy_init_op"),
  // or "" when there is none.
  const std::string& main_op() const { return main_op_; }

  // A TF 2 SavedModel's tf.function `path` that is not a signature: a
  // method of the root ("__call__") or of a child object ("encoder.scale"),
  // with its traces (saved_function.h says how a call picks one). Throws
  // NotFoundError listing the functions there are (none for a TF1
  // SavedModel), and the object graph's errors when it does not parse or
  // describes a trace it cannot (DataLossError, InvalidArgumentError naming
  // the function: LoadSavedModel itself does not fail for them, so that the
  // signatures still run).
  SavedFunction Function(const std::string& path) const;
  // The paths Function() takes, sorted.
  std::vector<std::string> FunctionNames() const;

  // Runs the main op in `sess` (nothing when there is none).
  template <typename SessionLike>
  void RunMainOp(SessionLike& sess) const {
    if (!main_op_.empty()) sess.Run(graph_->OperationByName(main_op_));
  }

  // Runs signature `key` in `sess` once: feeds `inputs` (keyed as the
  // signature's inputs) and returns every output, keyed as the signature's.
  // Throws NotFoundError for an unknown signature, InvalidArgumentError
  // naming a missing or unknown input key, and the Session's errors.
  template <typename SessionLike>
  std::map<std::string, Tensor> Run(SessionLike& sess, const std::string& key,
                                    const std::map<std::string, Tensor>& inputs) const;

 private:
  friend SavedModelBundle LoadSavedModel(const std::string&, const std::vector<std::string>&);
  SavedModelBundle();
  // The signature's feeds (tensor name, value) and fetches (tensor names, in
  // the order of its output keys), checked.
  std::pair<std::vector<std::pair<std::string, Tensor>>, std::vector<std::string>> Plan(
      const std::string& key, const std::map<std::string, Tensor>& inputs) const;

  std::unique_ptr<Graph> graph_;
  std::unique_ptr<Saver> saver_;
  // A TF 2 SavedModel's functions by path, their captures resolved.
  std::map<std::string, std::vector<SavedConcreteFunction>> functions_;
  // Why the object graph's functions could not be read, if they could not.
  std::optional<std::pair<ErrorCode, std::string>> functions_error_;
  MetaGraph meta_;
  std::string main_op_;
};

// tf.compat.v1.saved_model.loader.load: reads EXPORT_DIR/saved_model.pb,
// imports the meta graph whose tag set equals `tags` (in any order) into a
// new graph, and restores its variables from EXPORT_DIR/variables/variables.
// A TF 2 SavedModel's function library goes into the graph
// (Graph::SetFunctionLibrary) and its VarHandleOps get Variables, restored.
// Throws NotFoundError when there is no saved_model.pb or no meta graph with
// those tags (listing the tag sets there are), the function library
// reader's errors (a polymorphic function, two of one name), and the errors
// of ImportIntoGraph and Saver::Restore.
SavedModelBundle LoadSavedModel(const std::string& export_dir,
                                const std::vector<std::string>& tags);

// The function library of meta graph `index` of the saved_model.pb at
// `path` (what a TF 2 SavedModel's calls run), or nullptr when it has none.
// Reads the whole file. Throws the function library reader's errors
// (DataLossError naming the file, a polymorphic function, two of one name).
std::shared_ptr<const FunctionLibrary> ReadSavedModelFunctionLibrary(const std::string& path,
                                                                     size_t index = 0);

// ---------------------------------------------------------------------------
// Implementation details follow.

namespace internal {
// Deduce Session's Feeds and fetch-list types from its Run overloads, so that
// this header need not include ops/ (saving depends on runtime only).
template <typename S, typename Fetches, typename Feeds>
std::pair<Fetches, Feeds> SessionRunTypes(std::vector<std::optional<Tensor>> (S::*)(const Fetches&,
                                                                                    const Feeds&));
}  // namespace internal

template <typename SessionLike>
std::map<std::string, Tensor> SavedModelBundle::Run(
    SessionLike& sess, const std::string& key, const std::map<std::string, Tensor>& inputs) const {
  using Types = decltype(internal::SessionRunTypes<SessionLike>(&SessionLike::Run));
  using Fetches = typename Types::first_type;
  using Feeds = typename Types::second_type;
  auto [feeds_by_name, fetch_names] = Plan(key, inputs);
  Feeds feeds;
  for (auto& [name, value] : feeds_by_name) feeds.emplace_back(name, value);
  Fetches fetches;
  for (const std::string& name : fetch_names) fetches.emplace_back(name);
  const std::vector<std::optional<Tensor>> values = sess.Run(fetches, feeds);
  std::map<std::string, Tensor> out;
  size_t i = 0;
  for (const auto& [output_key, info] : signature(key).outputs)
    out.emplace(output_key, *values[i++]);
  return out;
}

}  // namespace eager
