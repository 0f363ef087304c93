#include "saving/saver/saved_function.h"

#include "runtime/errors.h"
#include "runtime/function_library.h"
#include "saving/saver/internal/saved_object_graph_reader.h"

namespace eager {
namespace {

// "float32" for a dtype eager has, TF's "DT_..." name otherwise.
std::string DTypeName(int tf_dtype) {
  const std::optional<DType> d = DTypeFromTfDataType(tf_dtype);
  return d ? StrCat(*d) : TfDataTypeName(tf_dtype);
}

std::string ShapeText(const MetaShape& shape) {
  if (shape.unknown_rank) return "<unknown rank>";
  std::string s = "[";
  for (size_t i = 0; i < shape.dims.size(); ++i) {
    s += StrCat(i == 0 ? "" : ",", shape.dims[i] < 0 ? "?" : StrCat(shape.dims[i]));
  }
  return s + "]";
}

bool Matches(const SavedTensorSpec& spec, const Tensor& t) {
  const std::optional<DType> d = DTypeFromTfDataType(spec.tf_dtype);
  if (!d || *d != t.dtype()) return false;
  if (spec.shape.unknown_rank) return true;
  if (static_cast<int64_t>(spec.shape.dims.size()) != t.rank()) return false;
  for (size_t i = 0; i < spec.shape.dims.size(); ++i) {
    const int64_t want = spec.shape.dims[i];
    if (want >= 0 && want != t.shape().dim(static_cast<int>(i))) return false;
  }
  return true;
}

std::string Describe(const std::vector<SavedTensorSpec>& specs) {
  std::string s = "(";
  for (size_t i = 0; i < specs.size(); ++i) s += StrCat(i == 0 ? "" : ", ", DescribeSpec(specs[i]));
  return s + ")";
}

}  // namespace

std::string DescribeSpec(const SavedTensorSpec& spec) {
  return StrCat(spec.name, ": ", DTypeName(spec.tf_dtype), " ", ShapeText(spec.shape));
}

std::map<std::string, std::vector<SavedConcreteFunction>> ReadSavedFunctionSpecs(
    const MetaGraph& meta, const std::string& where) {
  if (!meta.has_object_graph) return {};
  return internal::ReadSavedFunctions(meta.object_graph, where).functions;
}

const SavedConcreteFunction& SavedFunction::Match(const std::vector<Tensor>& inputs) const {
  for (const SavedConcreteFunction& trace : traces_) {
    if (trace.inputs.size() != inputs.size()) continue;
    bool all = true;
    for (size_t i = 0; i < inputs.size() && all; ++i) all = Matches(trace.inputs[i], inputs[i]);
    if (all) return trace;
  }
  std::string given = "(";
  for (size_t i = 0; i < inputs.size(); ++i) {
    given += StrCat(i == 0 ? "" : ", ", inputs[i].dtype(), " ", inputs[i].shape());
  }
  std::string known;
  for (const SavedConcreteFunction& trace : traces_) {
    known += StrCat(known.empty() ? "" : ", ", Describe(trace.inputs));
  }
  throw InvalidArgumentError(StrCat("function '", name_, "' has no trace for inputs ", given,
                                    "); its concrete functions take ",
                                    known.empty() ? "nothing (it has none)" : known));
}

const SavedConcreteFunction& SavedFunction::Match(
    const std::map<std::string, Tensor>& inputs) const {
  for (const SavedConcreteFunction& trace : traces_) {
    if (trace.inputs.size() != inputs.size()) continue;
    bool all = true;
    for (const SavedTensorSpec& spec : trace.inputs) {
      auto it = inputs.find(spec.name);
      all = all && it != inputs.end() && Matches(spec, it->second);
    }
    if (all) return trace;
  }
  std::string given = "(";
  for (const auto& [key, t] : inputs) {
    given += StrCat(given.size() == 1 ? "" : ", ", key, ": ", t.dtype(), " ", t.shape());
  }
  std::string known;
  for (const SavedConcreteFunction& trace : traces_) {
    known += StrCat(known.empty() ? "" : ", ", Describe(trace.inputs));
  }
  throw InvalidArgumentError(StrCat("function '", name_, "' has no trace for inputs ", given,
                                    "); its concrete functions take ",
                                    known.empty() ? "nothing (it has none)" : known));
}

std::pair<std::vector<std::string>, std::vector<std::string>> SavedFunction::CallNodes(
    const SavedConcreteFunction& trace) const {
  const std::string base = StrCat("__saved_function/", trace.name);
  std::vector<std::string> feeds, fetches;
  feeds.reserve(trace.inputs.size());
  fetches.reserve(trace.outputs.size());
  for (size_t i = 0; i < trace.inputs.size(); ++i) {
    feeds.push_back(StrCat(base, "/input_", i, ":0"));
  }
  for (size_t i = 0; i < trace.outputs.size(); ++i) fetches.push_back(StrCat(base, ":", i));
  if (graph_->FindNode(base) != nullptr) return {feeds, fetches};

  const std::string where = StrCat("function '", name_, "' trace '", trace.name, "'");
  for (size_t i = 0; i < trace.captures.size(); ++i) {
    if (trace.captures[i].empty()) {
      throw UnimplementedError(StrCat(where, " captures object '", trace.capture_paths[i],
                                      "', which is not a variable restored from variables/; "
                                      "eager passes captured variables only"));
    }
  }
  const FunctionDefinition* f =
      graph_->functions() == nullptr ? nullptr : graph_->functions()->Find(trace.name);
  if (f == nullptr) {
    throw NotFoundError(StrCat(where, ": the graph's function library has no such function"));
  }
  if (f->inputs.size() != trace.inputs.size() + trace.captures.size() ||
      f->outputs.size() != trace.outputs.size()) {
    throw InvalidArgumentError(StrCat(
        where, ": its FunctionDef takes ", f->inputs.size(), " inputs and gives ",
        f->outputs.size(), " outputs, but the object graph describes ", trace.inputs.size(),
        " inputs, ", trace.captures.size(), " captures and ", trace.outputs.size(), " outputs"));
  }
  Node call{.name = base, .op = "StatefulPartitionedCall"};
  std::vector<Node> placeholders;
  placeholders.reserve(trace.inputs.size());
  call.inputs.reserve(trace.inputs.size() + trace.captures.size());
  for (size_t i = 0; i < trace.inputs.size(); ++i) {
    const SavedTensorSpec& spec = trace.inputs[i];
    const std::optional<DType> dtype = DTypeFromTfDataType(spec.tf_dtype);
    if (!dtype) {
      throw UnimplementedError(
          StrCat(where, ": input ", DescribeSpec(spec), " has a dtype eager does not have"));
    }
    Node p{.name = StrCat(base, "/input_", i), .op = "Placeholder"};
    p.attrs.Set("dtype", *dtype);
    if (!spec.shape.unknown_rank) p.attrs.Set("shape", Shape::Partial(spec.shape.dims));
    call.inputs.push_back(p.name);
    placeholders.push_back(std::move(p));
  }
  for (const std::string& handle : trace.captures) call.inputs.push_back(handle);
  std::vector<DType> tout;
  tout.reserve(f->outputs.size());
  for (const FunctionArg& out : f->outputs) {
    const std::optional<DType> d = DTypeFromTfDataType(out.tf_type);
    if (!d) {
      throw UnimplementedError(StrCat(where, ": output '", out.name, "' is a ",
                                      TfDataTypeName(out.tf_type),
                                      ", which eager does not return"));
    }
    tout.push_back(*d);
  }
  call.attrs.Set("f", trace.name);
  call.attrs.Set("Tout", tout);
  for (Node& p : placeholders) graph_->AddNode(std::move(p));
  graph_->AddNode(std::move(call));
  return {feeds, fetches};
}

}  // namespace eager
