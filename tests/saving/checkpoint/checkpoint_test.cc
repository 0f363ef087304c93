#include "saving/checkpoint/checkpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "autodiff/adam.h"
#include "autodiff/dense.h"
#include "autodiff/exponential_moving_average.h"
#include "autodiff/module.h"
#include "runtime/errors.h"
#include "runtime/names.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/checkpoint/checkpoint_key.h"
#include "saving/checkpoint/object_graph.h"
#include "tests/saving/checkpoint/checkpoint_test_model.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::ExpectSameValue;
using ::eager::testing::Input;
using ::eager::testing::MyModel;
using ::eager::testing::ReadFile;
using ::eager::testing::RunTfckpt;
using ::eager::testing::TempDir;
using ::eager::testing::TfckptVerify;
using ::eager::testing::TrainStep;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

internal::SavedObjectGraph GraphOf(const std::string& prefix) {
  BundleReader reader(prefix);
  return internal::ParseObjectGraph(reader.Read(kObjectGraphKey).scalar<std::string>(), prefix);
}

TEST(CheckpointKeyTest, EscapesAsTensorFlow) {
  EXPECT_EQ(EscapeLocalName("de/n.se"), "de.Sn..se");
  EXPECT_EQ(ObjectPath({"model", "dense", "kernel"}), "model/dense/kernel");
  EXPECT_EQ(AttributeKey("model/dense/kernel", "VARIABLE_VALUE"),
            "model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE");
  EXPECT_EQ(SlotVariablePath("model/dense/kernel", "optimizer", "m"),
            "model/dense/kernel/.OPTIMIZER_SLOT/optimizer/m");
  EXPECT_EQ(PrettyObjectName({"model", "dense", "kernel"}), "(root).model.dense.kernel");
}

TEST(CheckpointTest, SaveWritesTensorFlowsKeysObjectGraphAndStateFile) {
  const std::string dir = TempDir();
  ResetDefaultNames();  // as in a fresh process: the counter is "save_counter", not
                        // "save_counter_1"
  MyModel model;
  Adam optimizer;
  TrainStep(model, optimizer, Input());
  Checkpoint checkpoint({{"optimizer", &optimizer}, {"model", &model}});
  EXPECT_EQ(checkpoint.Save(dir + "/ckpt"), dir + "/ckpt-1");
  EXPECT_EQ(checkpoint.Save(dir + "/ckpt"), dir + "/ckpt-2");
  const std::string prefix = dir + "/ckpt-2";

  BundleReader reader(prefix);
  EXPECT_THAT(
      reader.Keys(),
      ElementsAre("_CHECKPOINTABLE_OBJECT_GRAPH", "model/dense/bias/.ATTRIBUTES/VARIABLE_VALUE",
                  "model/dense/bias/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE",
                  "model/dense/bias/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE",
                  "model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE",
                  "model/dense/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE",
                  "model/dense/kernel/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE",
                  "optimizer/beta_1/.ATTRIBUTES/VARIABLE_VALUE",
                  "optimizer/beta_2/.ATTRIBUTES/VARIABLE_VALUE",
                  "optimizer/decay/.ATTRIBUTES/VARIABLE_VALUE",
                  "optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE",
                  "optimizer/learning_rate/.ATTRIBUTES/VARIABLE_VALUE",
                  "save_counter/.ATTRIBUTES/VARIABLE_VALUE"));
  const Tensor counter = reader.Read("save_counter/.ATTRIBUTES/VARIABLE_VALUE");
  EXPECT_EQ(counter.dtype(), DType::kInt64);
  EXPECT_EQ(counter.scalar<int64_t>(), 2);
  EXPECT_EQ(reader.Read("optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE").scalar<int64_t>(), 1);
  Variable* m = optimizer.GetSlot(model.dense.kernel(), "m");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(reader.Read("model/dense/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE")
                .ToVector<float>(),
            m->value().ToVector<float>());

  // Node numbering: BFS, root children sorted, save_counter last; slots m
  // then v, originals in node order, after every traversed node.
  const internal::SavedObjectGraph graph = GraphOf(prefix);
  ASSERT_EQ(graph.nodes.size(), 16u);
  const auto& root = graph.nodes[0].children;
  ASSERT_EQ(root.size(), 3u);
  EXPECT_EQ(root[0].local_name, "model");
  EXPECT_EQ(root[0].node_id, 1);
  EXPECT_EQ(root[1].local_name, "optimizer");
  EXPECT_EQ(root[1].node_id, 2);
  EXPECT_EQ(root[2].local_name, "save_counter");
  EXPECT_EQ(root[2].node_id, 3);
  // 4 = dense, 5..9 = iter, beta_1, beta_2, decay, learning_rate, 10 = kernel, 11 = bias.
  EXPECT_EQ(graph.nodes[4].children[0].local_name, "kernel");
  EXPECT_EQ(graph.nodes[4].children[0].node_id, 10);
  EXPECT_EQ(graph.nodes[2].children[0].local_name, "iter");
  const auto& slots = graph.nodes[2].slot_variables;
  ASSERT_EQ(slots.size(), 4u);
  EXPECT_EQ(slots[0].slot_name, "m");
  EXPECT_EQ(slots[0].original_variable_node_id, 10);
  EXPECT_EQ(slots[0].slot_variable_node_id, 12);
  EXPECT_EQ(slots[1].original_variable_node_id, 11);
  EXPECT_EQ(slots[2].slot_name, "v");
  EXPECT_EQ(slots[3].slot_variable_node_id, 15);
  ASSERT_EQ(graph.nodes[10].attributes.size(), 1u);
  EXPECT_EQ(graph.nodes[10].attributes[0].full_name, model.dense.kernel().shared_name());
  EXPECT_EQ(graph.nodes[3].attributes[0].full_name, "save_counter");
  EXPECT_EQ(graph.nodes[12].attributes[0].checkpoint_key,
            "model/dense/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE");
  for (const auto& node : graph.nodes) EXPECT_EQ(node.has_checkpoint_values, true);

  EXPECT_EQ(ReadFile(dir + "/checkpoint"),
            "model_checkpoint_path: \"ckpt-2\"\nall_model_checkpoint_paths: \"ckpt-2\"\n");
  EXPECT_EQ(LatestCheckpoint(dir), prefix);

  EAGER_SKIP_WITHOUT_TFCKPT();
  std::string output;
  EXPECT_EQ(TfckptVerify(prefix, &output), 0) << output;
  ASSERT_EQ(RunTfckpt("graph '" + prefix + "'", dir + "/graph.log", &output), 0) << output;
  EXPECT_THAT(output, HasSubstr("TrackableObjectGraph: 16 nodes"));
  EXPECT_THAT(output, HasSubstr("slot    v                original=11 slot_variable=15"));
  EXPECT_THAT(output, HasSubstr("key='model/dense/kernel/.OPTIMIZER_SLOT/optimizer/v/"
                                ".ATTRIBUTES/VARIABLE_VALUE'"));
}

