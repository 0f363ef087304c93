#include "saving/tools/checkpoint_convert.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "autodiff/adam.h"
#include "autodiff/dense.h"
#include "autodiff/module.h"
#include "runtime/errors.h"
#include "runtime/names.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/checkpoint/checkpoint.h"
#include "saving/saver/saver.h"
#include "tests/saving/checkpoint/checkpoint_test_model.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::ExpectSameValue;
using ::eager::testing::ExpectVerifies;
using ::eager::testing::Input;
using ::eager::testing::ModelAndAdamVariables;
using ::eager::testing::MyModel;
using ::eager::testing::TempDir;
using ::eager::testing::TrainStep;
using ::testing::HasSubstr;

std::string WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

// Seed 004's fragility, repaired offline: a name-based checkpoint of one
// model restores into the same model built again (its variables now named
// dense_1/..., Adam_1/...) once converted against a template of the new one.
TEST(CheckpointConvertTest, NameBasedToObjectBasedByTemplateRestoresModelAndAdamSlots) {
  // The names a fresh process gives (dense, Adam, then dense_1, Adam_1), as
  // the two programs this stands for would: run after other tests, every
  // name would carry a suffix and the template's rules would have nothing
  // plain to match.
  ResetDefaultNames();
  const std::string dir = TempDir();
  MyModel trained;
  Adam trained_adam;
  TrainStep(trained, trained_adam, Input());
  TrainStep(trained, trained_adam, Input());
  Saver saver(ModelAndAdamVariables(trained, trained_adam));
  const std::string names = saver.Save(dir + "/names");

  MyModel shape_donor;  // the restoring program's model, built once for its structure
  Adam shape_donor_adam;
  TrainStep(shape_donor, shape_donor_adam, Input());
  ASSERT_NE(shape_donor.dense.kernel().name(), trained.dense.kernel().name());
  Checkpoint({{"model", &shape_donor}, {"optimizer", &shape_donor_adam}}).Write(dir + "/template");

  const ConversionPlan plan =
      PlanConversion(names, {.template_prefix = dir + "/template", .mapping = {}});
  EXPECT_TRUE(plan.to_object_based);
  std::map<std::string, std::string> rule_of;
  for (const ConversionStep& s : plan.steps) rule_of[s.target_key] = s.rule;
  EXPECT_EQ(rule_of["model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE"], "name without _N");
  EXPECT_EQ(rule_of["model/dense/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE"],
            "slot name");
  EXPECT_EQ(rule_of["optimizer/beta_2/.ATTRIBUTES/VARIABLE_VALUE"], "name without _N");
  EXPECT_TRUE(plan.unused_sources.empty()) << plan.unused_sources.front();
  WriteConversion(plan, dir + "/objects");
  ExpectVerifies(dir + "/objects");

  MyModel restored;
  Adam restored_adam;
  Checkpoint checkpoint({{"model", &restored}, {"optimizer", &restored_adam}});
  CheckpointLoadStatus status = checkpoint.Read(dir + "/objects");
  // Builds the Dense (its kernel from the file) and creates Adam's slots (from the file too).
  TrainStep(restored, restored_adam, Input());
  TrainStep(trained, trained_adam, Input());
  ExpectSameValue(restored.dense.kernel(), trained.dense.kernel());
  ExpectSameValue(*restored.dense.bias(), *trained.dense.bias());
  ExpectSameValue(*restored_adam.GetSlot(restored.dense.kernel(), "v"),
                  *trained_adam.GetSlot(trained.dense.kernel(), "v"));
  status.AssertConsumed();
}

TEST(CheckpointConvertTest, ObjectBasedToNameBasedUsesFullNamesAndRestoresWithSaver) {
  const std::string dir = TempDir();
  MyModel model;
  Adam adam;
  TrainStep(model, adam, Input());
  Checkpoint({{"model", &model}, {"optimizer", &adam}}).Write(dir + "/objects");

  const ConversionPlan plan = PlanConversion(dir + "/objects", {});
  EXPECT_FALSE(plan.to_object_based);
  WriteConversion(plan, dir + "/names");
  ExpectVerifies(dir + "/names");
  const BundleReader names(dir + "/names");
  EXPECT_FALSE(names.Contains("_CHECKPOINTABLE_OBJECT_GRAPH"));
  EXPECT_TRUE(names.Contains(std::string(model.dense.kernel().shared_name())));

  // A name-based restore into other variables through a rename map.
  Variable kernel(Tensor::Zeros(model.dense.kernel().shape(), DType::kFloat32), "k");
  Variable m(Tensor::Zeros(model.dense.kernel().shape(), DType::kFloat32), "k_m");
  Saver({{std::string(model.dense.kernel().shared_name()), &kernel},
         {std::string(adam.GetSlot(model.dense.kernel(), "m")->shared_name()), &m}})
      .Restore(dir + "/names");
  ExpectSameValue(kernel, model.dense.kernel());
  ExpectSameValue(m, *adam.GetSlot(model.dense.kernel(), "m"));
}

