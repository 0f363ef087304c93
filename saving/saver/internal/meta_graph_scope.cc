#include "saving/saver/internal/meta_graph_scope.h"

#include <variant>
#include <vector>

#include "saving/saver/internal/saver_for_imported_graph.h"

namespace eager::internal {
namespace {

constexpr std::string_view kColocationPrefix = "loc:@";

void ScopeTensorInfo(MetaTensorInfo& info, const std::string& scope) {
  info.name = PrependNameScope(info.name, scope);
}

}  // namespace

std::string PrependNameScope(const std::string& name, const std::string& scope) {
  if (scope.empty() || name.empty()) return name;
  if (name[0] == '^') return "^" + scope + "/" + name.substr(1);
  return scope + "/" + name;
}

void ScopeNode(MetaGraphNode& node, const std::string& scope, bool clear_devices) {
  if (clear_devices) node.device.clear();
  if (scope.empty()) return;
  node.name = PrependNameScope(node.name, scope);
  for (std::string& input : node.inputs) input = PrependNameScope(input, scope);
  // Colocation constraints name nodes too (TF's importer rewrites them).
  auto it = node.attrs.find("_class");
  if (it != node.attrs.end() && std::holds_alternative<MetaListBox>(it->second)) {
    for (std::string& s : std::get<MetaListBox>(it->second)->s) {
      if (s.starts_with(kColocationPrefix)) {
        s = std::string(kColocationPrefix) +
            PrependNameScope(s.substr(kColocationPrefix.size()), scope);
      }
    }
  }
}

MetaGraph ScopedMetaGraph(MetaGraph meta, const std::string& scope, bool clear_devices) {
  for (MetaGraphNode& node : meta.nodes) ScopeNode(node, scope, clear_devices);
  if (scope.empty()) return meta;
  if (meta.saver_def) meta.saver_def = ScopedSaverDef(*meta.saver_def, scope);
  for (auto& [key, collection] : meta.collections) {
    if (collection.kind == MetaCollection::Kind::kNodeList) {
      for (std::string& name : collection.node_list) name = PrependNameScope(name, scope);
      continue;
    }
    if (key != "variables" && key != "trainable_variables" && key != "local_variables" &&
        key != "model_variables" && key != "moving_average_variables") {
      continue;
    }
    std::vector<MetaVariableDef> defs = VariableDefsOf(meta, key);
    for (MetaVariableDef& v : defs) {
      for (std::string* name :
           {&v.variable_name, &v.initializer_name, &v.snapshot_name, &v.initial_value_name}) {
        *name = PrependNameScope(*name, scope);
      }
    }
    collection = VariableDefCollection(defs);
  }
  for (auto& [key, signature] : meta.signatures) {
    for (auto& [name, info] : signature.inputs) ScopeTensorInfo(info, scope);
    for (auto& [name, info] : signature.outputs) ScopeTensorInfo(info, scope);
  }
  for (MetaAssetFile& asset : meta.asset_files) ScopeTensorInfo(asset.tensor_info, scope);
  return meta;
}

}  // namespace eager::internal
