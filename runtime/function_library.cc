#include "runtime/function_library.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "runtime/errors.h"
#include "runtime/op_signature.h"

namespace eager {

void FunctionLibrary::Add(FunctionDefinition function) {
  if (function.name.empty()) throw InvalidArgumentError("FunctionLibrary: a function has no name");
  if (functions_.contains(function.name)) {
    throw InvalidArgumentError(
        StrCat("FunctionLibrary: the library defines function '", function.name, "' twice"));
  }
  std::string name = function.name;
  functions_.emplace(std::move(name), std::move(function));
}

const FunctionDefinition* FunctionLibrary::Find(std::string_view name) const {
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : &it->second;
}

const FunctionDefinition& FunctionLibrary::Get(std::string_view name,
                                               std::string_view caller) const {
  if (const FunctionDefinition* f = Find(name)) return *f;
  std::string known;
  size_t shown = 0;
  for (const auto& [n, f] : functions_) {
    if (shown++ == 8) {
      known += ", ...";
      break;
    }
    known += StrCat(known.empty() ? "" : ", ", "'", n, "'");
  }
  throw NotFoundError(StrCat("node '", caller, "' calls function '", name,
                             "', which the graph's function library lacks (it has ",
                             functions_.size(), " functions", known.empty() ? "" : ": ", known,
                             ")"));
}

std::vector<std::string> FunctionLibrary::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, f] : functions_) names.push_back(name);
  return names;
}

namespace {

// One body being instantiated: its argument and node names, and how a
// body-notation tensor name becomes a graph one.
class Instantiation {
 public:
  Instantiation(const FunctionDefinition& f, const FunctionLibrary* library)
      : f_(f), library_(library) {
    for (size_t i = 0; i < f.inputs.size(); ++i) {
      if (!args_.emplace(f.inputs[i].name, i).second) {
        throw InvalidArgumentError(
            StrCat(Where(f.inputs[i].name), ": two input arguments have that name"));
      }
    }
    for (const Node& n : f.nodes) {
      if (args_.contains(n.name)) {
        throw InvalidArgumentError(
            StrCat(Where(n.name), ": a body node has the name of an input argument"));
      }
      if (!nodes_.emplace(n.name, &n).second) {
        throw InvalidArgumentError(StrCat(Where(n.name), ": two body nodes have that name"));
      }
    }
  }

  std::string Where(std::string_view node) const {
    return StrCat("function '", f_.name, "', node '", node, "'");
  }

  // "x" (an argument) -> "x"; "n:out:i" -> "n:k"; "^n" -> "^n".
  std::string Translate(const std::string& input, std::string_view consumer) const {
    const auto bad = [&](std::string_view why) {
      return InvalidArgumentError(
          StrCat(Where(consumer), ": input '", input, "' ", why, " (a function body names ",
                 "an input argument 'x' or an output 'node:out_arg:index')"));
    };
    if (input.starts_with('^')) {
      const std::string_view name = std::string_view(input).substr(1);
      if (!args_.contains(name) && !nodes_.contains(name)) throw bad("names no node");
      return input;
    }
    const size_t first = input.find(':');
    if (first == std::string::npos) {
      if (args_.contains(input) || nodes_.contains(input)) return input;
      throw bad("names no input argument or node");
    }
    const std::string_view node = std::string_view(input).substr(0, first);
    const std::string_view rest = std::string_view(input).substr(first + 1);
    const size_t second = rest.find(':');
    if (second == std::string_view::npos) {  // graph notation "n:1", as TF accepts too
      if (!args_.contains(node) && !nodes_.contains(node)) throw bad("names no node");
      return input;
    }
    auto it = nodes_.find(node);
    if (it == nodes_.end()) throw bad("names no body node");
    const std::string_view out_arg = rest.substr(0, second);
    const std::string_view index_text = rest.substr(second + 1);
    int64_t index = 0;
    for (char c : index_text) {
      if (c < '0' || c > '9' || index > (int64_t{1} << 30)) throw bad("has a bad index");
      index = index * 10 + (c - '0');
    }
    if (index_text.empty()) throw bad("has a bad index");
    const std::optional<int64_t> offset = OutputOffset(*it->second, out_arg, index);
    if (!offset)
      throw bad(StrCat("names an output '", out_arg, "' that op ", it->second->op,
                       " of that node does not have at that index"));
    return NodeInputName(node, static_cast<int>(*offset));
  }

 private:
  // The flat index of entry `index` of output argument `out_arg` of `node`.
  std::optional<int64_t> OutputOffset(const Node& node, std::string_view out_arg,
                                      int64_t index) const {
    if (const FunctionDefinition* callee = library_ ? library_->Find(node.op) : nullptr) {
      for (size_t i = 0; i < callee->outputs.size(); ++i) {
        if (callee->outputs[i].name == out_arg && index == 0) return static_cast<int64_t>(i);
      }
      return std::nullopt;
    }
    const OpSignature* sig = FindOpSignature(node.op);
    if (sig == nullptr) {
      throw UnimplementedError(
          StrCat(Where(node.name), " has op type '", node.op, "', which eager does not implement"));
    }
    int64_t offset = 0;
    for (const OpArgSignature& arg : sig->outputs) {
      int64_t size = 1;
      if (!arg.number_attr.empty()) {
        const int64_t* n = AttrAs<int64_t>(node.FindAttr(arg.number_attr));
        if (n == nullptr) return std::nullopt;
        size = *n;
      } else if (!arg.type_list_attr.empty()) {
        const std::optional<int64_t> n = ListSize(node, *sig, arg.type_list_attr);
        if (!n) return std::nullopt;
        size = *n;
      }
      if (arg.name == out_arg) {
        if (index >= size) return std::nullopt;
        return offset + index;
      }
      offset += size;
    }
    return std::nullopt;
  }

