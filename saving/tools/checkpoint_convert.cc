#include "saving/tools/checkpoint_convert.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "runtime/errors.h"
#include "runtime/shape.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/bundle/posix_file.h"
#include "saving/checkpoint/checkpoint_key.h"
#include "saving/checkpoint/object_graph.h"
#include "saving/tools/keras_file_bundle.h"

namespace eager {
namespace {

using internal::ReadObjectGraph;
using internal::SavedObjectGraph;

constexpr std::string_view kVariableValue = "VARIABLE_VALUE";
constexpr std::string_view kSlotMarker = "/.OPTIMIZER_SLOT/";
const std::string kSaveCounterKey = "save_counter/.ATTRIBUTES/VARIABLE_VALUE";

std::string TypeText(const BundleReader::Entry& e) {
  return (e.dtype ? std::string(DTypeName(*e.dtype)) : TfDataTypeName(e.tf_dtype)) +
         DimsToString(e.dims);
}

bool SameType(const BundleReader::Entry& a, const BundleReader::Entry& b) {
  return a.tf_dtype == b.tf_dtype && a.dims == b.dims;
}

// Splits a scope part into its name and TF's "_N" uniquification number
// ("dense_1" -> {"dense", 1}; "dense" -> {"dense", 0}).
std::pair<std::string, long> SplitUniqueSuffix(const std::string& part) {
  const size_t underscore = part.rfind('_');
  if (underscore == std::string::npos || underscore == 0 || underscore + 1 >= part.size() ||
      part.size() - underscore > 10 ||
      !std::all_of(part.begin() + static_cast<std::ptrdiff_t>(underscore) + 1, part.end(),
                   [](unsigned char c) { return std::isdigit(c); })) {
    return {part, 0};
  }
  return {part.substr(0, underscore), std::stol(part.substr(underscore + 1))};
}

std::vector<std::string> ScopeParts(const std::string& name) {
  std::vector<std::string> parts;
  std::istringstream in(name);
  for (std::string part; std::getline(in, part, '/');) parts.push_back(part);
  return parts;
}

// The uniquification numbers of each scope part: "Adam_1/beta_2" -> {1, 2}.
std::vector<long> UniqueSuffixes(const std::string& name) {
  std::vector<long> numbers;
  for (const std::string& part : ScopeParts(name))
    numbers.push_back(SplitUniqueSuffix(part).second);
  return numbers;
}

// "dense_1/kernel" -> "dense/kernel": each scope part without TF's "_N"
// uniquification suffix.
std::string WithoutUniqueSuffixes(const std::string& name) {
  std::string out;
  for (const std::string& part : ScopeParts(name)) {
    if (!out.empty()) out += '/';
    out += SplitUniqueSuffix(part).first;
  }
  return out;
}

// TF's escaping undone: ".S" -> "/", ".." -> ".".
std::string UnescapeLocalName(const std::string& escaped) {
  std::string out;
  for (size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] == '.' && i + 1 < escaped.size() &&
        (escaped[i + 1] == 'S' || escaped[i + 1] == '.')) {
      out += escaped[i + 1] == 'S' ? '/' : '.';
      ++i;
    } else {
      out += escaped[i];
    }
  }
  return out;
}

void CheckSameType(const BundleReader& source, const std::string& source_key,
                   const BundleReader::Entry& target, const std::string& target_name) {
  const BundleReader::Entry& s = source.GetEntry(source_key);
  if (!SameType(s, target)) {
    throw InvalidArgumentError(StrCat("Cannot convert ", source_key, " (", TypeText(s), ") to ",
                                      target_name, " (", TypeText(target),
                                      "): dtype or shape differs"));
  }
}

void CheckSourceExists(const BundleReader& source, const std::string& key, const std::string& why) {
  if (!source.Contains(key)) {
    throw InvalidArgumentError(StrCat("The mapping names source key ", key, " (", why, "), which ",
                                      ckpt_tool::ShownPrefix(source), " does not have"));
  }
}

