// TF's deferred slot restoration: after a restore, an optimizer creates a
// variable's slots with their saved values as soon as both exist (eagerly),
// so get_slot gives the restored m and v before the first step and
// assert_consumed passes once model and optimizer are built. Mirrors Keras's
// tracking_util_test.py CheckpointingTests.testDeferredSlotRestoration (its
// eager branch: "Slot variables are only created with restoring initializers
// when executing eagerly"), through OptimizerV2._create_or_restore_slot_variable
// and restore.py's CheckpointPosition._queue_slot_variables.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/errors.h"
#include "saving/checkpoint/checkpoint.h"
#include "tests/saving/checkpoint/checkpoint_test_model.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::ExpectSameValue;
using ::eager::testing::Input;
using ::eager::testing::MyModel;
using ::eager::testing::TempDir;
using ::eager::testing::TrainStep;

float Scalar(const Variable* v) {
  EXPECT_NE(v, nullptr);
  return v == nullptr ? 0.0f : v->value().scalar<float>();
}

// testDeferredSlotRestoration: var 13 and its slot m 14 saved; a fresh root
// restores, gains var (13 at once) and then a fresh Adam, whose m for var is
// 14 before any step.
TEST(DeferredSlotRestorationTest, SlotsExistWithSavedValuesBeforeTheFirstStep) {
  const std::string dir = TempDir();
  Variable var(Tensor(0.0f), "var");
  Adam optimizer(0.1);
  optimizer.ApplyGradients({{Tensor(1.0f), &var}});
  var.Assign(Tensor(13.0f));
  optimizer.GetSlot(var, "m")->Assign(Tensor(14.0f));
  const float saved_v = Scalar(optimizer.GetSlot(var, "v"));
  Checkpoint root({{"var", &var}, {"optimizer", &optimizer}});
  const std::string slots_path = root.Save(dir + "/with_slots");

  Checkpoint new_root({});
  CheckpointLoadStatus status = new_root.Restore(slots_path);
  Variable new_var(Tensor(0.0f), "var");
  new_root.Track("var", new_var);
  EXPECT_EQ(new_var.value().scalar<float>(), 13.0f);
  Adam new_optimizer(0.1);
  new_root.Track("optimizer", new_optimizer);
  status.AssertExistingObjectsMatched();
  EXPECT_EQ(Scalar(new_optimizer.GetSlot(new_var, "m")), 14.0f);
  EXPECT_EQ(Scalar(new_optimizer.GetSlot(new_var, "v")), saved_v);
  EXPECT_EQ(new_optimizer.iterations(), 1);
  status.AssertConsumed();  // before any step

  // The step continues exactly where the saved optimizer was.
  optimizer.ApplyGradients({{Tensor(1.0f), &var}});
  new_optimizer.ApplyGradients({{Tensor(1.0f), &new_var}});
  ExpectSameValue(new_var, var);
  ExpectSameValue(*new_optimizer.GetSlot(new_var, "m"), *optimizer.GetSlot(var, "m"));
}

// The optimizer attached first, the variable second: the slots appear when
// the variable does.
TEST(DeferredSlotRestorationTest, OptimizerFirstThenVariable) {
  const std::string dir = TempDir();
  Variable var(Tensor(2.0f), "var");
  Adam optimizer(0.1);
  optimizer.ApplyGradients({{Tensor(0.5f), &var}});
  Checkpoint root({{"var", &var}, {"optimizer", &optimizer}});
  const std::string path = root.Save(dir + "/ckpt");

  Checkpoint new_root({});
  CheckpointLoadStatus status = new_root.Restore(path);
  Adam new_optimizer(0.1);
  new_root.Track("optimizer", new_optimizer);
  EXPECT_TRUE(new_optimizer.Slots().empty());
  EXPECT_THROW(status.AssertConsumed(), FailedPreconditionError);
  Variable new_var(Tensor(0.0f), "var");
  new_root.Track("var", new_var);
  ExpectSameValue(*new_optimizer.GetSlot(new_var, "m"), *optimizer.GetSlot(var, "m"));
  ExpectSameValue(*new_optimizer.GetSlot(new_var, "v"), *optimizer.GetSlot(var, "v"));
  status.AssertConsumed();
}

// A lazily built model: its kernel and bias and their slots exist, restored,
// once the model builds; AssertConsumed passes then, before the first step.
TEST(DeferredSlotRestorationTest, UnbuiltModelConsumedOnceBuilt) {
  const std::string dir = TempDir();
  const Tensor x = Input();
  MyModel model;
  Adam optimizer;
  TrainStep(model, optimizer, x);
  TrainStep(model, optimizer, Input(4, 8));
  Checkpoint checkpoint({{"model", &model}, {"optimizer", &optimizer}});
  const std::string path = checkpoint.Save(dir + "/ckpt");

  MyModel new_model;
  Adam new_optimizer;
  Checkpoint restored({{"model", &new_model}, {"optimizer", &new_optimizer}});
  CheckpointLoadStatus status = restored.Restore(path);
  EXPECT_THROW(status.AssertConsumed(), FailedPreconditionError);  // not built
  new_model(x);                                                    // builds
  for (const char* slot : {"m", "v"}) {
    ExpectSameValue(*new_optimizer.GetSlot(new_model.dense.kernel(), slot),
                    *optimizer.GetSlot(model.dense.kernel(), slot));
    ExpectSameValue(*new_optimizer.GetSlot(*new_model.dense.bias(), slot),
                    *optimizer.GetSlot(*model.dense.bias(), slot));
  }
  status.AssertConsumed();
  // Slots() lists them as a first step would have: all m, then all v.
  const std::vector<Trackable::Slot> slots = new_optimizer.Slots();
  ASSERT_EQ(slots.size(), 4u);
  EXPECT_EQ(slots[0].name, "m");
  EXPECT_EQ(slots[1].name, "m");
  EXPECT_EQ(slots[2].name, "v");

  TrainStep(model, optimizer, x);
  TrainStep(new_model, new_optimizer, x);
  ExpectSameValue(new_model.dense.kernel(), model.dense.kernel());
  ExpectSameValue(*new_optimizer.GetSlot(new_model.dense.kernel(), "v"),
                  *optimizer.GetSlot(model.dense.kernel(), "v"));
}

// A built model and a fresh optimizer in the Checkpoint before Restore():
// the slots are created by Restore() itself.
TEST(DeferredSlotRestorationTest, BuiltModelGetsSlotsFromRestore) {
  const std::string dir = TempDir();
  const Tensor x = Input();
  MyModel model;
  Adam optimizer;
  TrainStep(model, optimizer, x);
  Checkpoint checkpoint({{"model", &model}, {"optimizer", &optimizer}});
  const std::string path = checkpoint.Save(dir + "/ckpt");

  MyModel new_model;
  new_model(x);
  Adam new_optimizer;
  Checkpoint restored({{"model", &new_model}, {"optimizer", &new_optimizer}});
  restored.Restore(path).AssertConsumed();
  ExpectSameValue(*new_optimizer.GetSlot(new_model.dense.kernel(), "m"),
                  *optimizer.GetSlot(model.dense.kernel(), "m"));
}

}  // namespace
}  // namespace eager
