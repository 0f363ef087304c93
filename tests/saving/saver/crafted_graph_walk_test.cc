// Crafted graph files whose structure a walk follows (issue 37): the walk
// from a SaverDef's restore op through NoOps to the Assigns it groups, and
// from an Assign through Identity nodes to RestoreV2. A 1M-deep chain of
// NoOps overflowed the stack of the recursive walk (200k did, 20k under
// ASan), and a cycle of Identity nodes spun forever. Walks are iterative now,
// and a cycle is an error naming a node of it.

#include <gtest/gtest.h>

#include <string>

#include "runtime/errors.h"
#include "runtime/graph.h"
#include "saving/saver/meta_graph_def.h"
#include "saving/saver/meta_graph_import_export.h"
#include "saving/saver/saved_model.h"
#include "saving/saver/saver.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::TempDir;

// v (VariableV2) restored from RestoreV2 through `assign_value` (an input
// name), grouped by restore_all, the SaverDef's restore op.
MetaGraph SaverGraph() {
  MetaGraph meta;
  meta.tags = {"serve"};
  meta.nodes.push_back({.name = "v",
                        .op = "VariableV2",
                        .attrs = {{"dtype", MetaType{1}}, {"shape", MetaShape{{2}}}}});
  meta.nodes.push_back(
      {.name = "save/Const", .op = "Placeholder", .attrs = {{"dtype", MetaType{7}}}});
  meta.nodes.push_back(
      {.name = "save/names", .op = "Placeholder", .attrs = {{"dtype", MetaType{7}}}});
  MetaSaverDef saver;
  saver.filename_tensor_name = "save/Const:0";
  saver.save_tensor_name = "save/Const:0";
  saver.restore_op_name = "save/restore_all";
  saver.version = 2;
  meta.saver_def = saver;
  return meta;
}

TEST(CraftedGraphWalkTest, MillionDeepNoOpChainUnderTheRestoreOpImports) {
  constexpr int kDepth = 1000000;
  MetaGraph meta = SaverGraph();
  for (int i = 0; i < kDepth; ++i) {
    meta.nodes.push_back({.name = i == 0 ? "save/restore_all" : StrCat("save/n", i),
                          .op = "NoOp",
                          .inputs = {i + 1 < kDepth ? StrCat("^save/n", i + 1) : "^v"}});
  }
  const std::string dir = TempDir();
  WriteMetaGraph(dir + "/chain.meta", meta);
  WriteSavedModel(dir + "/saved_model.pb", {meta});
  {
    Graph graph;
    Graph::AsDefault in(graph);
    // The file's restore op restores nothing (no Assign), so the import's
    // Saver is a new one over v, whose save/restore nodes join the graph in a
    // scope of their own.
    const std::unique_ptr<Saver> saver = ImportMetaGraph(dir + "/chain.meta");
    ASSERT_NE(saver, nullptr);
    const std::string restore_op = saver->saver_def().restore_op_name;
    const std::string scope = restore_op.substr(0, restore_op.find('/') + 1);
    ASSERT_NE(scope, "save/");
    int own = 0;
    for (int i = 0; i < graph.num_nodes(); ++i) own += graph.node(i).name.starts_with(scope);
    EXPECT_GT(own, 0);
    EXPECT_EQ(graph.num_nodes(), kDepth + 3 + own);
  }
  // The walk ends; the restore then finds no variables/ (none were saved).
  try {
    LoadSavedModel(dir, {"serve"});
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a valid checkpoint"), std::string::npos) << e.what();
  }
}

TEST(CraftedGraphWalkTest, NoOpCycleUnderTheRestoreOpIsAnErrorNamingANodeOfIt) {
  MetaGraph meta = SaverGraph();
  meta.nodes.push_back({.name = "save/restore_all", .op = "NoOp", .inputs = {"^save/a"}});
  meta.nodes.push_back({.name = "save/a", .op = "NoOp", .inputs = {"^save/b"}});
  meta.nodes.push_back({.name = "save/b", .op = "NoOp", .inputs = {"^save/a"}});
  const std::string path = TempDir() + "/cycle.meta";
  WriteMetaGraph(path, meta);
  Graph graph;
  Graph::AsDefault in(graph);
  try {
    ImportMetaGraph(path);
    FAIL() << "a cycle imported";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("cycle"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'save/a'"), std::string::npos) << e.what();
  }
}

TEST(CraftedGraphWalkTest, IdentityCycleUnderAnAssignIsAnErrorNamingANodeOfIt) {
  MetaGraph meta = SaverGraph();
  meta.nodes.push_back({.name = "save/restore_all", .op = "NoOp", .inputs = {"^save/Assign"}});
  meta.nodes.push_back({.name = "save/Assign",
                        .op = "Assign",
                        .inputs = {"v", "save/id1"},
                        .attrs = {{"T", MetaType{1}}}});
  meta.nodes.push_back({.name = "save/id1",
                        .op = "Identity",
                        .inputs = {"save/id2"},
                        .attrs = {{"T", MetaType{1}}}});
  meta.nodes.push_back({.name = "save/id2",
                        .op = "Identity",
                        .inputs = {"save/id1"},
                        .attrs = {{"T", MetaType{1}}}});
  const std::string dir = TempDir();
  WriteMetaGraph(dir + "/cycle.meta", meta);
  WriteSavedModel(dir + "/saved_model.pb", {meta});
  {
    Graph graph;
    Graph::AsDefault in(graph);
    try {
      ImportMetaGraph(dir + "/cycle.meta");
      FAIL() << "a cycle imported";
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("cycle"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("'save/id"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(LoadSavedModel(dir, {"serve"}), InvalidArgumentError);
}

}  // namespace
}  // namespace eager
