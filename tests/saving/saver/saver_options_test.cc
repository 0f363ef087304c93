// Saver options and errors as TF1's tf.compat.v1.train.Saver has them (issue
// 26). Each test names the TF behaviour it mirrors: a test of TF's
// tensorflow/python/training/saver_test.py, or TF's saver.py itself.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <limits>

#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/session.h"
#include "runtime/errors.h"
#include "runtime/graph.h"
#include "runtime/names.h"
#include "runtime/variable.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/saver/meta_graph_import_export.h"
#include "saving/saver/saver.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::ListDir;
using testing::TempDir;

class SaverOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetDefaultNames(); }
  void TearDown() override { ResetDefaultNames(); }
};

std::string What(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

Tensor Floats(std::vector<float> values, const Shape& shape) {
  return Tensor::FromVector<float>(std::move(values), shape);
}

// TF saver.py, Saver.save: "Guard against collision between data file and
// checkpoint state file" unless sharded or a step is appended; and
// "'latest_filename' must not contain path components".
TEST_F(SaverOptionsTest, SaveToTheStateFilesPathCollidesAsInTf) {
  const std::string dir = TempDir();
  Variable v(1.0f, "v");
  Saver saver({&v});
  try {
    saver.Save(dir + "/checkpoint");
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'latest_filename' collides with 'save_path': 'checkpoint' "
                                    "and '" +
                                    dir + "/checkpoint'"));
  }
  EXPECT_FALSE(fs::exists(dir + "/checkpoint.index"));
  EXPECT_EQ(saver.Save(dir + "/checkpoint", 3), dir + "/checkpoint-3");  // a step: no collision

  SaverOptions renamed;
  renamed.latest_filename = "state";
  EXPECT_THAT(What([&] { Saver({&v}, renamed).Save(dir + "/state"); }),
              HasSubstr("'latest_filename' collides with 'save_path'"));
  EXPECT_EQ(Saver({&v}, renamed).Save(dir + "/checkpoint"), dir + "/checkpoint");

  SaverOptions sharded;
  sharded.sharded = true;
  const std::string other = TempDir() + "/x";
  EXPECT_EQ(Saver({&v}, sharded).Save(other + "/checkpoint"), other + "/checkpoint");

  SaverOptions nested;
  nested.latest_filename = "a/checkpoint";
  EXPECT_THAT(What([&] { Saver({&v}, nested).Save(dir + "/m"); }),
              HasSubstr("'latest_filename' must not contain path components"));
}

// saver_test.py SaverTest.testSameName: "The same saveable will be restored
// with two names: v0".
TEST_F(SaverOptionsTest, OneVariableUnderTwoKeysUsesTfsWords) {
  Variable v0(Floats({10.0f}, Shape{1}), "v0");
  const std::string message = What([&] { Saver({{"v0", &v0}, {"v0too", &v0}}); });
  EXPECT_THAT(message, HasSubstr("The same saveable will be restored with two names: v0"));
  EXPECT_THAT(message, HasSubstr("'v0' and 'v0too'"));  // eager's detail after TF's words
}

// TF's words for a shape mismatch (Assign, saver_test.py SaverTest.testReshape)
// and a dtype mismatch (RestoreV2: "expected dtype float does not equal
// original dtype double"), wrapped as TF's Saver.restore wraps an
// InvalidArgument ("a mismatch between the current graph and the graph").
TEST_F(SaverOptionsTest, MismatchErrorsStartWithTfsWordsThenEagersDetail) {
  const std::string dir = TempDir();
  {
    Variable b(Tensor::FromVector<double>({1.0, 2.0}, Shape{2}), "b");
    Variable c(Tensor::Zeros(Shape{2, 2}), "c");
    Saver().Save(dir + "/model.ckpt");
  }
  ResetDefaultNames();
  Variable b(Floats({0.0f, 0.0f}, Shape{2}), "b");
  Variable c(Tensor::Zeros(Shape{4}), "c");
  const std::string message = What([&] { Saver().Restore(dir + "/model.ckpt"); });
  EXPECT_THAT(message, HasSubstr("Restoring from checkpoint failed. This is most likely due to a "
                                 "mismatch between the current graph and the graph from the "
                                 "checkpoint."));
  EXPECT_THAT(message, HasSubstr("tensor_name = b; expected dtype float does not equal original "
                                 "dtype double; key b holds float64 [2]"));
  EXPECT_THAT(message, HasSubstr("Assign requires shapes of both tensors to match. lhs shape= [4] "
                                 "rhs shape= [2,2]; key c holds float32 [2,2]"));
  EXPECT_THROW(Saver().Restore(dir + "/model.ckpt"), InvalidArgumentError);
}