TEST(CheckpointConvertTest, MappingBuildsObjectGraphWithSlotsThatCheckpointRestores) {
  const std::string dir = TempDir();
  MyModel model;
  Adam adam;
  TrainStep(model, adam, Input());
  Saver(ModelAndAdamVariables(model, adam)).Save(dir + "/names");
  // The object paths tf.train.Checkpoint(model=..., optimizer=...) uses.
  Variable& kernel = model.dense.kernel();
  Variable& bias = *model.dense.bias();
  std::string text = "# source  object path\n";
  text += std::string(kernel.shared_name()) + "   model/dense/kernel\n";
  text += std::string(bias.shared_name()) + "\tmodel/dense/bias\n\n";
  for (const char* slot : {"m", "v"}) {
    text += std::string(adam.GetSlot(kernel, slot)->shared_name()) +
            " model/dense/kernel/.OPTIMIZER_SLOT/optimizer/" + slot + "\n";
    text += std::string(adam.GetSlot(bias, slot)->shared_name()) +
            " model/dense/bias/.OPTIMIZER_SLOT/optimizer/" + slot + "\n";
  }
  for (const char* hyper : {"iter", "beta_1", "beta_2", "decay", "learning_rate"}) {
    text += adam.scope() + hyper + " optimizer/" + hyper + "\n";
  }
  const ConversionPlan plan = PlanConversion(
      dir + "/names", {.mapping = ReadConversionMapping(WriteFile(dir + "/map.txt", text))});
  EXPECT_TRUE(plan.unused_sources.empty()) << plan.unused_sources.front();
  WriteConversion(plan, dir + "/objects");
  ExpectVerifies(dir + "/objects");

  MyModel restored;
  Adam restored_adam;
  Checkpoint checkpoint({{"model", &restored}, {"optimizer", &restored_adam}});
  CheckpointLoadStatus status = checkpoint.Read(dir + "/objects");
  // The next step continues exactly: kernel, bias, both slots and the step count came back.
  TrainStep(restored, restored_adam, Input());
  status.AssertConsumed();
  TrainStep(model, adam, Input());
  ExpectSameValue(restored.dense.kernel(), kernel);
  ExpectSameValue(*restored.dense.bias(), bias);
  ExpectSameValue(*restored_adam.GetSlot(restored.dense.kernel(), "m"), *adam.GetSlot(kernel, "m"));
  ExpectSameValue(*restored_adam.GetSlot(*restored.dense.bias(), "v"), *adam.GetSlot(bias, "v"));
  EXPECT_EQ(restored_adam.iterations(), adam.iterations());
}

TEST(CheckpointConvertTest, ErrorsNameWhatIsWrong) {
  const std::string dir = TempDir();
  Variable a(Tensor::Zeros(Shape{2}, DType::kFloat32), "a");
  Variable b(Tensor::Zeros(Shape{}, DType::kInt64), "b");
  Saver({&a, &b}).Save(dir + "/names");

  EXPECT_THAT([&] { PlanConversion(dir + "/names", {}); },
              ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("is name-based")));
  EXPECT_THAT(
      [&] {
        PlanConversion(dir + "/names", {.mapping = {{"nope", "x"}}});
      },
      ::testing::ThrowsMessage<InvalidArgumentError>(
          HasSubstr("The mapping names source key nope")));
  EXPECT_THAT(
      [&] {
        PlanConversion(dir + "/names", {.mapping = {{"a", "x"}, {"b", "x"}}});
      },
      ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("given twice")));

  // A template whose variable nothing matches: listed with its name and type.
  Variable other(Tensor::Zeros(Shape{5}, DType::kFloat64), "other");
  struct Root : Module {
    explicit Root(Variable& v) { Track("w", v); }
  } root(other);
  Checkpoint(root).Write(dir + "/template");
  EXPECT_THAT(
      [&] {
        PlanConversion(dir + "/names", {.template_prefix = dir + "/template", .mapping = {}});
      },
      ::testing::ThrowsMessage<InvalidArgumentError>(
          HasSubstr("w/.ATTRIBUTES/VARIABLE_VALUE (other, float64[5])")));
  // Mapped onto a variable of another dtype and shape: both named.
  EXPECT_THAT(
      [&] {
        PlanConversion(dir + "/names",
                       {.template_prefix = dir + "/template", .mapping = {{"other", "a"}}});
      },
      ::testing::ThrowsMessage<InvalidArgumentError>(
          HasSubstr("Cannot convert a (float32[2]) to w/.ATTRIBUTES/VARIABLE_VALUE (other) "
                    "(float64[5])")));
  // Allowed partial: the template's value is kept.
  const ConversionPlan plan = PlanConversion(
      dir + "/names", {.template_prefix = dir + "/template", .mapping = {}, .allow_partial = true});
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].rule, "kept from template");
  EXPECT_EQ(plan.unused_sources, (std::vector<std::string>{"a", "b"}));

  EXPECT_THAT([&] { ReadConversionMapping(WriteFile(dir + "/bad.txt", "a b\nc\n")); },
              ::testing::ThrowsMessage<InvalidArgumentError>(
                  HasSubstr("bad.txt:2: expected \"SOURCE TARGET\", got \"c\"")));
}

TEST(CheckpointConvertTest, OnlyUnmatchedVariableOfItsDtypeAndShapeIsPaired) {
  const std::string dir = TempDir();
  Variable w(Tensor::Zeros(Shape{2, 3}, DType::kFloat32), "weights");
  Saver({&w}).Save(dir + "/names");
  Variable t(Tensor::Zeros(Shape{2, 3}, DType::kFloat32), "kernel");
  struct Root : Module {
    explicit Root(Variable& v) { Track("kernel", v); }
  } root(t);
  Checkpoint(root).Write(dir + "/template");
  const ConversionPlan plan =
      PlanConversion(dir + "/names", {.template_prefix = dir + "/template", .mapping = {}});
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].source_key, "weights");
  EXPECT_EQ(plan.steps[0].rule, "only dtype and shape");
}

}  // namespace
}  // namespace eager