void CheckUniqueTargets(const ConversionPlan& plan) {
  std::map<std::string, std::string> seen;
  for (const ConversionStep& step : plan.steps) {
    const auto [it, fresh] = seen.emplace(step.target_key, step.source_key);
    if (!fresh) {
      throw InvalidArgumentError(StrCat("Two tensors would be written as ", step.target_key, ": ",
                                        it->second, " and ", step.source_key,
                                        "; give one of them another name in the mapping"));
    }
  }
}

std::vector<std::string> UnusedSources(const BundleReader& source, const ConversionPlan& plan) {
  std::set<std::string> used;
  for (const ConversionStep& step : plan.steps) used.insert(step.source_key);
  std::vector<std::string> unused;
  for (const std::string& key : source.Keys()) {
    if (key != kObjectGraphKey && !used.contains(key)) unused.push_back(key);
  }
  return unused;
}

// ---- object -> name ----------------------------------------------------------

void PlanToNames(const BundleReader& source, const SavedObjectGraph& graph,
                 const ConvertOptions& options, ConversionPlan& plan) {
  for (const SavedObjectGraph::Node& node : graph.nodes) {
    for (const SavedObjectGraph::Attribute& a : node.attributes) {
      if (!source.Contains(a.checkpoint_key)) continue;  // not saved (has_checkpoint_values false)
      ConversionStep step{a.full_name, a.checkpoint_key, "full_name"};
      for (const std::string& from : {a.checkpoint_key, a.full_name}) {
        if (auto it = options.mapping.find(from); !from.empty() && it != options.mapping.end()) {
          step.target_key = it->second;
          step.rule = "mapping";
          break;
        }
      }
      if (step.target_key.empty()) {
        throw InvalidArgumentError(
            StrCat(ckpt_tool::ShownPrefix(source), ": ", a.checkpoint_key,
                   " has no full_name (the saving program's variable name); give it a name in the "
                   "mapping: \"",
                   a.checkpoint_key, " NAME\""));
      }
      plan.steps.push_back(std::move(step));
    }
  }
}

// ---- name -> object, from a mapping -------------------------------------------

class GraphBuilder {
 public:
  GraphBuilder() { graph_.nodes.emplace_back(); }

  // The node at escaped object path `path` ("" is the root), created with
  // its parents as needed.
  int NodeAt(const std::string& path) {
    if (path.empty()) return 0;
    if (auto it = ids_.find(path); it != ids_.end()) return it->second;
    const size_t slash = path.rfind('/');
    const int parent = NodeAt(slash == std::string::npos ? "" : path.substr(0, slash));
    const int id = static_cast<int>(graph_.nodes.size());
    graph_.nodes.emplace_back();
    graph_.nodes[static_cast<size_t>(parent)].children.push_back(
        {id, UnescapeLocalName(slash == std::string::npos ? path : path.substr(slash + 1))});
    ids_.emplace(path, id);
    return id;
  }

  // Adds variable `full_name` at `target`, an object path or a slot path
  // "VARIABLE/.OPTIMIZER_SLOT/OPTIMIZER/SLOT"; returns its checkpoint key.
  std::string AddVariable(const std::string& target, const std::string& full_name) {
    const size_t marker = target.find(kSlotMarker);
    int node = 0;
    std::string key;
    if (marker == std::string::npos) {
      node = NodeAt(target);
      key = AttributeKey(target, kVariableValue);
    } else {
      const std::string variable = target.substr(0, marker);
      const std::string rest = target.substr(marker + kSlotMarker.size());
      const size_t slash = rest.rfind('/');
      if (variable.empty() || slash == std::string::npos || slash == 0) {
        throw InvalidArgumentError(StrCat("Mapping target ", target,
                                          ": a slot is VARIABLE/.OPTIMIZER_SLOT/OPTIMIZER/SLOT"));
      }
      const std::string optimizer = rest.substr(0, slash);
      const std::string slot = UnescapeLocalName(rest.substr(slash + 1));
      const int original = NodeAt(variable);
      node = static_cast<int>(graph_.nodes.size());
      graph_.nodes.emplace_back();
      graph_.nodes[static_cast<size_t>(NodeAt(optimizer))].slot_variables.push_back(
          {original, slot, node});
      key = AttributeKey(SlotVariablePath(variable, optimizer, slot), kVariableValue);
    }
    auto& attributes = graph_.nodes[static_cast<size_t>(node)].attributes;
    if (!attributes.empty()) {
      throw InvalidArgumentError(StrCat("Mapping target ", target, " is given twice (",
                                        attributes.front().full_name, " and ", full_name, ")"));
    }
    attributes.push_back({std::string(kVariableValue), full_name, key});
    return key;
  }

