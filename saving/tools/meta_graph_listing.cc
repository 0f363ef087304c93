#include "saving/tools/meta_graph_listing.h"

#include <cmath>
#include <filesystem>
#include <set>
#include <type_traits>

#include "runtime/dtype.h"
#include "runtime/errors.h"
#include "saving/saver/saved_model.h"
#include "saving/tools/internal/json_text.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
using internal::JsonNumber;
using internal::JsonString;
using internal::JsonStrings;

// Bytes as a quoted string, cut after 40 characters: attribute strings are
// names ("_class": "loc:@v") or, rarely, serialized blobs.
std::string BytesText(const std::string& s) {
  constexpr size_t kMax = 40;
  std::string shown = s.size() > kMax ? s.substr(0, kMax) + "..." : s;
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '.';
  }
  return "\"" + shown + "\"";
}

std::string ShapeText(const MetaShape& shape) {
  if (shape.unknown_rank) return "<unknown rank>";
  std::string out = "[";
  for (size_t i = 0; i < shape.dims.size(); ++i) {
    if (i > 0) out += ",";
    out += shape.dims[i] < 0 ? "?" : std::to_string(shape.dims[i]);
  }
  return out + "]";
}

std::string TensorText(const MetaTensor& tensor) {
  std::string out = TfDataTypeName(tensor.tf_dtype) + ShapeText(MetaShape{tensor.dims});
  // A scalar constant is worth showing whole; larger ones only by type.
  if (!tensor.value || tensor.value->num_elements() != 1) return out;
  const Tensor& t = *tensor.value;
  return VisitDType(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, std::string>) {
      return out + "{" + BytesText(t.data<T>()[0]) + "}";
    } else if constexpr (std::is_same_v<T, bool>) {
      return out + (t.data<T>()[0] ? "{true}" : "{false}");
    } else if constexpr (std::is_same_v<T, float>) {
      return out + "{" + internal::ShortestNumber(t.data<T>()[0]) + "}";
    } else if constexpr (requires(const T& v) { v.imag(); }) {
      return out + "{" + internal::ShortestNumber(static_cast<double>(t.data<T>()[0].real())) +
             (std::signbit(t.data<T>()[0].imag()) ? "" : "+") +
             internal::ShortestNumber(static_cast<double>(t.data<T>()[0].imag())) + "j}";
    } else {
      return out + "{" + internal::ShortestNumber(static_cast<double>(t.data<T>()[0])) + "}";
    }
  });
}

template <typename T, typename F>
void AppendList(std::string& out, const std::vector<T>& items, F text) {
  for (const T& item : items) {
    if (out.size() > 1) out += ",";
    out += text(item);
  }
}

std::string ListText(const MetaAttrList& list) {
  std::string out = "[";
  AppendList(out, list.s, BytesText);
  AppendList(out, list.i, [](int64_t v) { return std::to_string(v); });
  AppendList(out, list.f, [](float v) { return internal::ShortestNumber(v); });
  AppendList(out, list.b, [](bool v) { return std::string(v ? "true" : "false"); });
  AppendList(out, list.type, TfDataTypeName);
  AppendList(out, list.shape, ShapeText);
  AppendList(out, list.tensor, TensorText);
  AppendList(out, list.func, [](const std::string& f) { return "func " + f; });
  return out + "]";
}

std::string CollectionKind(MetaCollection::Kind kind) {
  switch (kind) {
    case MetaCollection::Kind::kNodeList:
      return "node_list";
    case MetaCollection::Kind::kBytesList:
      return "bytes_list";
    case MetaCollection::Kind::kInt64List:
      return "int64_list";
    case MetaCollection::Kind::kFloatList:
      return "float_list";
    case MetaCollection::Kind::kNone:
      break;
  }
  return "empty";
}

size_t CollectionSize(const MetaCollection& c) {
  return c.node_list.size() + c.bytes_list.size() + c.int64_list.size() + c.float_list.size();
}

// The VariableDefs of the "variables" collection (TF's global variables);
// empty when the collection is absent or holds something else.
std::vector<MetaVariableDef> GlobalVariableDefs(const MetaGraph& meta) {
  try {
    return VariableDefsOf(meta, "variables");
  } catch (const Error&) {
    return {};  // shown as a collection of bytes, not decoded
  }
}

bool IsTrainable(const MetaGraph& meta, const std::string& variable_name) {
  try {
    for (const MetaVariableDef& d : VariableDefsOf(meta, "trainable_variables")) {
      if (d.variable_name == variable_name) return true;
    }
  } catch (const Error&) {
  }
  return false;
}

// The ops MetaInfoDef lists (also those only used inside functions).
std::vector<std::string> StrippedOpNames(const MetaGraph& meta) {
  std::vector<std::string> names;
  for (const MetaOpDef& op : meta.stripped_op_list) names.push_back(op.name);
  return names;
}

