// ImportMetaGraph on a graph that really has no variables, as TF1's
// tf.compat.v1.train.import_meta_graph (training/saver.py,
// _create_saver_from_imported_meta_graph): without a SaverDef and without
// variables it returns None and logs "Saver not created because there are
// no variables in the graph to restore"; the graph is imported all the same.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/session.h"
#include "runtime/errors.h"
#include "runtime/graph.h"
#include "runtime/names.h"
#include "saving/saver/meta_graph_import_export.h"
#include "saving/saver/saver.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

constexpr const char* kTfWords =
    "Saver not created because there are no variables in the graph to restore";

// x + 2, with no variable: what TF's export_meta_graph writes for such a graph.
std::string WriteVariableFreeMeta(const std::string& dir) {
  Graph graph;
  Graph::AsDefault in(graph);
  const Tensor x = Placeholder(DType::kFloat32, Shape{}, "x");
  (void)Add(x, Tensor(2.0f));
  std::string path = dir + "/no_variables.meta";
  WriteMetaGraph(path, GraphToMetaGraph(graph));
  return path;
}

TEST(ImportMetaGraphNoVariablesTest, ReturnsNullptrAndSaysWhyOnStderrAsTfLogs) {
  ResetDefaultNames();
  const std::string path = WriteVariableFreeMeta(TempDir());
  Graph graph;
  Graph::AsDefault in(graph);
  ::testing::internal::CaptureStderr();
  const std::unique_ptr<Saver> saver = ImportMetaGraph(path);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(saver, nullptr);
  EXPECT_THAT(err, HasSubstr(kTfWords));
  EXPECT_THAT(err, HasSubstr(path));
  // The graph itself is imported and runs.
  Session sess(graph);
  EXPECT_EQ(sess.Run(graph.TensorByName("add:0"), {{graph.TensorByName("x:0"), Tensor(1.5f)}})
                .scalar<float>(),
            3.5f);
}

TEST(ImportMetaGraphNoVariablesTest, RequireSaverMakesItANotFoundErrorAfterImporting) {
  ResetDefaultNames();
  const std::string path = WriteVariableFreeMeta(TempDir());
  Graph graph;
  Graph::AsDefault in(graph);
  try {
    ImportMetaGraph(path, ImportMetaGraphOptions{.require_saver = true});
    ADD_FAILURE() << "expected NotFoundError";
  } catch (const NotFoundError& e) {
    EXPECT_THAT(e.what(), HasSubstr(kTfWords));
    EXPECT_THAT(e.what(), HasSubstr(path));
  }
  EXPECT_NE(graph.FindNode("add"), nullptr);
}

// A graph with a variable but no SaverDef gets TF's default Saver() and no
// message; require_saver changes nothing there.
TEST(ImportMetaGraphNoVariablesTest, AGraphWithVariablesGetsASaverSilently) {
  ResetDefaultNames();
  const std::string dir = TempDir();
  {
    Graph graph;
    Graph::AsDefault in(graph);
    Variable v(1.0f, "v");
    (void)Add(v.value(), Tensor(2.0f));
    WriteMetaGraph(dir + "/with_variable.meta", GraphToMetaGraph(graph));
  }
  ResetDefaultNames();
  Graph graph;
  Graph::AsDefault in(graph);
  ::testing::internal::CaptureStderr();
  const std::unique_ptr<Saver> saver =
      ImportMetaGraph(dir + "/with_variable.meta", ImportMetaGraphOptions{.require_saver = true});
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_NE(saver, nullptr);
  EXPECT_THAT(err, ::testing::Not(HasSubstr(kTfWords)));
}

}  // namespace
}  // namespace eager