// saver_test.py SaverTest.testReshape: reshape=True restores a [2,3]
// checkpoint tensor into a [3,2] variable; without it Assign refuses.
TEST_F(SaverOptionsTest, ReshapeRestoresTheSameElementsUnderTheVariablesShape) {
  const std::string dir = TempDir();
  {
    Variable var(Floats({1, 2, 3, 4, 5, 6}, Shape{2, 3}), "var");
    Saver().Save(dir + "/model.ckpt");
  }
  ResetDefaultNames();
  Variable var(Tensor::Zeros(Shape{3, 2}), "var");
  EXPECT_THAT(What([&] { Saver().Restore(dir + "/model.ckpt"); }),
              HasSubstr("Assign requires shapes of both tensors to match. lhs shape= [3,2] rhs "
                        "shape= [2,3]"));
  SaverOptions reshape;
  reshape.reshape = true;
  Saver({&var}, reshape).Restore(dir + "/model.ckpt");
  EXPECT_EQ(var.value().shape(), (Shape{3, 2}));
  EXPECT_EQ(var.value().ToVector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));

  Variable small(Tensor::Zeros(Shape{5}), "var_small");
  EXPECT_THAT(What([&] {
                Saver({{"var", &small}}, reshape).Restore(dir + "/model.ckpt");
              }),
              HasSubstr("Input to reshape is a tensor with 6 values, but the requested shape "
                        "has 5"));
}

// saver.py Saver.save: with pad_step_number the step is "{:08d}"
// (saver_test.py SaverTest.testSaveWithGlobalStep, pad_step_number=True).
TEST_F(SaverOptionsTest, PadStepNumberZeroPadsTheStepToEightDigits) {
  const std::string dir = TempDir();
  Variable v(1.0f, "v");
  SaverOptions options;
  options.pad_step_number = true;
  Saver saver({&v}, options);
  EXPECT_EQ(saver.Save(dir + "/ckpt", 42), dir + "/ckpt-00000042");
  EXPECT_TRUE(fs::exists(dir + "/ckpt-00000042.index"));
  EXPECT_EQ(ReadCheckpointState(dir)->model_checkpoint_path, dir + "/ckpt-00000042");
  EXPECT_EQ(Saver({&v}).Save(dir + "/plain", 42), dir + "/plain-42");
}

// saver_test.py SaverTest.testAllowEmpty: an empty Saver saves nothing
// (None) and restores nothing; without allow_empty, "No variables to save".
TEST_F(SaverOptionsTest, AllowEmptySavesAndRestoresNothing) {
  const std::string dir = TempDir();
  EXPECT_THAT(What([] { Saver saver; }), HasSubstr("No variables to save"));
  EXPECT_THAT(What([] { Saver(std::vector<Variable*>{}); }), HasSubstr("No variables to save"));
  SaverOptions options;
  options.allow_empty = true;
  Saver saver(options);
  EXPECT_EQ(saver.Save(dir + "/allow_empty"), "");
  EXPECT_TRUE(ListDir(dir).empty());
  saver.Restore(dir + "/allow_empty");  // nothing to restore, no error
}

// saver.py set_last_checkpoints: the given checkpoints get an infinite
// timestamp, so leaving the max_to_keep window never deletes them;
// set_last_checkpoints_with_time keeps their times, and old ones go.
TEST_F(SaverOptionsTest, SetLastCheckpointsKeepsThoseFilesForGood) {
  const std::string dir = TempDir();
  Variable v(1.0f, "v");
  SaverOptions options;
  options.max_to_keep = 2;
  {
    Saver first({&v}, options);
    first.Save(dir + "/a");
    first.Save(dir + "/b");
  }
  Saver saver({&v}, options);  // a restarted program
  saver.SetLastCheckpoints({dir + "/a", dir + "/b"});
  EXPECT_EQ(saver.last_checkpoints(), (std::vector<std::string>{dir + "/a", dir + "/b"}));
  saver.Save(dir + "/c");
  saver.Save(dir + "/d");
  EXPECT_EQ(saver.last_checkpoints(), (std::vector<std::string>{dir + "/c", dir + "/d"}));
  EXPECT_TRUE(fs::exists(dir + "/a.index"));  // kept for good
  EXPECT_TRUE(fs::exists(dir + "/b.index"));

  Saver timed({&v}, options);
  timed.SetLastCheckpointsWithTime({{dir + "/c", 0.0}, {dir + "/d", 0.0}});
  timed.Save(dir + "/e");
  EXPECT_FALSE(fs::exists(dir + "/c.index"));  // an old time: deleted as usual
  EXPECT_TRUE(fs::exists(dir + "/d.index"));
}