std::string Joined(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

// A function argument's type: its DataType, else the attribute that sets it.
std::string ArgType(const FunctionArg& arg) {
  if (arg.tf_type != 0) return TfDataTypeName(arg.tf_type);
  for (const std::string* attr : {&arg.type_attr, &arg.type_list_attr, &arg.number_attr}) {
    if (!attr->empty()) return StrCat("<", *attr, ">");
  }
  return TfDataTypeName(0);
}

std::vector<std::string> ArgTexts(const std::vector<FunctionArg>& args) {
  std::vector<std::string> out;
  out.reserve(args.size());
  for (const FunctionArg& arg : args) out.push_back(StrCat(arg.name, ": ", ArgType(arg)));
  return out;
}

std::string JsonArgs(const std::vector<FunctionArg>& args) {
  std::string out = "[";
  for (size_t i = 0; i < args.size(); ++i) {
    out += StrCat(i ? "," : "", "{\"name\":", JsonString(args[i].name),
                  ",\"dtype\":", JsonString(ArgType(args[i])), "}");
  }
  return out + "]";
}

using SavedFunctionMap = std::map<std::string, std::vector<SavedConcreteFunction>>;

// "(x: float32 [?,3], n: int32 [])"
std::string SpecsText(const std::vector<SavedTensorSpec>& specs) {
  std::vector<std::string> texts;
  texts.reserve(specs.size());
  for (const SavedTensorSpec& spec : specs) texts.push_back(DescribeSpec(spec));
  return StrCat("(", Joined(texts, ", "), ")");
}

std::string JsonSpecs(const std::vector<SavedTensorSpec>& specs) {
  std::string out = "[";
  for (size_t i = 0; i < specs.size(); ++i) {
    out += StrCat(i ? "," : "", "{\"name\":", JsonString(specs[i].name),
                  ",\"dtype\":", JsonString(TfDataTypeName(specs[i].tf_dtype)),
                  ",\"shape\":", JsonString(ShapeText(specs[i].shape)), "}");
  }
  return out + "]";
}

// Graph `index` of `file`; its nodes are printed as they are read.
void PrintText(const MetaGraphFile& file, size_t index, const FunctionLibrary* functions,
               const SavedFunctionMap& object_functions, std::ostream& out) {
  const MetaGraph& meta = file.graph(index);
  out << "MetaGraphDef: tensorflow_version "
      << (meta.tensorflow_version.empty() ? "-" : meta.tensorflow_version) << ", tags ["
      << Joined(meta.tags, ", ") << "]"
      << ", stripped_default_attrs " << (meta.stripped_default_attrs ? "true" : "false") << "\n";
  const std::vector<std::string> types = file.OpTypes(index);
  out << "op types of the nodes (" << types.size() << "): " << Joined(types, ", ") << "\n";
  const std::vector<std::string> stripped = StrippedOpNames(meta);
  out << "stripped_op_list (" << stripped.size() << "): " << Joined(stripped, ", ") << "\n";
  out << "graph: " << file.num_nodes(index) << " nodes, producer " << meta.producer
      << ", min_consumer " << meta.min_consumer << "\n";
  if (meta.saver_def) {
    const MetaSaverDef& s = *meta.saver_def;
    out << "saver: version V" << s.version << ", filename " << s.filename_tensor_name << ", save "
        << s.save_tensor_name << ", restore " << s.restore_op_name << ", max_to_keep "
        << s.max_to_keep << ", sharded " << (s.sharded ? "true" : "false") << "\n";
  } else {
    out << "saver: none\n";
  }
  for (const auto& [name, c] : meta.collections) {
    out << "collection " << name << ": " << CollectionSize(c) << " (" << CollectionKind(c.kind)
        << ")\n";
  }
  for (const auto& [key, signature] : meta.signatures) {
    out << "signature " << key << " ("
        << (signature.method_name.empty() ? "-" : signature.method_name) << ")\n";
    for (const auto* side : {&signature.inputs, &signature.outputs}) {
      for (const auto& [name, info] : *side) {
        out << "  " << (side == &signature.inputs ? "input " : "output ") << name << ": "
            << (info.name.empty() ? "(sparse or composite)" : info.name) << " "
            << TfDataTypeName(info.tf_dtype) << " " << ShapeText(info.shape) << "\n";
      }
    }
  }
  for (const MetaVariableDef& d : GlobalVariableDefs(meta)) {
    out << "variable " << d.variable_name << "  initializer " << d.initializer_name << "  snapshot "
        << d.snapshot_name << (IsTrainable(meta, d.variable_name) ? "  trainable" : "")
        << (d.is_resource ? "  resource" : "") << "\n";
  }
  for (const auto& [path, traces] : object_functions) {
    for (const SavedConcreteFunction& trace : traces) {
      out << "object function " << path << " " << SpecsText(trace.inputs) << " -> "
          << SpecsText(trace.outputs) << "  (" << trace.name << ", " << trace.bound_inputs.size()
          << " captured)\n";
    }
  }
  if (functions != nullptr) {
    out << "functions (" << functions->size() << ")\n";
    for (const std::string& name : functions->Names()) {
      const FunctionDefinition& f = *functions->Find(name);
      out << "function " << name << " (" << Joined(ArgTexts(f.inputs), ", ") << ") -> ("
          << Joined(ArgTexts(f.outputs), ", ") << "), " << f.nodes.size() << " nodes"
          << (f.is_stateful ? ", stateful" : "") << "\n";
    }
  }
  file.ForEachNode(index, [&](MetaGraphNode&& node) {
    out << node.name << "  " << node.op;
    if (!node.inputs.empty()) out << "  <- " << Joined(node.inputs, ", ");
    if (!node.attrs.empty()) {
      out << "  {";
      bool first = true;
      for (const auto& [name, value] : node.attrs) {
        out << (first ? "" : " ") << name << "=" << MetaAttrText(value);
        first = false;
      }
      out << "}";
    }
    out << "\n";
  });
}

void PrintJson(const MetaGraphFile& file, size_t index, const FunctionLibrary* functions,
               const SavedFunctionMap& object_functions, std::ostream& out) {
  const MetaGraph& meta = file.graph(index);
  out << "{\"tensorflow_version\":" << JsonString(meta.tensorflow_version)
      << ",\"tags\":" << JsonStrings(meta.tags)
      << ",\"stripped_default_attrs\":" << (meta.stripped_default_attrs ? "true" : "false")
      << ",\"op_types\":" << JsonStrings(file.OpTypes(index))
      << ",\"stripped_op_list\":" << JsonStrings(StrippedOpNames(meta))
      << ",\"producer\":" << meta.producer << ",\"saver_def\":";
  if (meta.saver_def) {
    const MetaSaverDef& s = *meta.saver_def;
    out << "{\"version\":" << s.version
        << ",\"filename_tensor_name\":" << JsonString(s.filename_tensor_name)
        << ",\"save_tensor_name\":" << JsonString(s.save_tensor_name)
        << ",\"restore_op_name\":" << JsonString(s.restore_op_name)
        << ",\"max_to_keep\":" << s.max_to_keep << ",\"sharded\":" << (s.sharded ? "true" : "false")
        << ",\"keep_checkpoint_every_n_hours\":" << JsonNumber(s.keep_checkpoint_every_n_hours)
        << "}";
  } else {
    out << "null";
  }
  out << ",\"collections\":{";
  bool first = true;
  for (const auto& [name, c] : meta.collections) {
    out << (first ? "" : ",") << JsonString(name)
        << ":{\"kind\":" << JsonString(CollectionKind(c.kind)) << ",\"size\":" << CollectionSize(c)
        << "}";
    first = false;
  }
  out << "},\"signatures\":{";
  first = true;
  for (const auto& [key, signature] : meta.signatures) {
    out << (first ? "" : ",") << JsonString(key)
        << ":{\"method_name\":" << JsonString(signature.method_name);
    for (const auto* side : {&signature.inputs, &signature.outputs}) {
      out << (side == &signature.inputs ? ",\"inputs\":{" : ",\"outputs\":{");
      bool first_tensor = true;
      for (const auto& [name, info] : *side) {
        out << (first_tensor ? "" : ",") << JsonString(name)
            << ":{\"name\":" << JsonString(info.name)
            << ",\"dtype\":" << JsonString(TfDataTypeName(info.tf_dtype))
            << ",\"shape\":" << JsonString(ShapeText(info.shape)) << "}";
        first_tensor = false;
      }
      out << "}";
    }
    out << "}";
    first = false;
  }
  out << "},\"variables\":[";
  first = true;
  for (const MetaVariableDef& d : GlobalVariableDefs(meta)) {
    out << (first ? "" : ",") << "{\"variable_name\":" << JsonString(d.variable_name)
        << ",\"initializer_name\":" << JsonString(d.initializer_name)
        << ",\"snapshot_name\":" << JsonString(d.snapshot_name)
        << ",\"trainable\":" << (IsTrainable(meta, d.variable_name) ? "true" : "false")
        << ",\"is_resource\":" << (d.is_resource ? "true" : "false") << "}";
    first = false;
  }
  out << "],\"object_functions\":[";
  first = true;
  for (const auto& [path, traces] : object_functions) {
    for (const SavedConcreteFunction& trace : traces) {
      out << (first ? "" : ",") << "{\"path\":" << JsonString(path)
          << ",\"function\":" << JsonString(trace.name) << ",\"inputs\":" << JsonSpecs(trace.inputs)
          << ",\"outputs\":" << JsonSpecs(trace.outputs)
          << ",\"captured\":" << trace.bound_inputs.size() << "}";
      first = false;
    }
  }
  out << "],\"functions\":[";
  first = true;
  if (functions != nullptr) {
    for (const std::string& name : functions->Names()) {
      const FunctionDefinition& f = *functions->Find(name);
      out << (first ? "" : ",") << "{\"name\":" << JsonString(name)
          << ",\"inputs\":" << JsonArgs(f.inputs) << ",\"outputs\":" << JsonArgs(f.outputs)
          << ",\"nodes\":" << f.nodes.size()
          << ",\"stateful\":" << (f.is_stateful ? "true" : "false") << "}";
      first = false;
    }
  }
  out << "],\"nodes\":[";
  first = true;
  file.ForEachNode(index, [&](MetaGraphNode&& node) {
    out << (first ? "" : ",") << "{\"name\":" << JsonString(node.name)
        << ",\"op\":" << JsonString(node.op) << ",\"inputs\":" << JsonStrings(node.inputs)
        << ",\"device\":" << JsonString(node.device) << ",\"attrs\":{";
    bool first_attr = true;
    for (const auto& [name, value] : node.attrs) {
      out << (first_attr ? "" : ",") << JsonString(name) << ":" << JsonString(MetaAttrText(value));
      first_attr = false;
    }
    out << "}}";
    first = false;
  });
  out << "]}";
}

const FunctionLibrary* FunctionsOf(const MetaGraphListing& listing, size_t index) {
  return index < listing.functions.size() ? listing.functions[index].get() : nullptr;
}

const SavedFunctionMap& ObjectFunctionsOf(const MetaGraphListing& listing, size_t index) {
  static const SavedFunctionMap kNone;
  return index < listing.object_functions.size() ? listing.object_functions[index] : kNone;
}

}  // namespace

