#include "saving/saver/internal/function_library_reader.h"

#include <limits>
#include <utility>
#include <variant>

#include "runtime/errors.h"
#include "saving/bundle/posix_file.h"
#include "saving/proto/function.pb.h"

namespace eager::internal {
namespace {

namespace pb = ::eager::tfproto;

FunctionArg ToArg(const pb::OpDef::ArgDef& a) {
  return {a.name(), a.type(), a.type_attr(), a.number_attr(), a.type_list_attr()};
}

FunctionDefinition ToFunction(const pb::FunctionDef& p, const std::string& path) {
  FunctionDefinition f;
  const pb::OpDef& sig = p.signature();
  f.name = sig.name();
  for (const auto& a : sig.input_arg()) f.inputs.push_back(ToArg(a));
  for (const auto& a : sig.output_arg()) f.outputs.push_back(ToArg(a));
  f.control_outputs.assign(sig.control_output().begin(), sig.control_output().end());
  f.is_stateful = sig.is_stateful();
  f.ret.insert(p.ret().begin(), p.ret().end());
  f.control_ret.insert(p.control_ret().begin(), p.control_ret().end());
  f.nodes.reserve(static_cast<size_t>(p.node_def_size()));
  const std::string where = StrCat(path, ": function '", f.name, "'");
  for (const pb::NodeDef& n : p.node_def()) {
    MetaGraphNode m = MetaGraphNodeFromProto(n, where);
    for (const auto& [name, value] : m.attrs) {
      if (const auto* placeholder = std::get_if<MetaPlaceholder>(&value)) {
        throw UnimplementedError(StrCat(where, ", node '", m.name, "': attribute '", name,
                                        "' is the placeholder '$", placeholder->name,
                                        "' of a polymorphic function; eager runs concrete "
                                        "functions only"));
      }
    }
    f.nodes.push_back(GraphNodeFromMeta(std::move(m)));
  }
  return f;
}

}  // namespace

std::shared_ptr<FunctionLibrary> ReadSavedModelFunctions(const std::string& path, size_t index) {
  const std::string bytes = ReadFileToString(path, std::numeric_limits<int32_t>::max());
  pb::SavedModelLibraryOnly saved;
  if (!saved.ParseFromString(bytes)) {
    throw DataLossError(StrCat(path, ": not a SavedModel (its function library does not parse)"));
  }
  if (index >= static_cast<size_t>(saved.meta_graphs_size())) return nullptr;
  const pb::FunctionDefLibrary& library =
      saved.meta_graphs(static_cast<int>(index)).graph_def().library();
  if (library.function_size() == 0) return nullptr;
  auto out = std::make_shared<FunctionLibrary>();
  for (const pb::FunctionDef& f : library.function()) out->Add(ToFunction(f, path));
  return out;
}

std::shared_ptr<FunctionLibrary> ReadMetaGraphFunctions(const std::string& path) {
  const std::string bytes = ReadFileToString(path, std::numeric_limits<int32_t>::max());
  pb::MetaGraphDefLibraryOnly meta;
  if (!meta.ParseFromString(bytes)) {
    throw DataLossError(StrCat(path, ": not a MetaGraphDef (its function library does not parse)"));
  }
  const pb::FunctionDefLibrary& library = meta.graph_def().library();
  if (library.function_size() == 0) return nullptr;
  auto out = std::make_shared<FunctionLibrary>();
  for (const pb::FunctionDef& f : library.function()) out->Add(ToFunction(f, path));
  return out;
}

}  // namespace eager::internal
