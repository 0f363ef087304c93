#include "saving/saver/internal/save_restore_nodes.h"

#include <algorithm>

#include "runtime/errors.h"
#include "runtime/tensor.h"

namespace eager::internal {
namespace {

constexpr int kDtString = 7;
constexpr const char* kCpu = "/device:CPU:0";

MetaAttrValue Shapes(std::vector<MetaShape> shapes) {
  MetaAttrList list;
  list.shape = std::move(shapes);
  return list;
}

MetaAttrValue Strings(std::vector<std::string> values) {
  MetaAttrList list;
  list.s = std::move(values);
  return list;
}

MetaGraphNode StringConst(const std::string& name, const std::vector<std::string>& values,
                          bool vector, const std::string& device) {
  const auto n = static_cast<int64_t>(values.size());
  const Shape shape = vector ? Shape{n} : Shape{};
  MetaTensor value{kDtString, shape.ToVector(), Tensor::FromVector<std::string>(values, shape)};
  return {name,
          "Const",
          {},
          device,
          {{"dtype", MetaType{kDtString}},
           {"value", std::move(value)},
           {"_output_shapes", Shapes({MetaShape{shape.ToVector(), false}})}}};
}

}  // namespace

MetaSaverDef AppendSaverNodes(MetaGraphNodes& nodes, const std::string& scope,
                              std::vector<SaverGraphVariable> variables, int max_to_keep,
                              float keep_checkpoint_every_n_hours) {
  std::sort(variables.begin(), variables.end(),
            [](const auto& a, const auto& b) { return a.key < b.key; });
  std::vector<std::string> keys, slices;
  MetaAttrList dtypes;
  for (const auto& v : variables) {
    keys.push_back(v.key);
    slices.emplace_back();
    dtypes.type.push_back(v.tf_dtype);
  }
  const std::string filename = scope + "Const";
  nodes.push_back(StringConst(filename, {"model"}, false, ""));

  nodes.push_back(StringConst(scope + "SaveV2/tensor_names", keys, true, ""));
  nodes.push_back(StringConst(scope + "SaveV2/shape_and_slices", slices, true, ""));
  MetaGraphNode save{scope + "SaveV2",
                     "SaveV2",
                     {filename, scope + "SaveV2/tensor_names", scope + "SaveV2/shape_and_slices"},
                     "",
                     {{"dtypes", dtypes}}};
  for (const auto& v : variables) save.inputs.push_back(v.node);
  nodes.push_back(std::move(save));
  nodes.push_back({scope + "control_dependency",
                   "Identity",
                   {filename, StrCat("^", scope, "SaveV2")},
                   "",
                   {{"T", MetaType{kDtString}},
                    {"_class", Strings({StrCat("loc:@", filename)})},
                    {"_output_shapes", Shapes({MetaShape{}})}}});

  nodes.push_back(StringConst(scope + "RestoreV2/tensor_names", keys, true, kCpu));
  nodes.push_back(StringConst(scope + "RestoreV2/shape_and_slices", slices, true, kCpu));
  std::vector<MetaShape> unknown(variables.size(), MetaShape{{}, true});
  nodes.push_back(
      {scope + "RestoreV2",
       "RestoreV2",
       {filename, scope + "RestoreV2/tensor_names", scope + "RestoreV2/shape_and_slices"},
       kCpu,
       {{"dtypes", dtypes}, {"_output_shapes", Shapes(unknown)}}});
  MetaGraphNode restore_all{scope + "restore_all", "NoOp", {}, "", {}};
  for (size_t i = 0; i < variables.size(); ++i) {
    const auto& v = variables[i];
    const std::string name = i == 0 ? StrCat(scope, "Assign") : StrCat(scope, "Assign_", i);
    const std::string restored =
        i == 0 ? StrCat(scope, "RestoreV2") : StrCat(scope, "RestoreV2:", i);
    nodes.push_back({name,
                     "Assign",
                     {v.node, restored},
                     "",
                     {{"T", MetaType{v.tf_dtype}},
                      {"_class", Strings({StrCat("loc:@", v.node)})},
                      {"use_locking", true},
                      {"validate_shape", true},
                      {"_output_shapes", Shapes({MetaShape{v.dims, false}})}}});
    restore_all.inputs.push_back(StrCat("^", name));
  }
  nodes.push_back(std::move(restore_all));

  MetaSaverDef def;
  def.filename_tensor_name = filename + ":0";
  def.save_tensor_name = scope + "control_dependency:0";
  def.restore_op_name = scope + "restore_all";
  def.max_to_keep = max_to_keep;
  def.sharded = false;
  def.keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours;
  def.version = 2;
  return def;
}

}  // namespace eager::internal