TEST(CheckpointTest, WriteWritesExactlyThePathAndNoStateFile) {
  const std::string dir = TempDir();
  Variable v(Tensor(1.5f), "v");
  Checkpoint checkpoint({{"v", &v}});
  EXPECT_EQ(checkpoint.Write(dir + "/exact"), dir + "/exact");
  EXPECT_TRUE(std::filesystem::exists(dir + "/exact.index"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/checkpoint"));
  // Write does not create or count save_counter.
  EXPECT_FALSE(BundleReader(dir + "/exact").Contains("save_counter/.ATTRIBUTES/VARIABLE_VALUE"));
  Variable w(Tensor(0.0f), "w");
  Checkpoint other({{"v", &w}});
  other.Read(dir + "/exact").AssertConsumed();
  EXPECT_EQ(w.value().scalar<float>(), 1.5f);
}

// DESIGN.md's name-suffix fragility: the second model's variables are
// "dense_1/..." and its optimizer "Adam_1"; the object-based restore matches
// by structure, and deferred restoration fills the lazily built Dense and
// Adam's slots, so training continues exactly as if it never stopped.
TEST(CheckpointTest, ModelBuiltTwiceRestoresByStructureAndContinuesExactly) {
  const std::string dir = TempDir();
  const Tensor x = Input();
  MyModel model;
  Adam optimizer;
  TrainStep(model, optimizer, x);
  Checkpoint checkpoint({{"model", &model}, {"optimizer", &optimizer}});
  const std::string path = checkpoint.Save(dir + "/ckpt");

  MyModel new_model;  // unbuilt, named differently
  Adam new_optimizer;
  Checkpoint restored({{"model", &new_model}, {"optimizer", &new_optimizer}});
  CheckpointLoadStatus status = restored.Restore(*LatestCheckpoint(dir));
  status.AssertExistingObjectsMatched();  // nothing built yet: passes
  EXPECT_EQ(new_optimizer.iterations(), 1);
  EXPECT_EQ(restored.save_counter().value().scalar<int64_t>(), 1);
  // Not consumed yet: the kernel and the slots are waiting.
  try {
    status.AssertConsumed();
    ADD_FAILURE() << "AssertConsumed passed with deferred values pending";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("(root).model.dense.kernel"));
    EXPECT_THAT(e.what(), HasSubstr("Unresolved object in checkpoint"));
  }

  new_model(x);  // builds: restore-on-create
  EXPECT_NE(new_model.dense.kernel().shared_name(), model.dense.kernel().shared_name());
  ExpectSameValue(new_model.dense.kernel(), model.dense.kernel());
  ExpectSameValue(*new_model.dense.bias(), *model.dense.bias());
  status.AssertExistingObjectsMatched();

  // The next step: slots come from the checkpoint when Adam creates them.
  TrainStep(model, optimizer, x);
  TrainStep(new_model, new_optimizer, x);
  ExpectSameValue(new_model.dense.kernel(), model.dense.kernel());
  ExpectSameValue(*new_model.dense.bias(), *model.dense.bias());
  ExpectSameValue(*new_optimizer.GetSlot(new_model.dense.kernel(), "v"),
                  *optimizer.GetSlot(model.dense.kernel(), "v"));
  status.AssertConsumed();
}

TEST(CheckpointTest, RestoresIntoExistingObjectsAtOnce) {
  const std::string dir = TempDir();
  const Tensor x = Input();
  MyModel model;
  Adam optimizer;
  TrainStep(model, optimizer, x);
  Checkpoint checkpoint({{"model", &model}, {"optimizer", &optimizer}});
  const std::string path = checkpoint.Save(dir + "/ckpt");

  MyModel other;
  Adam other_optimizer;
  TrainStep(other, other_optimizer, Input(4, 99));
  TrainStep(other, other_optimizer, Input(4, 98));
  Checkpoint restored({{"model", &other}, {"optimizer", &other_optimizer}});
  restored.Restore(path).AssertConsumed();
  ExpectSameValue(other.dense.kernel(), model.dense.kernel());
  ExpectSameValue(*other_optimizer.GetSlot(other.dense.kernel(), "m"),
                  *optimizer.GetSlot(model.dense.kernel(), "m"));
  EXPECT_EQ(other_optimizer.iterations(), 1);
}

TEST(CheckpointTest, ShapeMismatchNamesTheKeyAndAssignsNothing) {
  const std::string dir = TempDir();
  MyModel model;
  Adam optimizer;
  TrainStep(model, optimizer, Input(4));
  const std::string path = Checkpoint({{"model", &model}}).Save(dir + "/ckpt");

  MyModel wider;
  wider(Input(5));  // kernel [5,3]
  const std::vector<float> bias_before = wider.dense.bias()->value().ToVector<float>();
  Checkpoint restored({{"model", &wider}});
  try {
    restored.Restore(path);
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE"));
    EXPECT_THAT(e.what(), HasSubstr("float32 of shape [4,3]"));
    EXPECT_THAT(e.what(), HasSubstr("float32 of shape [5,3]"));
  }
  // The bias (compatible) was not assigned either.
  EXPECT_EQ(wider.dense.bias()->value().ToVector<float>(), bias_before);

  // The same for a variable created later from the deferred value.
  MyModel lazy;
  Checkpoint lazy_checkpoint({{"model", &lazy}});
  lazy_checkpoint.Restore(path).ExpectPartial();
  try {
    lazy(Input(5));
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE"));
    EXPECT_THAT(e.what(), HasSubstr("[4,3]"));
    EXPECT_THAT(e.what(), HasSubstr("[5,3]"));
  }
}

TEST(CheckpointTest, StatusAssertionsFailNamingObjects) {
  const std::string dir = TempDir();
  Variable a(Tensor(1.0f), "a");
  Variable b(Tensor(2.0f), "b");
  const std::string path = Checkpoint({{"a", &a}, {"b", &b}}).Save(dir + "/ckpt");

  // A live object the checkpoint does not have.
  Variable a2(Tensor(0.0f), "a2"), extra(Tensor(0.0f), "extra");
  Checkpoint with_extra({{"a", &a2}, {"extra", &extra}});
  CheckpointLoadStatus status = with_extra.Restore(path);
  EXPECT_EQ(a2.value().scalar<float>(), 1.0f);
  status.AssertNontrivialMatch();
  try {
    status.AssertExistingObjectsMatched();
    ADD_FAILURE() << "no error";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Some objects were not bound to checkpointed values"));
    EXPECT_THAT(e.what(), HasSubstr("(root).extra"));
  }
  // A checkpoint value the program does not have.
  try {
    status.AssertConsumed();
    ADD_FAILURE() << "no error";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("(root).extra"));
  }
  Checkpoint subset({{"a", &a2}});
  try {
    subset.Restore(path).AssertConsumed();
    ADD_FAILURE() << "no error";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Unresolved object in checkpoint (root).b"));
    EXPECT_THAT(e.what(), HasSubstr("b/.ATTRIBUTES/VARIABLE_VALUE"));
  }
  subset.Restore(path).AssertExistingObjectsMatched();
  subset.Restore(path).ExpectPartial();

  // Nothing but the root matched.
  Variable c(Tensor(0.0f), "c");
  Checkpoint unrelated({{"c", &c}});
  try {
    unrelated.Read(path).AssertNontrivialMatch();
    ADD_FAILURE() << "no error";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Nothing except the root object matched"));
    EXPECT_THAT(e.what(), HasSubstr("(root).c"));
  }
}