  const SavedObjectGraph& graph() const { return graph_; }

 private:
  SavedObjectGraph graph_;
  std::map<std::string, int> ids_;
};

void PlanFromMapping(const BundleReader& source, const ConvertOptions& options,
                     ConversionPlan& plan, std::string& graph_bytes) {
  GraphBuilder builder;
  for (const auto& [from, to] : options.mapping) {
    CheckSourceExists(source, from, StrCat("mapped to ", to));
    plan.steps.push_back({builder.AddVariable(to, from), from, "mapping"});
  }
  graph_bytes = internal::SerializeObjectGraph(builder.graph());
}

// ---- name -> object, from a template ------------------------------------------

struct TemplateVariable {
  std::string key;
  std::string full_name;
  int node = 0;
  int slot_of = -1;  // the original variable's node, for slots
  std::string slot_name{};
  std::string source{};  // matched source key
  std::string rule{};
};

class TemplateMatcher {
 public:
  TemplateMatcher(const BundleReader& source, const BundleReader& templ,
                  const SavedObjectGraph& graph, const ConvertOptions& options)
      : source_(source), template_(templ), options_(options) {
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      for (const auto& a : graph.nodes[n].attributes) {
        if (!templ.Contains(a.checkpoint_key)) continue;
        TemplateVariable v;
        v.key = a.checkpoint_key;
        v.full_name = a.full_name;
        v.node = static_cast<int>(n);
        vars_.push_back(std::move(v));
      }
    }
    for (const auto& node : graph.nodes) {
      for (const auto& slot : node.slot_variables) {
        for (TemplateVariable& v : vars_) {
          if (v.node == slot.slot_variable_node_id) {
            v.slot_of = slot.original_variable_node_id;
            v.slot_name = slot.slot_name;
          }
        }
      }
    }
    for (const std::string& key : source.Keys()) {
      if (key != kObjectGraphKey) unused_.insert(key);
    }
  }

  std::vector<TemplateVariable> Match() {
    for (TemplateVariable& v : vars_) ByMapping(v);
    for (TemplateVariable& v : vars_) {
      if (v.slot_of < 0 && v.source.empty()) ByName(v);
    }
    ByNameWithoutSuffixes();
    for (TemplateVariable& v : vars_) {
      if (v.slot_of >= 0 && v.source.empty()) BySlotName(v);
    }
    ByUniqueType();
    return vars_;
  }

 private:
  void Take(TemplateVariable& v, const std::string& source_key, const char* rule) {
    CheckSameType(source_, source_key, template_.GetEntry(v.key),
                  StrCat(v.key, " (", v.full_name, ")"));
    v.source = source_key;
    v.rule = rule;
    unused_.erase(source_key);
  }

  void ByMapping(TemplateVariable& v) {
    for (const std::string& from : {v.full_name, v.key}) {
      if (auto it = options_.mapping.find(from); !from.empty() && it != options_.mapping.end()) {
        CheckSourceExists(source_, it->second, StrCat("mapped to ", from));
        return Take(v, it->second, "mapping");
      }
    }
  }

  void ByName(TemplateVariable& v) {
    if (!v.full_name.empty() && unused_.contains(v.full_name)) Take(v, v.full_name, "same name");
  }

  // Names equal once each scope part's "_N" suffix is dropped, grouped:
  // within a group of n template variables and n source keys (a model built
  // n times, or Adam's beta_1 and beta_2), the k-th by uniquification
  // numbers ("dense" < "dense_1" < "dense_2") takes the k-th.
  void ByNameWithoutSuffixes() {
    std::map<std::string, std::vector<TemplateVariable*>> templates;
    for (TemplateVariable& v : vars_) {
      if (v.slot_of < 0 && v.source.empty() && !v.full_name.empty())
        templates[WithoutUniqueSuffixes(v.full_name)].push_back(&v);
    }
    std::map<std::string, std::vector<std::string>> sources;
    for (const std::string& key : unused_) sources[WithoutUniqueSuffixes(key)].push_back(key);
    for (auto& [canonical, group] : templates) {
      auto it = sources.find(canonical);
      if (it == sources.end() || it->second.size() != group.size()) continue;
      std::vector<std::string>& keys = it->second;
      std::stable_sort(group.begin(), group.end(),
                       [](const TemplateVariable* a, const TemplateVariable* b) {
                         return UniqueSuffixes(a->full_name) < UniqueSuffixes(b->full_name);
                       });
      std::stable_sort(keys.begin(), keys.end(), [](const std::string& a, const std::string& b) {
        return UniqueSuffixes(a) < UniqueSuffixes(b);
      });
      for (size_t i = 0; i < group.size(); ++i) Take(*group[i], keys[i], "name without _N");
    }
  }

  void BySlotName(TemplateVariable& v) {
    const TemplateVariable* original = nullptr;
    for (const TemplateVariable& o : vars_) {
      if (o.node == v.slot_of && o.slot_of < 0) original = &o;
    }
    if (original == nullptr || original->source.empty()) return;
    const std::string& x = original->source;
    std::vector<std::string> names;
    if (v.slot_name == "m") names = {x + "/Adam", "Adam/" + x + "/m"};
    if (v.slot_name == "v") names = {x + "/Adam_1", "Adam/" + x + "/v"};
    names.push_back(x + "/" + v.slot_name);
    for (const std::string& name : names) {
      if (unused_.contains(name)) return Take(v, name, "slot name");
    }
  }

  // Pairs the only unmatched template variable and the only unused source
  // key of one dtype and shape.
  void ByUniqueType() {
    for (TemplateVariable& v : vars_) {
      if (!v.source.empty() || v.key == kSaveCounterKey) continue;
      const BundleReader::Entry& t = template_.GetEntry(v.key);
      int templates = 0;
      for (const TemplateVariable& w : vars_) {
        if (w.source.empty() && w.key != kSaveCounterKey && SameType(template_.GetEntry(w.key), t))
          ++templates;
      }
      std::vector<std::string> sources;
      for (const std::string& key : unused_) {
        if (SameType(source_.GetEntry(key), t)) sources.push_back(key);
      }
      if (templates == 1 && sources.size() == 1) Take(v, sources.front(), "only dtype and shape");
    }
  }

  const BundleReader& source_;
  const BundleReader& template_;
  const ConvertOptions& options_;
  std::vector<TemplateVariable> vars_;
  std::set<std::string> unused_;
};

