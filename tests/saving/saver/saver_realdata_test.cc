// Name-based restores of real TF1 Saver files (../shared/realdata) into C++
// variables built the way the TensorFlow programs built theirs, so that the
// auto-uniquified names come out the same.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <fstream>
#include <memory>
#include <vector>

#include "autodiff/adam.h"
#include "autodiff/dense.h"
#include "autodiff/exponential_moving_average.h"
#include "runtime/live_variables.h"
#include "runtime/names.h"
#include "saving/bundle/bundle_files.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/saver/saver.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::ReadFile;
using ::eager::testing::RealdataDir;
using ::eager::testing::TempDir;

class SaverRealdataTest : public ::testing::Test {
 protected:
  // TF1 programs' names ("Variable_19", "v1_1") without a Graph.
  void SetUp() override {
    ResetDefaultNames();
    SetEagerVariableNames(EagerVariableNames::kTf1);
  }
  void TearDown() override {
    SetEagerVariableNames(EagerVariableNames::kTf2);
    ResetDefaultNames();
  }
};

std::vector<uint32_t> Bits(const Tensor& t) {
  std::vector<uint32_t> out;
  for (float f : t.data<float>()) out.push_back(std::bit_cast<uint32_t>(f));
  return out;
}

// CarND LeNet-Lab: the model function ran twice (unnamed tf.Variable ->
// "Variable" .. "Variable_19"); AdamOptimizer.minimize on the second copy made
// beta1_power, beta2_power and the "/Adam", "/Adam_1" slots. After 4300 steps
// beta1_power = 0.9^4300 is the float32 denormal 4 * 2^-149.
TEST_F(SaverRealdataTest, LenetWithTf1AdamRestoresByNameBitExact) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string prefix = RealdataDir() + "/tf1_saver_lenet_adam/lenet";
  const std::vector<Shape> lenet = {{5, 5, 1, 6}, {6},       {5, 5, 6, 16}, {16},     {400, 120},
                                    {120},        {120, 84}, {84},          {84, 10}, {10}};
  std::vector<std::unique_ptr<Variable>> variables;
  for (int copy = 0; copy < 2; ++copy) {
    for (const Shape& shape : lenet)
      variables.push_back(std::make_unique<Variable>(Tensor::Zeros(shape)));
  }
  EXPECT_EQ(variables[19]->shared_name(), "Variable_19");
  AdamOptions options;
  options.tf1_compatible = true;
  Adam adam(options);
  // One step creates the TF1 state (slots and powers), as minimize() does.
  std::vector<Optimizer::GradientAndVariable> grads;
  for (size_t i = 10; i < 20; ++i) {
    grads.emplace_back(Tensor::Zeros(variables[i]->shape()), variables[i].get());
  }
  adam.ApplyGradients(grads);
  ASSERT_EQ(adam.GetSlot(*variables[10], "m")->shared_name(), "Variable_10/Adam");
  ASSERT_EQ(adam.GetSlot(*variables[10], "v")->shared_name(), "Variable_10/Adam_1");
  ASSERT_EQ(adam.beta1_power()->shared_name(), "beta1_power");

  Saver saver;  // every live variable: the model twice and Adam's state
  EXPECT_EQ(saver.variables().size(), 42u);
  saver.Restore(prefix);

  const BundleReader reader(prefix);
  EXPECT_EQ(Bits(adam.beta1_power()->value()), std::vector<uint32_t>{4u});  // 5.6e-45
  EXPECT_EQ(std::fpclassify(adam.beta1_power()->value().scalar<float>()), FP_SUBNORMAL);
  for (const auto& [key, v] : saver.variables()) {
    EXPECT_EQ(Bits(v->value()), Bits(reader.Read(key))) << key;
  }

  // Saved again, the bundle is TensorFlow's byte for byte.
  const std::string dir = TempDir();
  saver.Save(dir + "/lenet");
  EXPECT_EQ(ReadFile(DataFilename(dir + "/lenet", 0, 1)), ReadFile(DataFilename(prefix, 0, 1)));
  EXPECT_EQ(ReadFile(IndexFilename(dir + "/lenet")), ReadFile(IndexFilename(prefix)));
}