std::string MetaAttrText(const MetaAttrValue& value) {
  struct Visitor {
    std::string operator()(std::monostate) const { return "<unset>"; }
    std::string operator()(const std::string& s) const { return BytesText(s); }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(float f) const { return internal::ShortestNumber(f); }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(const MetaType& t) const { return TfDataTypeName(t.tf_dtype); }
    std::string operator()(const MetaShape& s) const { return ShapeText(s); }
    std::string operator()(const MetaTensor& t) const { return TensorText(t); }
    std::string operator()(const MetaListBox& l) const { return ListText(*l); }
    std::string operator()(const MetaPlaceholder& p) const { return "$" + p.name; }
    std::string operator()(const MetaFunc& f) const { return "func " + f.name; }
  };
  return std::visit(Visitor{}, value);
}

MetaGraphListing ReadMetaGraphListing(const std::string& path) {
  MetaGraphListing listing;
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    listing.file = path;
  } else if (fs::is_regular_file(path + ".meta", ec)) {
    listing.file = path + ".meta";
  } else {
    throw NotFoundError(
        StrCat("No meta graph at ", path, " (neither it nor ", path, ".meta is a file)"));
  }
  const bool saved_model = fs::path(listing.file).filename() == "saved_model.pb";
  listing.graphs.emplace(listing.file, saved_model ? MetaGraphFile::Kind::kSavedModel
                                                   : MetaGraphFile::Kind::kMetaGraphDef);
  for (size_t i = 0; i < listing.graphs->num_graphs(); ++i) {
    // Only a TF 2 SavedModel's calls need the library: a TF 1 file of
    // millions of nodes stays streamed, never read whole.
    listing.functions.push_back(saved_model && listing.graphs->graph(i).has_object_graph
                                    ? ReadSavedModelFunctionLibrary(listing.file, i)
                                    : nullptr);
    listing.object_functions.push_back(
        saved_model ? ReadSavedFunctionSpecs(listing.graphs->graph(i), listing.file)
                    : std::map<std::string, std::vector<SavedConcreteFunction>>{});
  }
  return listing;
}

void PrintMetaGraphListing(const MetaGraphListing& listing, bool json, std::ostream& out) {
  const size_t count = listing.graphs ? listing.graphs->num_graphs() : 0;
  if (json) {
    out << "{\"file\":" << JsonString(listing.file) << ",\"meta_graphs\":[";
    for (size_t i = 0; i < count; ++i) {
      if (i > 0) out << ",";
      PrintJson(*listing.graphs, i, FunctionsOf(listing, i), ObjectFunctionsOf(listing, i), out);
    }
    out << "]}\n";
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    if (count > 1) out << (i ? "\n" : "") << "# meta graph " << i << "\n";
    PrintText(*listing.graphs, i, FunctionsOf(listing, i), ObjectFunctionsOf(listing, i), out);
  }
}

}  // namespace eager