 public:
  // The length of list(type) attribute `attr` of `node`. An importer drops
  // one that holds DT_RESOURCE (eager has no DType for a handle); then a
  // While's T has one entry per data input, and a call's Tout (an If's) one
  // per output of its function (then_branch's, a Case's first branch's).
  std::optional<int64_t> ListSize(const Node& node, const OpSignature& sig,
                                  const std::string& attr) const {
    if (const auto* list = AttrAs<std::vector<DType>>(node.FindAttr(attr))) {
      return static_cast<int64_t>(list->size());
    }
    for (const OpArgSignature& in : sig.inputs) {
      if (in.type_list_attr == attr && sig.inputs.size() == 1) {
        return static_cast<int64_t>(
            std::count_if(node.inputs.begin(), node.inputs.end(),
                          [](const std::string& i) { return !i.starts_with('^'); }));
      }
    }
    for (const char* f : {"f", "then_branch"}) {
      const std::string* name = AttrAs<std::string>(node.FindAttr(f));
      const FunctionDefinition* callee =
          name == nullptr || library_ == nullptr ? nullptr : library_->Find(*name);
      if (callee != nullptr) return static_cast<int64_t>(callee->outputs.size());
    }
    // A Case's: its first branch's (all return Tout).
    const auto* branches = AttrAs<std::vector<std::string>>(node.FindAttr("branches"));
    if (branches != nullptr && !branches->empty() && library_ != nullptr) {
      if (const FunctionDefinition* callee = library_->Find(branches->front())) {
        return static_cast<int64_t>(callee->outputs.size());
      }
    }
    return std::nullopt;
  }

 private:
  const FunctionDefinition& f_;
  const FunctionLibrary* library_;
  std::map<std::string_view, size_t> args_;
  std::map<std::string_view, const Node*> nodes_;
};

}  // namespace

FunctionBody InstantiateFunction(const FunctionDefinition& f,
                                 std::shared_ptr<const FunctionLibrary> library) {
  const Instantiation in(f, library.get());
  FunctionBody body;
  body.graph = std::make_unique<Graph>();
  Graph& graph = *body.graph;
  for (size_t i = 0; i < f.inputs.size(); ++i) {
    const FunctionArg& arg = f.inputs[i];
    if (arg.tf_type == 0) {
      throw UnimplementedError(StrCat("function '", f.name, "': input argument '", arg.name,
                                      "' has a type from attribute '", arg.type_attr,
                                      arg.type_list_attr,
                                      "'; eager runs concrete functions (fixed types) only"));
    }
    Node node{.name = arg.name, .op = "_Arg"};
    node.attrs.Set("index", static_cast<int64_t>(i));
    const std::optional<DType> dtype = DTypeFromTfDataType(arg.tf_type);
    if (dtype) node.attrs.Set("T", *dtype);
    // A resource handle has no DType; like VarHandleOp's, its spec says float.
    node.output_specs = {OutputSpec{Shape::UnknownRank(), dtype.value_or(DType::kFloat32)}};
    graph.AddNode(std::move(node));
  }
  for (const Node& n : f.nodes) {
    Node node = n;
    for (std::string& input : node.inputs) input = in.Translate(input, n.name);
    // A node whose op type is a library function calls it (TF's direct call).
    if (const FunctionDefinition* callee = library ? library->Find(n.op) : nullptr) {
      node.op = callee->is_stateful ? "StatefulPartitionedCall" : "PartitionedCall";
      node.attrs.Set("f", callee->name);
      node.output_specs.clear();
      for (const FunctionArg& out : callee->outputs) {
        node.output_specs.push_back(
            {Shape::UnknownRank(), DTypeFromTfDataType(out.tf_type).value_or(DType::kFloat32)});
      }
    }
    // Outputs the importer could not count (a type list holding handles)
    // get specs too, so that fetches by name find them.
    if (const OpSignature* sig = FindOpSignature(node.op);
        sig != nullptr && sig->outputs.size() == 1 && !sig->outputs[0].type_list_attr.empty()) {
      const std::optional<int64_t> n = in.ListSize(node, *sig, sig->outputs[0].type_list_attr);
      while (n && static_cast<int64_t>(node.output_specs.size()) < *n) {
        node.output_specs.push_back({Shape::UnknownRank(), DType::kFloat32});
      }
    }
    graph.AddNode(std::move(node));
  }
  for (const FunctionArg& out : f.outputs) {
    auto it = f.ret.find(out.name);
    if (it == f.ret.end()) {
      throw InvalidArgumentError(
          StrCat("function '", f.name, "': output argument '", out.name, "' has no entry in ret"));
    }
    std::string name = in.Translate(it->second, StrCat("ret ", out.name));
    if (name.starts_with('^')) {
      throw InvalidArgumentError(
          StrCat("function '", f.name, "': ret '", out.name, "' is a control input"));
    }
    if (name.find(':') == std::string::npos) name += ":0";
    body.outputs.push_back(std::move(name));
  }
  for (const std::string& control : f.control_outputs) {
    auto it = f.control_ret.find(control);
    const std::string& node = it == f.control_ret.end() ? control : it->second;
    if (graph.FindNode(node) == nullptr) {
      throw InvalidArgumentError(StrCat("function '", f.name, "': control output '", control,
                                        "' names no body node ('", node, "')"));
    }
    body.control_outputs.push_back(node);
  }
  graph.SetFunctionLibrary(std::move(library));
  return body;
}

}  // namespace eager
