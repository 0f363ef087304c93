// A SavedModel export that a kill cannot leave half-written (issue 37 point
// 8): a forked child exports to BASE/1 and is SIGKILLed just before its Nth
// file-changing system call (internal::SetFileStepHook), for every N until
// the export completes. After each kill BASE holds no "1" (no version a
// server watching BASE could load half of) or a "1" that loads whole; the
// next export takes version 1 again and removes the killed one's staging.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "ops/graph_ops.h"
#include "ops/matmul.h"
#include "ops/operators.h"
#include "ops/session.h"
#include "runtime/names.h"
#include "runtime/variable.h"
#include "saving/saver/saved_model.h"
#include "tests/saving/bundle/interrupted_save.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
using ::eager::testing::ListDir;
using ::eager::testing::RunKilledAt;
using ::eager::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Exports y = x @ w + b to `dir` (w = [2, -1], b = 0.25).
void ExportSmallModel(const std::string& dir) {
  Graph graph;
  Graph::AsDefault in(graph);
  Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1, 2}), "x");
  Variable w(Tensor::FromVector<float>({2.0f, -1.0f}, Shape({2, 1})), "w");
  Variable b(0.25f, "b");
  Tensor y = MatMul(x, w.value()) + b.value();
  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  SavedModelBuilder builder(dir);
  builder.AddMetaGraphAndVariables(sess, {"serve"},
                                   {{"serving_default", {{{"x", x}}, {{"y", y}}}}});
  builder.Save();
}

void ExpectLoadsWhole(const std::string& dir) {
  ResetDefaultNames();
  SavedModelBundle model = LoadSavedModel(dir, {"serve"});
  Session sess(model.graph());
  const Tensor x = Tensor::FromVector<float>({1.0f, 1.0f}, Shape({1, 2}));
  EXPECT_THAT(model.Run(sess, "serving_default", {{"x", x}}).at("y").data<float>(),
              ElementsAre(1.25f));
}

TEST(SavedModelKillTest, AKilledExportLeavesNoVersionAndTheNextTakesItsNumber) {
  const std::string base = TempDir() + "/saved_model_kill";
  int kills = 0;
  for (int at = 1;; ++at) {
    fs::remove_all(base);
    fs::create_directories(base);
    ResetDefaultNames();
    const bool killed = RunKilledAt(at, [&] { ExportSmallModel(base + "/1"); });
    if (!killed) {
      EXPECT_THAT(ListDir(base), ElementsAre("1")) << "after a completed export";
      ExpectLoadsWhole(base + "/1");
      break;
    }
    ++kills;
    // What a server watching BASE sees: no numbered version, or a whole one.
    for (const std::string& name : ListDir(base)) {
      if (name == "1") {
        EXPECT_TRUE(fs::exists(base + "/1/saved_model.pb")) << "killed at step " << at;
        ExpectLoadsWhole(base + "/1");
      } else {
        EXPECT_THAT(name, HasSubstr(".1.export-tmp-")) << "killed at step " << at;
      }
    }
    if (fs::exists(base + "/1")) continue;  // killed after the rename: published
    // The next export reuses version 1 and clears the dead process's staging.
    ResetDefaultNames();
    ExportSmallModel(base + "/1");
    EXPECT_THAT(ListDir(base), ElementsAre("1")) << "killed at step " << at;
    ExpectLoadsWhole(base + "/1");
  }
  // Variables (temp, write, sync, rename, ...), saved_model.pb, the syncs and
  // the rename: a dozen steps at least, each killed once.
  EXPECT_GE(kills, 10);
}

TEST(SavedModelKillTest, AFailedExportLeavesNothingAndAFilledDirectoryIsRefused) {
  const std::string base = TempDir() + "/saved_model_failed";
  fs::remove_all(base);
  {
    SavedModelBuilder builder(base + "/1");
    EXPECT_THROW(builder.Save(), FailedPreconditionError);  // no meta graph
  }
  EXPECT_TRUE(ListDir(base).empty()) << "the abandoned builder's staging stays";
  // An empty directory (made by hand) is taken; a filled one is refused.
  fs::create_directories(base + "/1");
  ExportSmallModel(base + "/1");
  ExpectLoadsWhole(base + "/1");
  fs::create_directories(base + "/2/assets");
  try {
    SavedModelBuilder builder(base + "/2");
    FAIL() << "a non-empty export directory was taken";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr(base + "/2"));
    EXPECT_THAT(e.what(), HasSubstr("isn't empty"));
  }
  // Another exporter filling the directory between construction and Save:
  // the rename refuses, naming it, and the staging is removed.
  {
    ResetDefaultNames();
    Graph graph;
    Graph::AsDefault in(graph);
    Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1, 1}), "x");
    Session sess(graph);
    SavedModelBuilder builder(base + "/3");
    builder.AddMetaGraphAndVariables(sess, {"serve"},
                                     {{"serving_default", {{{"x", x}}, {{"y", x}}}}});
    fs::create_directories(base + "/3/variables");
    try {
      builder.Save();
      FAIL() << "the export replaced a filled directory";
    } catch (const FailedPreconditionError& e) {
      EXPECT_THAT(e.what(), HasSubstr(base + "/3"));
    }
  }
  EXPECT_THAT(ListDir(base), ElementsAre("1", "2", "3"));
  EXPECT_FALSE(fs::exists(base + "/3/saved_model.pb"));
}

}  // namespace
}  // namespace eager
