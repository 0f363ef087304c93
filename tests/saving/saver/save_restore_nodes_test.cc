#include "saving/saver/internal/save_restore_nodes.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/saving/saving_test_util.h"

namespace eager::internal {
namespace {

using ::eager::testing::RealdataDir;

std::vector<std::string> AttrKeys(const MetaGraphNode& node) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : node.attrs) keys.push_back(k);
  return keys;
}

// TF 1.12's Saver under the scope logistic_regression/save/ (hence
// ".../save/save/"), for the one variable logistic_regression/model/theta.
TEST(SaverGraphTest, NodesAreThoseTf112Wrote) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const MetaGraph real =
      ReadMetaGraph(RealdataDir() + "/tf1_saver_handson_bn_partial_adam/my_logreg_model.meta");
  const std::string scope = "logistic_regression/save/save/";
  std::vector<const MetaGraphNode*> expected;
  for (const MetaGraphNode& n : real.nodes) {
    if (n.name.starts_with(scope)) expected.push_back(&n);
  }
  const MetaGraphNode* theta = nullptr;
  for (const MetaGraphNode& n : real.nodes) {
    if (n.name == "logistic_regression/model/theta") theta = &n;
  }
  ASSERT_NE(theta, nullptr);
  MetaGraphNodes ours;
  const MetaSaverDef def =
      AppendSaverNodes(ours, scope,
                       {{"logistic_regression/model/theta", "logistic_regression/model/theta", 1,
                         std::get<MetaShape>(theta->attrs.at("shape")).dims}},
                       5, 10000.0f);
  ASSERT_EQ(ours.size(), expected.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    SCOPED_TRACE(expected[i]->name);
    EXPECT_EQ(ours[i].name, expected[i]->name);
    EXPECT_EQ(ours[i].op, expected[i]->op);
    EXPECT_EQ(ours[i].inputs, expected[i]->inputs);
    EXPECT_EQ(ours[i].device, expected[i]->device);
    EXPECT_EQ(AttrKeys(ours[i]), AttrKeys(*expected[i]));
    for (const char* attr : {"dtypes", "T", "_class", "use_locking", "_output_shapes"}) {
      auto a = ours[i].attrs.find(attr);
      auto b = expected[i]->attrs.find(attr);
      if (a == ours[i].attrs.end() || b == expected[i]->attrs.end()) continue;
      if (const auto* box = std::get_if<MetaListBox>(&a->second)) {
        const MetaAttrList* list = &**box;
        const MetaAttrList& other = *std::get<MetaListBox>(b->second);
        EXPECT_EQ(list->type, other.type) << attr;
        EXPECT_EQ(list->s, other.s) << attr;
        EXPECT_EQ(list->shape, other.shape) << attr;
      } else if (const auto* type = std::get_if<MetaType>(&a->second)) {
        EXPECT_EQ(type->tf_dtype, std::get<MetaType>(b->second).tf_dtype) << attr;
      } else {
        EXPECT_EQ(std::get<bool>(a->second), std::get<bool>(b->second)) << attr;
      }
    }
    auto value = expected[i]->attrs.find("value");
    if (value != expected[i]->attrs.end()) {
      const MetaTensor& a = std::get<MetaTensor>(ours[i].attrs.at("value"));
      const MetaTensor& b = std::get<MetaTensor>(value->second);
      EXPECT_EQ(a.dims, b.dims);
      EXPECT_EQ(a.value->ToVector<std::string>(), b.value->ToVector<std::string>());
    }
  }
  ASSERT_TRUE(real.saver_def);
  EXPECT_EQ(def.filename_tensor_name, real.saver_def->filename_tensor_name);
  EXPECT_EQ(def.save_tensor_name, real.saver_def->save_tensor_name);
  EXPECT_EQ(def.restore_op_name, real.saver_def->restore_op_name);
  EXPECT_EQ(def.max_to_keep, real.saver_def->max_to_keep);
  EXPECT_EQ(def.keep_checkpoint_every_n_hours, real.saver_def->keep_checkpoint_every_n_hours);
  EXPECT_EQ(def.version, real.saver_def->version);
}

TEST(SaverGraphTest, VariablesAreSortedByKeyAndAssignedTheirRestoredOutput) {
  MetaGraphNodes nodes;
  AppendSaverNodes(nodes, "save/", {{"v2", "v2", 1, {1}}, {"v1", "v1", 2, {}}}, 5, 1.0f);
  auto find = [&](const std::string& name) {
    return std::find_if(nodes.begin(), nodes.end(), [&](const auto& n) { return n.name == name; });
  };
  EXPECT_EQ(find("save/SaveV2")->inputs,
            (std::vector<std::string>{"save/Const", "save/SaveV2/tensor_names",
                                      "save/SaveV2/shape_and_slices", "v1", "v2"}));
  EXPECT_EQ(std::get<MetaListBox>(find("save/SaveV2")->attrs.at("dtypes"))->type,
            (std::vector<int>{2, 1}));
  EXPECT_EQ(find("save/Assign_1")->inputs, (std::vector<std::string>{"v2", "save/RestoreV2:1"}));
  EXPECT_EQ(find("save/restore_all")->inputs,
            (std::vector<std::string>{"^save/Assign", "^save/Assign_1"}));
}

}  // namespace
}  // namespace eager::internal