// A graph with v1 + v2 = "add", saved by a Saver: the prefix.
std::string SaveSumGraph(const std::string& dir) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable v1(Floats({1.0f}, Shape{1}), "v1");
  Variable v2(Floats({2.0f}, Shape{1}), "v2");
  (void)Add(v1.value(), v2.value());
  Saver saver;
  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  return saver.Save(sess, dir + "/model.ckpt");
}

// saver_test.py MetaGraphTest.testImportIntoNamescope: import_meta_graph
// with import_scope puts the nodes under the scope, and the returned Saver
// restores the file's keys into them; a second import gets "scope_1".
TEST_F(SaverOptionsTest, ImportScopePutsTheGraphUnderAScopeAndRestoresIt) {
  const std::string dir = TempDir();
  const std::string prefix = SaveSumGraph(dir);
  Graph graph;
  Graph::AsDefault in(graph);
  std::unique_ptr<Saver> saver =
      ImportMetaGraph(prefix + ".meta", ImportMetaGraphOptions{.import_scope = "imported"});
  ASSERT_NE(saver, nullptr);
  EXPECT_NE(graph.FindNode("imported/v1"), nullptr);
  EXPECT_EQ(graph.FindNode("v1"), nullptr);
  ASSERT_NE(graph.FindNode("imported/add"), nullptr);
  EXPECT_EQ(graph.FindNode("imported/add")->inputs,
            (std::vector<std::string>{"imported/v1/read", "imported/v2/read"}));
  EXPECT_EQ(saver->saver_def().restore_op_name, "imported/save/restore_all");
  std::vector<std::string> keys;
  for (const auto& [key, v] : saver->variables()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"v1", "v2"}));
  EXPECT_EQ(graph.GlobalVariables().size(), 2u);
  Session sess(graph);
  saver->Restore(sess, prefix);
  EXPECT_EQ(sess.Run("imported/add:0").ToVector<float>(), std::vector<float>{3.0f});

  std::unique_ptr<Saver> again =
      ImportMetaGraph(prefix + ".meta", ImportMetaGraphOptions{.import_scope = "imported"});
  EXPECT_NE(graph.FindNode("imported_1/add"), nullptr);
  again->Restore(sess, prefix);
  EXPECT_EQ(sess.Run("imported_1/add:0").ToVector<float>(), std::vector<float>{3.0f});

  // TF's Saver(saver_def=..., name=import_scope) over the same nodes.
  SaverOptions options;
  options.saver_def = ReadMetaGraph(prefix + ".meta").saver_def;
  options.name = "imported";
  Saver from_def(options);
  EXPECT_EQ(from_def.variables().size(), 2u);
  from_def.Restore(sess, prefix);
  options.saver_def->save_tensor_name.clear();
  EXPECT_THAT(What([&] { Saver bad(options); }),
              HasSubstr("saver_def must specify the save_tensor_name"));
}

// The sum graph's .meta with v1 and v2 placed on two devices.
std::string WriteTwoDeviceMeta(const std::string& dir) {
  const std::string prefix = SaveSumGraph(dir);
  MetaGraph meta = ReadMetaGraph(prefix + ".meta");
  for (MetaGraphNode& node : meta.nodes) {
    if (node.name == "v1") node.device = "/job:localhost/replica:0/task:0/device:CPU:0";
    if (node.name == "v2") node.device = "/job:localhost/replica:0/task:0/device:CPU:1";
  }
  WriteMetaGraph(dir + "/devices.meta", meta);
  return dir + "/devices.meta";
}