// MNIST_MLP: layer1/layer2 weights and biases, their EMA shadows and an int32
// global step "Variable". Evaluation restores the shadows into the model.
TEST_F(SaverRealdataTest, EmaFileRestoresAveragesThroughVariablesToRestore) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string prefix = RealdataDir() + "/tf1_saver_mnist_mlp_ema/model.ckpt-29001";
  Variable step(int32_t{0}, "Variable", /*trainable=*/false);
  std::vector<std::unique_ptr<Variable>> model;
  for (auto [layer, in, out] : {std::tuple{"layer1", 784, 500}, std::tuple{"layer2", 500, 10}}) {
    NameScope scope(layer);
    model.push_back(std::make_unique<Variable>(Tensor::Zeros(Shape{in, out}), "weights"));
    model.push_back(std::make_unique<Variable>(Tensor::Zeros(Shape{out}), "biases"));
  }
  ExponentialMovingAverage ema(0.99, /*num_updates=*/int64_t{0});
  std::vector<Variable*> averaged;
  averaged.reserve(model.size());
  for (auto& v : model) averaged.push_back(v.get());
  ema.Apply(averaged);

  const std::map<std::string, Variable*> to_restore = ema.VariablesToRestore();
  EXPECT_EQ(to_restore.size(), 5u);  // 4 averages + the step; shadows themselves not
  EXPECT_EQ(to_restore.at("layer1/weights/ExponentialMovingAverage"), model[0].get());
  EXPECT_EQ(to_restore.at("Variable"), &step);
  Saver(to_restore).Restore(prefix);

  const BundleReader reader(prefix);
  EXPECT_EQ(step.value().scalar<int32_t>(), 29001);
  EXPECT_EQ(Bits(model[0]->value()), Bits(reader.Read("layer1/weights/ExponentialMovingAverage")));
  EXPECT_EQ(Bits(model[3]->value()), Bits(reader.Read("layer2/biases/ExponentialMovingAverage")));
  EXPECT_NE(Bits(model[3]->value()), Bits(reader.Read("layer2/biases")));
  // The plain restore gets the raw weights.
  ResetDefaultNames();
  Variable raw(Tensor::Zeros(Shape{10}), "layer2/biases");
  Saver({&raw}).Restore(prefix);
  EXPECT_EQ(Bits(raw.value()), Bits(reader.Read("layer2/biases")));
}

// NSGUF/PythonLeaning: uniquified names (v1, v1_1) and scopes (foo, foo1, foo/bar).
TEST_F(SaverRealdataTest, ScopesFileRestoresUniquifiedNames) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string prefix = RealdataDir() + "/tf1_saver_scopes_tiny/model.ckpt";
  std::vector<std::unique_ptr<Variable>> vars;
  auto make = [&](const char* name) {
    vars.push_back(std::make_unique<Variable>(Tensor::Zeros(Shape{1}), name));
  };
  {
    NameScope foo("foo");
    make("v");
  }
  {
    NameScope foo1("foo1");
    make("v");
  }
  make("v");
  {
    NameScope foo("foo/");  // re-entered, as variable_scope("foo") does for get_variable
    NameScope bar("bar");
    make("v");
  }
  make("v1");
  make("v1");  // v1_1
  make("v2");
  std::vector<std::string> names;
  names.reserve(vars.size());
  for (auto& v : vars) names.emplace_back(v->shared_name());
  EXPECT_EQ(names,
            (std::vector<std::string>{"foo/v", "foo1/v", "v", "foo/bar/v", "v1", "v1_1", "v2"}));
  Saver().Restore(prefix);
  EXPECT_EQ(vars[2]->value().ToVector<float>(), std::vector<float>{-0.808200419f});
  EXPECT_EQ(vars[3]->value().ToVector<float>(), std::vector<float>{0.318532109f});
  EXPECT_EQ(vars[5]->value().ToVector<float>(), std::vector<float>{1.0f});
  EXPECT_EQ(vars[6]->value().ToVector<float>(), std::vector<float>{2.0f});
}

// tensorflow/models reference data: input_tensor -> dense(4) -> dense_1(1),
// no activation; results.json holds TF's output 0.4701630473136902.
TEST_F(SaverRealdataTest, GoldenDenseForwardAfterASaverRestore) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string dir = RealdataDir() + "/tf1_golden_reference_data/reference_data_test/dense";
  Variable input(Tensor::Zeros(Shape{1, 2}), "input_tensor");
  Dense first(4), second(1);
  first.Build(2);
  second.Build(4);
  ASSERT_EQ(second.kernel().shared_name(), "dense_1/kernel");
  Saver().Restore(dir + "/model.ckpt");
  const float y = second(first(input.value())).scalar<float>();
  double golden = 0;
  std::ifstream(dir + "/results.json").ignore(7) >> golden;  // "[1, 1, 0.47..."
  EXPECT_NEAR(golden, 0.4701630473136902, 1e-15);
  EXPECT_NEAR(y, golden, 1e-6);
}

}  // namespace
}  // namespace eager
