// Names as TF2 gives them (issue 38): eagerly, a plain tf.Variable keeps the
// name it is given (two "w1" are both "w1:0"), so a second model in one
// process has the same EMA shadow edges as the first and TF's checkpoint
// restores into it. Keras layers stay uniquified ("dense", "dense_1"); a
// graph keeps TF1's uniquification ("w1", "w1_1").

#include <gtest/gtest.h>

#include <string>

#include "autodiff/dense.h"
#include "autodiff/exponential_moving_average.h"
#include "runtime/graph.h"
#include "runtime/names.h"
#include "runtime/variable.h"
#include "saving/checkpoint/checkpoint.h"
#include "tests/saving/saving_test_util.h"

namespace eager::testing {
namespace {

// One model: a variable "w1" and its EMA, in a Checkpoint(w1=..., ema=...).
struct EmaModel {
  Variable w1;
  ExponentialMovingAverage ema{0.9};
  explicit EmaModel(float value) : w1(Tensor(value), "w1") { ema.Apply({&w1}); }
};

TEST(Tf2NamesTest, EagerVariablesAreNotSuffixed) {
  ResetDefaultNames();
  Variable a(Tensor(1.0f), "w1");
  Variable b(Tensor(2.0f), "w1");
  EXPECT_EQ(a.name(), "w1:0");
  EXPECT_EQ(b.name(), "w1:0");
}

TEST(Tf2NamesTest, ASecondModelsEmaRestoresTheFirstModelsCheckpoint) {
  ResetDefaultNames();
  EmaModel first(1.0f);
  first.w1.Assign(Tensor(3.0f));
  first.ema.Apply();
  const std::string path =
      Checkpoint({{"w1", &first.w1}, {"ema", &first.ema}}).Write(TempDir() + "/ema_first");
  EmaModel second(5.0f);  // in the same process: TF2 names it "w1" too
  EXPECT_EQ(second.ema.AverageName(second.w1), "w1/ExponentialMovingAverage");
  Checkpoint checkpoint({{"w1", &second.w1}, {"ema", &second.ema}});
  checkpoint.Read(path).AssertConsumed();
  EXPECT_EQ(second.ema.AverageVariable(second.w1)->value().scalar<float>(),
            first.ema.AverageVariable(first.w1)->value().scalar<float>());
}

TEST(Tf2NamesTest, KerasLayersAndGraphsStayUniquified) {
  ResetDefaultNames();
  Dense d0(2), d1(2);
  d0.Build(3);
  d1.Build(3);
  EXPECT_EQ(d0.kernel().name(), "dense/kernel:0");
  EXPECT_EQ(d1.kernel().name(), "dense_1/kernel:0");
  Graph graph;
  Graph::AsDefault in(graph);
  Variable a(Tensor(1.0f), "w1");
  Variable b(Tensor(2.0f), "w1");
  EXPECT_EQ(a.name(), "w1:0");
  EXPECT_EQ(b.name(), "w1_1:0");
}

}  // namespace
}  // namespace eager::testing