void PlanFromTemplate(const BundleReader& source, const ConvertOptions& options,
                      ConversionPlan& plan, std::string& graph_bytes) {
  const BundleReader templ(*options.template_prefix);
  const std::optional<SavedObjectGraph> graph = ReadObjectGraph(templ);
  if (!graph) {
    throw InvalidArgumentError(StrCat("Template ", templ.prefix(), " has no ", kObjectGraphKey,
                                      ": a template must be an object-based checkpoint (written "
                                      "by Checkpoint::Write of the model that will restore)"));
  }
  std::string unmatched;
  for (const TemplateVariable& v : TemplateMatcher(source, templ, *graph, options).Match()) {
    if (!v.source.empty()) {
      plan.steps.push_back({v.key, v.source, v.rule});
    } else if (v.key == kSaveCounterKey || options.allow_partial) {
      plan.steps.push_back({v.key, "", "kept from template"});
    } else {
      unmatched +=
          StrCat("\n  ", v.key, " (", v.full_name, ", ", TypeText(templ.GetEntry(v.key)), ")");
    }
  }
  if (!unmatched.empty()) {
    std::string unused;
    for (const std::string& key : UnusedSources(source, plan)) {
      unused += StrCat("\n  ", key, " (", TypeText(source.GetEntry(key)), ")");
    }
    throw InvalidArgumentError(StrCat(
        "No source key in ", ckpt_tool::ShownPrefix(source),
        " matches these variables of the template ", templ.prefix(), ":", unmatched,
        "\nSource keys not used:", unused.empty() ? " none" : unused,
        "\nAdd \"FULL_NAME SOURCE_KEY\" lines to a mapping file, or allow a partial result to "
        "keep the template's values."));
  }
  graph_bytes = templ.Read(kObjectGraphKey).data<std::string>()[0];
}

}  // namespace