TEST(CheckpointTest, UncheckedPartialRestoreWarnsOnceAtTheEnd) {
  const std::string dir = TempDir();
  Variable a(Tensor(1.0f), "a"), b(Tensor(2.0f), "b");
  const std::string path = Checkpoint({{"a", &a}, {"b", &b}}).Save(dir + "/ckpt");
  Variable a2(Tensor(0.0f), "a2");
  // The restore stays active (for objects created later) while its root
  // lives, so the warning comes when the Checkpoint goes.
  ::testing::internal::CaptureStderr();
  {
    Checkpoint subset({{"a", &a2}});
    subset.Restore(path);
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
    ::testing::internal::CaptureStderr();
  }
  std::string warned = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(warned, HasSubstr("Value in checkpoint could not be found in the restored object: "
                                "(root).b"));
  EXPECT_THAT(warned, HasSubstr("not all checkpointed values were used"));
  ::testing::internal::CaptureStderr();
  {
    Checkpoint subset({{"a", &a2}});
    subset.Restore(path).ExpectPartial();
    subset.Restore(path).AssertExistingObjectsMatched();
    Checkpoint({{"a", &a2}, {"b", &b}}).Restore(path);  // everything used
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(CheckpointTest, RestoreOfNothingFailsEveryAssertion) {
  Variable v(Tensor(1.0f), "v");
  Checkpoint checkpoint({{"v", &v}});
  CheckpointLoadStatus status = checkpoint.Restore(std::nullopt);
  EXPECT_FALSE(status.restoring());
  status.ExpectPartial();
  for (auto assertion :
       {&CheckpointLoadStatus::AssertConsumed, &CheckpointLoadStatus::AssertExistingObjectsMatched,
        &CheckpointLoadStatus::AssertNontrivialMatch}) {
    try {
      (status.*assertion)();
      ADD_FAILURE() << "no error";
    } catch (const FailedPreconditionError& e) {
      EXPECT_THAT(e.what(), HasSubstr("No checkpoint specified (save_path=None)"));
    }
  }
  EXPECT_EQ(v.value().scalar<float>(), 1.0f);
}

TEST(CheckpointTest, BadPathGivesTensorFlowsNotFoundMessage) {
  const std::string dir = TempDir();
  Variable v(Tensor(1.0f), "v");
  Checkpoint checkpoint({{"v", &v}});
  checkpoint.Save(dir + "/ckpt");
  try {
    checkpoint.Restore(dir + "/ckpt");
    ADD_FAILURE() << "no error";
  } catch (const NotFoundError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Error when restoring from checkpoint or SavedModel at " + dir +
                                    "/ckpt"));
    EXPECT_THAT(e.what(), HasSubstr("You may be missing the checkpoint suffix"));
  }
}