// saver_test.py SaveRestoreShardedTest.testBasics: sharded=True writes one
// shard per device (TF's _GroupByDevices, merged by MergeV2Checkpoints into
// one index); TF's reader (tfckpt.py verify) reads it. clear_devices
// (MetaGraphTest.testClearDevices) leaves one device, so one shard.
TEST_F(SaverOptionsTest, ShardedWritesOneShardPerDeviceAndClearDevicesDropsThem) {
  const std::string dir = TempDir();
  const std::string meta_path = WriteTwoDeviceMeta(dir);
  {
    Graph graph;
    Graph::AsDefault in(graph);
    ASSERT_NE(ImportMetaGraph(meta_path), nullptr);
    EXPECT_EQ(graph.FindNode("v1")->device, "/job:localhost/replica:0/task:0/device:CPU:0");
    SaverOptions options;
    options.sharded = true;
    Saver saver(options);
    EXPECT_TRUE(saver.saver_def().sharded);
    // This process has one CPU: as TF, v2's "CPU:1" runs only softly placed.
    EXPECT_THROW(Session(graph).Run(GlobalVariablesInitializer()), InvalidArgumentError);
    Session sess(graph, SessionOptions{.allow_soft_placement = true});
    sess.Run(GlobalVariablesInitializer());
    const std::string prefix = saver.Save(sess, dir + "/sharded/model.ckpt");
    EXPECT_TRUE(fs::exists(prefix + ".data-00000-of-00002"));
    EXPECT_TRUE(fs::exists(prefix + ".data-00001-of-00002"));
    EXPECT_EQ(BundleReader(prefix).num_shards(), 2);
    testing::ExpectVerifies(prefix);
    ResetDefaultNames();
  }
  Graph graph;
  Graph::AsDefault in(graph);
  ASSERT_NE(ImportMetaGraph(meta_path, ImportMetaGraphOptions{.clear_devices = true}), nullptr);
  EXPECT_EQ(graph.FindNode("v1")->device, "");
  SaverOptions options;
  options.sharded = true;
  Saver saver(options);
  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  const std::string prefix = saver.Save(sess, dir + "/cleared/model.ckpt");
  EXPECT_TRUE(fs::exists(prefix + ".data-00000-of-00001"));
  testing::ExpectVerifies(prefix);
}

// TF 0.12 graphs hold the legacy "Variable" op (TF's state_ops.cc: "Use
// VariableV2 instead"), which TF 2.21 still imports and runs. The real
// half_plus_two export of TF 0.12 (its checkpoint is the V1 format, which
// eager does not read): import, run its own initializer, save, import again,
// restore and run y = a * x + b with x fed (a = 0.5, b = 2).
TEST_F(SaverOptionsTest, Tf012GraphWithLegacyVariableOpsImportsRestoresAndRuns) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string meta =
      testing::RealdataDir() + "/legacy_v1_session_bundle_half_plus_two/00000123/export.meta";
  const std::string dir = TempDir();
  std::string prefix;
  {
    Graph graph;
    Graph::AsDefault in(graph);
    std::unique_ptr<Saver> saver = ImportMetaGraph(meta);
    ASSERT_NE(saver, nullptr) << "a TF 0.12 graph's Variable ops are variables";
    std::vector<std::string> keys;
    for (const auto& [key, v] : saver->variables()) keys.push_back(key);
    EXPECT_EQ(keys, (std::vector<std::string>{"a", "b"}));  // what save/restore_all assigns
    EXPECT_TRUE(saver->saver_def().sharded);
    Session sess(graph);
    sess.Run(graph.OperationByName("init"));
    prefix = saver->Save(sess, dir + "/half_plus_two");
    testing::ExpectVerifies(prefix);
  }
  ResetDefaultNames();
  Graph graph;
  Graph::AsDefault in(graph);
  std::unique_ptr<Saver> saver = ImportMetaGraph(meta);
  ASSERT_NE(saver, nullptr);
  Session sess(graph);
  EXPECT_THROW(sess.Run("a:0"), FailedPreconditionError);
  // y without x fed needs ParseExample, which eager lacks: named with its
  // node, in TF's words ("No OpKernel was registered to support Op"), before
  // anything runs (the initializer fetched with it has not assigned a).
  try {
    sess.Run({graph.OperationByName("init"), "y:0"});
    FAIL() << "expected UnimplementedError";
  } catch (const UnimplementedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("No OpKernel was registered to support Op 'ParseExample' "
                                    "used by {{node ParseExample/ParseExample}}"));
    EXPECT_THAT(e.what(), HasSubstr("'ParseExample/ParseExample' (ParseExample)"));
  }
  EXPECT_THROW(sess.Run("a:0"), FailedPreconditionError);
  saver->Restore(sess, prefix);
  EXPECT_EQ(sess.Run("a:0").scalar<float>(), 0.5f);
  const Tensor y = sess.Run("y:0", {{"x:0", Floats({0.0f, 1.0f, 4.0f}, Shape{3, 1})}});
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{2.0f, 2.5f, 4.0f}));
}

}  // namespace
}  // namespace eager