ConversionPlan PlanConversion(const std::string& source_prefix, const ConvertOptions& options) {
  const BundleReader source(source_prefix);
  ConversionPlan plan;
  plan.source_prefix = source_prefix;
  plan.template_prefix = options.template_prefix;
  if (const std::optional<SavedObjectGraph> graph = ReadObjectGraph(source)) {
    if (options.template_prefix) {
      throw InvalidArgumentError(StrCat(ckpt_tool::ShownPrefix(source),
                                        " is object-based already; a template is for converting "
                                        "a name-based checkpoint"));
    }
    PlanToNames(source, *graph, options, plan);
  } else {
    plan.to_object_based = true;
    if (options.template_prefix) {
      PlanFromTemplate(source, options, plan, plan.object_graph);
    } else if (!options.mapping.empty()) {
      PlanFromMapping(source, options, plan, plan.object_graph);
    } else {
      throw InvalidArgumentError(StrCat(
          ckpt_tool::ShownPrefix(source),
          " is name-based: converting it to object-based needs a template (an object-based "
          "checkpoint of the model that will restore) or a mapping file (NAME OBJECT_PATH)"));
    }
  }
  std::sort(
      plan.steps.begin(), plan.steps.end(),
      [](const ConversionStep& a, const ConversionStep& b) { return a.target_key < b.target_key; });
  CheckUniqueTargets(plan);
  plan.unused_sources = UnusedSources(source, plan);
  return plan;
}

void WriteConversion(const ConversionPlan& plan, const std::string& target_prefix) {
  const BundleReader source(plan.source_prefix);
  std::optional<BundleReader> templ;
  if (plan.template_prefix) templ.emplace(*plan.template_prefix);
  BundleWriter writer(target_prefix);
  for (const ConversionStep& step : plan.steps) {
    writer.Add(step.target_key, step.source_key.empty() ? templ->Read(step.target_key)
                                                        : source.Read(step.source_key));
  }
  if (plan.to_object_based) writer.Add(kObjectGraphKey, Tensor(plan.object_graph));
  writer.Finish();
}

void PrintConversionPlan(const ConversionPlan& plan, std::ostream& out) {
  out << ckpt_tool::ShownPrefix(plan.source_prefix) << " -> "
      << (plan.to_object_based ? "object-based" : "name-based")
      << (plan.template_prefix ? " (template " + *plan.template_prefix + ")" : "") << ": "
      << plan.steps.size() << " tensors\n";
  for (const ConversionStep& step : plan.steps) {
    out << step.target_key << " <- " << (step.source_key.empty() ? "(template)" : step.source_key)
        << "  (" << step.rule << ")\n";
  }
  for (const std::string& key : plan.unused_sources) out << "unused: " << key << "\n";
}

std::map<std::string, std::string> ReadConversionMapping(const std::string& path) {
  constexpr uint64_t kMaxMappingFileSize = uint64_t{64} << 20;
  std::istringstream in(internal::ReadFileToString(path, kMaxMappingFileSize));
  std::map<std::string, std::string> mapping;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::istringstream fields(line);
    std::string from, to, extra;
    if (!(fields >> from) || from.front() == '#') continue;
    if (!(fields >> to) || (fields >> extra)) {
      throw InvalidArgumentError(
          StrCat(path, ":", number, ": expected \"SOURCE TARGET\", got \"", line, "\""));
    }
    if (!mapping.emplace(from, to).second) {
      throw InvalidArgumentError(StrCat(path, ":", number, ": source ", from, " mapped twice"));
    }
  }
  return mapping;
}

}  // namespace eager
