// Checkpoint::Restore of a bundle without an object graph (a TF1 Saver
// file): variables are matched by their global name (FORMAT.md 4.5), also
// the ones created after the restore, and the status has TF's
// NameBasedSaverStatus semantics. Files written here by our name-based
// Saver; CheckpointRealdataTest covers a real TF1 file.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "autodiff/adam.h"
#include "autodiff/dense.h"
#include "autodiff/module.h"
#include "ops/array_ops.h"
#include "runtime/errors.h"
#include "runtime/names.h"
#include "saving/checkpoint/checkpoint.h"
#include "saving/saver/saver.h"
#include "tests/saving/checkpoint/checkpoint_test_model.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::ExpectSameValue;
using ::eager::testing::Input;
using ::eager::testing::ModelAndAdamVariables;
using ::eager::testing::MyModel;
using ::eager::testing::TempDir;
using ::eager::testing::TrainStep;
using ::testing::HasSubstr;

// Every test starts with fresh names, as a program does: the trained model
// is "dense", "Adam".
class NameBasedFallbackTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetDefaultNames(); }
};

// A TF1-style file of `model` after one Adam step, keyed by variable names
// ("dense/kernel", "dense/kernel/m", "Adam/iter", ...). Then names start
// again, so that objects made next are named as the same program run again
// names them.
std::string SaveTrainedNameBased(MyModel& model, Adam& optimizer, const std::string& dir) {
  TrainStep(model, optimizer, Input());
  EXPECT_EQ(model.dense.kernel().shared_name(), "dense/kernel");
  std::string prefix = Saver(ModelAndAdamVariables(model, optimizer)).Save(dir + "/model.ckpt");
  ResetDefaultNames();
  return prefix;
}

TEST_F(NameBasedFallbackTest, LazilyBuiltDenseAndAdamSlotsGetTheSavedValuesWhenCreated) {
  const std::string dir = TempDir();
  MyModel trained;
  Adam trained_adam;
  const std::string prefix = SaveTrainedNameBased(trained, trained_adam, dir);

  MyModel model;  // unbuilt: its kernel and bias do not exist yet
  Adam adam;
  Checkpoint checkpoint({{"model", &model}, {"optimizer", &adam}});
  CheckpointLoadStatus status = checkpoint.Restore(prefix);
  ASSERT_TRUE(status.name_based());
  // Adam's iter and hyper-parameters exist and are restored; the unbuilt
  // Dense has nothing to restore yet; save_counter is exempt.
  status.AssertConsumed();
  EXPECT_EQ(adam.iterations(), 1);

  model(Input());  // builds: kernel and bias are created now, named as saved
  ASSERT_EQ(model.dense.kernel().shared_name(), "dense/kernel");
  ExpectSameValue(model.dense.kernel(), trained.dense.kernel());
  ExpectSameValue(*model.dense.bias(), *trained.dense.bias());
  status.AssertConsumed();

  // The next step makes Adam's slots, which take their saved m and v: the
  // step continues exactly as the trained objects' own next step.
  TrainStep(trained, trained_adam, Input(4, 8));
  TrainStep(model, adam, Input(4, 8));
  const std::vector<Variable*> expected = ModelAndAdamVariables(trained, trained_adam);
  const std::vector<Variable*> actual = ModelAndAdamVariables(model, adam);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) ExpectSameValue(*actual[i], *expected[i]);
  status.AssertConsumed().AssertExistingObjectsMatched().AssertNontrivialMatch();
}

// TF's NameBasedSaverStatus: the three assertions are one check, made on the
// objects that exist when it runs; a variable created later without a value
// in the file fails it, naming the object and the variable name.
TEST_F(NameBasedFallbackTest, VariableCreatedLaterWithoutASavedValueFailsEveryAssertion) {
  const std::string dir = TempDir();
  MyModel trained;
  Adam trained_adam;
  const std::string prefix = SaveTrainedNameBased(trained, trained_adam, dir);

  struct TwoLayers : Module {
    Dense dense{3};
    Dense extra{2};  // "dense_1": not in the file
    TwoLayers() {
      Track("dense", dense);
      Track("extra", extra);
    }
  } model;
  Checkpoint checkpoint({{"model", &model}});
  CheckpointLoadStatus status = checkpoint.Restore(prefix);
  status.AssertConsumed();  // nothing built: nothing unrestored yet
  model.dense(Input());
  model.extra(Input());
  ExpectSameValue(model.dense.kernel(), trained.dense.kernel());
  EXPECT_NE(model.extra.kernel().shared_name(), "dense/kernel");

  using Check = CheckpointLoadStatus& (CheckpointLoadStatus::*)();
  for (Check check :
       {&CheckpointLoadStatus::AssertConsumed, &CheckpointLoadStatus::AssertExistingObjectsMatched,
        &CheckpointLoadStatus::AssertNontrivialMatch}) {
    try {
      (status.*check)();
      ADD_FAILURE() << "no error";
    } catch (const FailedPreconditionError& e) {
      EXPECT_THAT(e.what(), HasSubstr("Some objects had attributes which were not restored"));
      EXPECT_THAT(e.what(), HasSubstr("(root).model.extra.kernel ('dense_1/kernel')"));
      EXPECT_THAT(e.what(), HasSubstr("(root).model.extra.bias ('dense_1/bias')"));
      EXPECT_THAT(e.what(), ::testing::Not(HasSubstr("(root).model.dense.")));
    }
  }
}

// A value of another dtype than the variable created later is an error
// naming the key, the saved and the live dtype.
TEST_F(NameBasedFallbackTest, DtypeMismatchOfAVariableCreatedLaterNamesTheKey) {
  const std::string dir = TempDir();
  MyModel trained;
  Adam trained_adam;
  const std::string prefix = SaveTrainedNameBased(trained, trained_adam, dir);

  MyModel model;
  Checkpoint checkpoint({{"model", &model}});
  CheckpointLoadStatus status = checkpoint.Restore(prefix);
  try {
    model(Cast(Input(), DType::kFloat64));  // builds a float64 kernel
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("key 'dense/kernel' holds float32 of shape [4,3]"));
    EXPECT_THAT(e.what(), HasSubstr("is float64 of shape [4,3]"));
  }
}

}  // namespace
}  // namespace eager
