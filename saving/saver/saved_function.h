#pragma once

// SavedFunction: a tf.function of a TF 2 SavedModel that is not a
// signature (a tf.Module's `__call__`, any other method traced with an
// input_signature or get_concrete_function), called as TF's
// tf.saved_model.load(dir).__call__(x) calls it.
//
//   eager::SavedModelBundle model = eager::LoadSavedModel("module", {"serve"});
//   eager::Session sess(model.graph());
//   eager::SavedFunction call = model.Function("__call__");
//   auto out = call(sess, {x});                       // positional: out["y"]
//   auto same = call(sess, {{"x", x}});               // by argument name
//   auto half = model.Function("encoder.scale")(sess, {a, b});  // a child's method
//
// The SavedObjectGraph (MetaGraphDef.object_graph_def) lists each function
// under its object's path and its traces (concrete functions: FunctionDefs
// of the library); each trace gives its inputs' TensorSpecs (names, dtypes,
// shapes), the variables it captures (passed to the FunctionDef after the
// user's inputs) and its output structure. A call picks the first trace
// whose specs the inputs match (dtype equal, shape compatible: a -1 dim or
// an unknown rank takes any), as TF picks among a polymorphic function's
// traces; none matching is InvalidArgumentError naming the function, the
// inputs given and every trace's specs. Outputs are keyed as TF's
// structure names them: a dict's keys, "output_0", "output_1", ... for a
// tensor or a tuple or list of them (nested ones "key/0").
//
// The call runs in the bundle's graph: Function() adds, once per trace, a
// Placeholder per input and a StatefulPartitionedCall of the trace's
// FunctionDef with the captured variables' handles (nodes named
// "__saved_function/<FunctionDef>/..."), which any Session of the graph runs.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/graph.h"
#include "runtime/tensor.h"
#include "saving/saver/meta_graph_def.h"

namespace eager {

// A traced input or output: TF's TensorSpec.
struct SavedTensorSpec {
  std::string name{};  // the argument's name ("x"); an output's key
  int tf_dtype = 0;    // TF's DataType number
  MetaShape shape{.dims = {}, .unknown_rank = true};
};

// "x: float32 [?,3]"
std::string DescribeSpec(const SavedTensorSpec& spec);

// One trace of a saved function.
struct SavedConcreteFunction {
  std::string name{};                        // its FunctionDef in the library
  std::vector<SavedTensorSpec> inputs{};     // the user's, flattened as the FunctionDef takes them
  std::vector<int> bound_inputs{};           // SavedObjectGraph ids of what it captures
  std::vector<std::string> captures{};       // per bound input: its VarHandleOp node, or ""
  std::vector<std::string> capture_paths{};  // per bound input: its object's path
  std::vector<SavedTensorSpec> outputs{};    // flattened; name = the output's key
};

// The tf.functions of a TF 2 SavedModel's meta graph (its object graph),
// by path, with their traces; captures left unresolved (`captures` empty:
// LoadSavedModel resolves them). Empty for a meta graph without an object
// graph. Throws DataLossError naming `where` when the object graph does not
// parse, InvalidArgumentError naming the function for a malformed trace.
std::map<std::string, std::vector<SavedConcreteFunction>> ReadSavedFunctionSpecs(
    const MetaGraph& meta, const std::string& where);

// A function of the object graph, by path ("__call__", "encoder.scale").
class SavedFunction {
 public:
  SavedFunction(std::string name, std::vector<SavedConcreteFunction> traces, Graph* graph)
      : name_(std::move(name)), traces_(std::move(traces)), graph_(graph) {}

  const std::string& name() const { return name_; }
  const std::vector<SavedConcreteFunction>& concrete_functions() const { return traces_; }

  // The trace `inputs` match, positionally or by argument name; throws
  // InvalidArgumentError naming the function and every trace's specs when
  // none does (or a name no trace has).
  const SavedConcreteFunction& Match(const std::vector<Tensor>& inputs) const;
  const SavedConcreteFunction& Match(const std::map<std::string, Tensor>& inputs) const;

  // Runs the matching trace in `sess` (a Session of the bundle's graph).
  // Throws Match's errors and the Session's.
  template <typename SessionLike>
  std::map<std::string, Tensor> operator()(SessionLike& sess,
                                           const std::vector<Tensor>& inputs) const {
    return Run(sess, Match(inputs), inputs);
  }
  template <typename SessionLike>
  std::map<std::string, Tensor> operator()(SessionLike& sess,
                                           const std::map<std::string, Tensor>& inputs) const {
    const SavedConcreteFunction& trace = Match(inputs);
    std::vector<Tensor> ordered;
    for (const SavedTensorSpec& spec : trace.inputs) ordered.push_back(inputs.at(spec.name));
    return Run(sess, trace, ordered);
  }

 private:
  // The trace's call node in the graph, added on first use; returns the
  // feed names (its Placeholders, in input order) and the fetch names.
  std::pair<std::vector<std::string>, std::vector<std::string>> CallNodes(
      const SavedConcreteFunction& trace) const;

  template <typename SessionLike>
  std::map<std::string, Tensor> Run(SessionLike& sess, const SavedConcreteFunction& trace,
                                    const std::vector<Tensor>& inputs) const;

  std::string name_;
  std::vector<SavedConcreteFunction> traces_;
  Graph* graph_;
};

// ---------------------------------------------------------------------------
// Implementation details follow.

namespace internal {
template <typename S, typename Fetches, typename Feeds>
std::pair<Fetches, Feeds> SavedFunctionRunTypes(
    std::vector<std::optional<Tensor>> (S::*)(const Fetches&, const Feeds&));
}  // namespace internal

template <typename SessionLike>
std::map<std::string, Tensor> SavedFunction::Run(SessionLike& sess,
                                                 const SavedConcreteFunction& trace,
                                                 const std::vector<Tensor>& inputs) const {
  using Types = decltype(internal::SavedFunctionRunTypes<SessionLike>(&SessionLike::Run));
  auto [feed_names, fetch_names] = CallNodes(trace);
  typename Types::second_type feeds;
  for (size_t i = 0; i < feed_names.size(); ++i) feeds.emplace_back(feed_names[i], inputs[i]);
  typename Types::first_type fetches;
  for (const std::string& name : fetch_names) fetches.emplace_back(name);
  const std::vector<std::optional<Tensor>> values = sess.Run(fetches, feeds);
  std::map<std::string, Tensor> out;
  for (size_t i = 0; i < trace.outputs.size(); ++i) out.emplace(trace.outputs[i].name, *values[i]);
  return out;
}

}  // namespace eager