TEST(CheckpointTest, EmaShadowsSaveAndRestore) {
  const std::string dir = TempDir();
  ResetDefaultNames();
  std::string path;
  std::vector<float> shadow;
  {
    Variable v(Tensor::Vector<float>({1, 2}), "v");
    ExponentialMovingAverage ema(0.9);
    ema.Apply({&v});
    v.Assign(Tensor::Vector<float>({3, 4}));
    ema.Apply();
    shadow = ema.AverageVariable(v)->value().ToVector<float>();
    Checkpoint checkpoint({{"v", &v}, {"ema", &ema}});
    path = checkpoint.Save(dir + "/ckpt");
    EXPECT_TRUE(
        BundleReader(path).Contains("ema/v.SExponentialMovingAverage/.ATTRIBUTES/VARIABLE_VALUE"));
  }
  ResetDefaultNames();  // as a new process would name them
  Variable v(Tensor::Vector<float>({0, 0}), "v");
  ExponentialMovingAverage ema(0.9);
  Checkpoint checkpoint({{"v", &v}, {"ema", &ema}});
  CheckpointLoadStatus status = checkpoint.Restore(path);
  EXPECT_EQ(v.value().ToVector<float>(), (std::vector<float>{3, 4}));
  ema.Apply({&v});  // the shadow is created with its saved value, then updated
  const float expected0 = shadow[0] - (shadow[0] - 3.0f) * (1.0f - 0.9f);
  EXPECT_FLOAT_EQ(ema.AverageVariable(v)->value().ToVector<float>()[0], expected0);
  status.AssertConsumed();
}

}  // namespace
}  // namespace eager
