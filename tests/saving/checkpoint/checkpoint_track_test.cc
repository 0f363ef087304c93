// A Checkpoint gains dependencies after Restore(), as attribute assignment
// on a tf.train.Checkpoint: TF's checkpoint tests (tensorflow/python/
// checkpoint/checkpoint_test.py, CheckpointingTests.testRestoreOnAssign and
// testDependencyLoop's deferred loading), through Trackable._track_trackable
// -> _handle_deferred_dependencies (python/trackable/base.py).

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

// testRestoreOnAssign: var2 exists at restore and gets 8 at once; var1 is
// made later, assigned -2, and gets its saved 4 when it is attached.
TEST(CheckpointTrackTest, RestoreOnAssign) {
  const std::string dir = TempDir();
  Variable var1(Tensor(4.0f), "outside_var");
  Variable var2(Tensor(8.0f), "blah");
  Checkpoint first({});
  first.Track("var1", var1);
  first.Track("var2", var2);
  const std::string path = first.Save(dir + "/ckpt");

  Variable second_var2(Tensor(0.0f), "blah");
  Checkpoint second({{"var2", &second_var2}});
  CheckpointLoadStatus status = second.Restore(path);
  EXPECT_EQ(second_var2.value().scalar<float>(), 8.0f);
  EXPECT_THROW(status.AssertConsumed(), FailedPreconditionError);  // var1 not there yet
  Variable recreated_var1(Tensor(0.0f), "outside_var");
  recreated_var1.Assign(Tensor(-2.0f));
  second.Track("var1", recreated_var1);
  EXPECT_EQ(recreated_var1.value().scalar<float>(), 4.0f);
  status.AssertConsumed();
}

// A model and optimizer attached after Restore(), unbuilt: the kernel gets
// its saved value when the model builds; everything is consumed once the
// model and optimizer are built and one step ran.
TEST(CheckpointTrackTest, ModelAndOptimizerAttachedAfterRestore) {
  const std::string dir = TempDir();
  MyModel model;
  Adam optimizer(0.1);
  TrainStep(model, optimizer, Input());
  Checkpoint saved({{"model", &model}, {"optimizer", &optimizer}});
  const std::string path = saved.Save(dir + "/ckpt");

  Checkpoint restored({});
  CheckpointLoadStatus status = restored.Restore(path);
  MyModel new_model;
  Adam new_optimizer(0.1);
  restored.Track("model", new_model);
  restored.Track("optimizer", new_optimizer);
  EXPECT_EQ(new_optimizer.iterations(), 1);  // restored on attach
  new_model(Input());                        // builds: restore-on-create
  ExpectSameValue(new_model.dense.kernel(), model.dense.kernel());
  ExpectSameValue(*new_model.dense.bias(), *model.dense.bias());
  status.AssertExistingObjectsMatched();

  // Both sides take the same next step from the same state.
  TrainStep(model, optimizer, Input());
  TrainStep(new_model, new_optimizer, Input());
  ExpectSameValue(new_model.dense.kernel(), model.dense.kernel());
  status.AssertConsumed();

  // The children are listed in the order they were tracked, save_counter
  // where it was created (Restore made it, before both).
  const std::vector<Trackable::Child> children = restored.Children();
  ASSERT_EQ(children.size(), 3u);
  EXPECT_EQ(children[0].name, "save_counter");
  EXPECT_EQ(children[1].name, "model");
  EXPECT_EQ(children[2].name, "optimizer");
}

TEST(CheckpointTrackTest, RejectsBadNames) {
  Variable v(Tensor(1.0f), "v");
  Checkpoint checkpoint({{"v", &v}});
  EXPECT_THROW(checkpoint.Track("v", v), InvalidArgumentError);
  EXPECT_THROW(checkpoint.Track("save_counter", v), InvalidArgumentError);
  EXPECT_THROW(checkpoint.Track("", v), InvalidArgumentError);
  Checkpoint root_mode(v);
  EXPECT_THROW(root_mode.Track("w", v), FailedPreconditionError);
}

}  // namespace
}  // namespace eager
