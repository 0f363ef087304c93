#pragma once

// SavedModelExport: an eager model as a SavedModel that TensorFlow serves,
// by tracing its call into a graph (what tf.function does before
// tf.saved_model.save).
//
//   Mlp model;  ... trained eagerly ...
//   auto serve = [&](const eager::Tensor& images) {
//     eager::Tensor logits = model(images);
//     return std::vector<eager::Tensor>{logits, eager::Softmax(logits)};
//   };
//   eager::SavedModelExport(serve, "export/1",        // TF Serving's <base>/<version>
//       {{"serving_default",
//         eager::Signature{{"images", eager::TensorSpec(eager::DType::kFloat32, {-1, 784})},
//                          /*outputs=*/{"logits", "probabilities"}}}});
//
// For each signature ("serving_default" first, so that its tensors get the
// plain names, then the others in key order), the call runs once inside a new Graph
// (Graph::AsDefault) on Placeholders named as the inputs, of the given dtype
// and partial shape: every op it runs becomes a node with TF's op type and
// name ("dense/MatMul"), each eager Variable it reads becomes a VariableV2
// node named as the variable (Graph::CaptureVariables) whose current value is
// saved to EXPORT_DIR/variables, and each result gets an Identity node named
// as its output key ("probabilities:0"). The signatures share one graph and
// one set of variables; the meta graph is tagged `tags` (TF Serving loads
// {"serve"}). Only variables the call reads are exported (a TF1 export),
// and their values are those at export time.
//
// What a trace cannot express fails, naming the op or tensor, rather than
// writing a wrong graph: C++ that reads a tensor's value (a value-dependent
// branch or loop: `if (x.scalar<float>() > 0)`) throws FailedPreconditionError
// naming the symbolic tensor; an op with no graph form (an eager-only fusion
// run directly) or an Assign to an eager variable throws UnimplementedError
// naming it; a layer that builds its
// variables during the trace (never called eagerly) throws
// FailedPreconditionError naming the variable. Errors of the call keep their
// kind and say which signature was being traced.
//
// Layout and loaders: see saving/saver/saved_model.h (the same files as
// SavedModelBuilder writes; tf.saved_model.load, TF1's loader,
// saved_model_cli and eager::LoadSavedModel read them).

#include <concepts>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtime/dtype.h"
#include "runtime/shape.h"
#include "runtime/tensor.h"
#include "saving/saver/saved_model.h"

namespace eager {

class Variable;

// A signature input's dtype and shape; -1 (Shape::kUnknownDim) marks a
// dimension of any size, as the batch in {-1, 784}.
struct TensorSpec {
  TensorSpec(DType dtype, std::initializer_list<int64_t> dims)
      : dtype(dtype), shape(Shape::Partial(dims)) {}
  TensorSpec(DType dtype, const Shape& shape) : dtype(dtype), shape(shape) {}

  DType dtype;
  Shape shape;
};

// One signature to export: its inputs in the order the call takes them,
// the names of the call's results in order, and how its variables are read.
struct Signature {
  using Input = std::pair<std::string, TensorSpec>;

  Signature(Input input, std::vector<std::string> outputs)
      : inputs{std::move(input)}, outputs(std::move(outputs)) {}
  Signature(std::vector<Input> inputs, std::vector<std::string> outputs)
      : inputs(std::move(inputs)), outputs(std::move(outputs)) {}

  std::vector<Input> inputs;
  std::vector<std::string> outputs;
  // Reads of a key variable are traced as reads of its value (see
  // Graph::CaptureVariables): a model exported with its moving averages,
  // {&kernel, ema.Average(kernel)}. Same dtype and shape required.
  std::map<const Variable*, const Variable*> read_instead = {};
  std::string method_name = kPredictMethod;
};

// Traces `model` once per signature and writes the SavedModel to
// `export_dir`; returns the path of its saved_model.pb.
//
// `model` is callable as model(const Tensor&) (one input) or
// model(const std::vector<Tensor>&) (the inputs in order), returning a
// Tensor (one output) or a std::vector<Tensor> (the outputs in order). Its
// layers must be built (called eagerly once).
//
// Throws FailedPreconditionError when `export_dir` exists and is not empty
// (exports are never overwritten: use a new version number),
// InvalidArgumentError for no signatures, an input count the model does not
// take, a result count other than the signature's outputs, or a result that
// does not come from the trace (an eager tensor), and the trace's errors
// above. A failed or killed export leaves no `export_dir` (SavedModelBuilder
// writes into a staging sibling and renames it into place whole).
template <typename Model>
std::string SavedModelExport(Model&& model, const std::string& export_dir,
                             const std::map<std::string, Signature>& signatures,
                             const std::vector<std::string>& tags = {kServingTag});

// ---------------------------------------------------------------------------
// Implementation details follow.

namespace internal {
// The model's call with inputs and results as vectors.
using TracedCall = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
std::string ExportTraced(const TracedCall& call, const std::string& export_dir,
                         const std::map<std::string, Signature>& signatures,
                         const std::vector<std::string>& tags);

template <typename Result>
std::vector<Tensor> ResultsOf(Result&& result) {
  if constexpr (std::convertible_to<Result, Tensor>) {
    return {Tensor(std::forward<Result>(result))};
  } else {
    static_assert(std::convertible_to<Result, std::vector<Tensor>>,
                  "SavedModelExport: the model must return a Tensor or a std::vector<Tensor>");
    return std::vector<Tensor>(std::forward<Result>(result));
  }
}
}  // namespace internal

template <typename Model>
std::string SavedModelExport(Model&& model, const std::string& export_dir,
                             const std::map<std::string, Signature>& signatures,
                             const std::vector<std::string>& tags) {
  internal::TracedCall call = [&model](const std::vector<Tensor>& inputs) -> std::vector<Tensor> {
    if constexpr (std::invocable<Model&, const Tensor&>) {
      EAGER_CHECK(inputs.size() == 1,
                  "SavedModelExport: the model takes one tensor, the signature ", "has ",
                  inputs.size(), " inputs (take a std::vector<Tensor> for several)");
      return internal::ResultsOf(model(inputs[0]));
    } else {
      static_assert(std::invocable<Model&, const std::vector<Tensor>&>,
                    "SavedModelExport: the model must be callable with a Tensor or a "
                    "std::vector<Tensor>");
      return internal::ResultsOf(model(inputs));
    }
  };
  return internal::ExportTraced(call, export_dir, signatures, tags);
}

}  // namespace eager
