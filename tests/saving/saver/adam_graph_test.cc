// TF1 Adam in graph mode (Adam::Minimize(loss)): graph gradients equal the
// GradientTape's bit for bit, a few training steps in a Session equal eager
// TF1 Adam's bit for bit (variables, slots and powers), and a graph-mode
// Saver writes TF1's names, in a file the independent verifier accepts.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "autodiff/adam.h"
#include "autodiff/gradient_tape.h"
#include "autodiff/graph_gradients.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/conv_ops.h"
#include "ops/graph_ops.h"
#include "ops/matmul.h"
#include "ops/nn_ops.h"
#include "ops/pooling_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/saver/saver.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::TempDir;

// A small LeNet-like model: conv 3x3 SAME + bias, ReLU, 2x2 max pool,
// flatten, dense to 3 classes; mean sparse cross-entropy.
struct Model {
  Variable w1, b1, w2, b2;
  explicit Model(uint64_t seed)
      : w1(RandomUniform(Shape{3, 3, 1, 4}, seed, -0.5, 0.5, DType::kFloat32), "conv/kernel"),
        b1(RandomUniform(Shape{4}, seed + 1, -0.1, 0.1, DType::kFloat32), "conv/bias"),
        w2(RandomUniform(Shape{36, 3}, seed + 2, -0.5, 0.5, DType::kFloat32), "dense/kernel"),
        b2(RandomUniform(Shape{3}, seed + 3, -0.1, 0.1, DType::kFloat32), "dense/bias") {}
  std::vector<Variable*> variables() { return {&w1, &b1, &w2, &b2}; }
  Tensor Loss(const Tensor& x, const Tensor& labels) {
    const Tensor h = MaxPool(Relu(Add(Conv2D(x, w1.value(), {.padding = "SAME"}), b1.value())));
    const Tensor logits = Add(MatMul(Reshape(h, {5, 36}), w2.value()), b2.value());
    return ReduceMean(SparseSoftmaxCrossEntropyWithLogits(labels, logits));
  }
};

Tensor Images() { return RandomUniform(Shape{5, 6, 6, 1}, 11, 0.0, 1.0, DType::kFloat32); }
Tensor Labels() { return Tensor::Vector<int32_t>({0, 2, 1, 1, 0}); }

AdamOptions Tf1Options(double learning_rate = 0.001) {
  AdamOptions o;
  o.learning_rate = learning_rate;
  o.tf1_compatible = true;
  return o;
}

void ExpectSameBits(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  EXPECT_EQ(std::memcmp(got.bytes().data(), want.bytes().data(), got.bytes().size()), 0)
      << what << ": graph " << got << " vs eager " << want;
}

TEST(GraphGradientsTest, EqualTheTapesBitForBitAndLiveUnderGradients) {
  Model eager_model(1);
  std::vector<std::optional<Tensor>> want;
  {
    GradientTape tape;
    const Tensor loss = eager_model.Loss(Images(), Labels());
    want = tape.Gradient(loss, eager_model.variables());
  }
  Graph graph;
  Graph::AsDefault in(graph);
  Model model(1);
  const Tensor x = Placeholder(DType::kFloat32, Shape{5, 6, 6, 1}, "x");
  const Tensor loss = model.Loss(x, Labels());
  const std::vector<std::optional<Tensor>> grads = Gradients(loss, model.variables());
  ASSERT_EQ(grads.size(), 4u);
  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(grads[i].has_value());
    EXPECT_THAT(grads[i]->name(), ::testing::StartsWith("gradients/"));
    ExpectSameBits(sess.Run(*grads[i], {{x, Images()}}), *want[i],
                   std::string(model.variables()[i]->shared_name()));
  }
  // TF's node names: one scope per forward node; the images get no gradient.
  EXPECT_NE(graph.FindNode("gradients/grad_ys_0"), nullptr);
  EXPECT_NE(graph.FindNode("gradients/Conv2D_grad/Conv2DBackpropFilter"), nullptr);
  EXPECT_EQ(graph.FindNode("gradients/Conv2D_grad/Conv2DBackpropInput"), nullptr);
  EXPECT_NE(graph.FindNode("gradients/MaxPool_grad/MaxPoolGrad"), nullptr);
  EXPECT_NE(graph.FindNode("gradients/MatMul_grad/MatMul_1"), nullptr);
  // A second call opens "gradients_1".
  const std::vector<std::optional<Tensor>> again = Gradients(loss, {&model.b2});
  EXPECT_THAT(again[0]->name(), ::testing::StartsWith("gradients_1/"));
}

TEST(GraphGradientsTest, UnconnectedVariableGetsNoneAndErrorsNameTheProblem) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable a(Tensor::Vector<float>({1, 2}), "a");
  Variable b(Tensor::Vector<float>({3}), "b");
  const Tensor loss = ReduceSum(Square(a.value()));
  const std::vector<std::optional<Tensor>> grads = Gradients(loss, {&a, &b});
  EXPECT_TRUE(grads[0].has_value());
  EXPECT_FALSE(grads[1].has_value());
  EXPECT_THROW(Gradients(Tensor(1.0f), {&a}), InvalidArgumentError);
  Adam keras;  // Keras mode has no graph Minimize
  EXPECT_THROW(keras.Minimize(loss, {&a}), FailedPreconditionError);
  Adam tf1(Tf1Options());
  EXPECT_THROW(tf1.Minimize(ReduceSum(Square(b.value())), {&a}), InvalidArgumentError);
}

constexpr int kSteps = 3;

// Eager TF1 Adam: the reference.
std::map<std::string, Tensor> TrainEagerly() {
  Model model(2);
  Adam adam(Tf1Options(0.01));
  for (int step = 0; step < kSteps; ++step) {
    GradientTape tape;
    const Tensor loss = model.Loss(Images(), Labels());
    adam.ApplyGradients(tape.Gradient(loss, model.variables()), model.variables());
  }
  std::map<std::string, Tensor> out;
  const char* names[] = {"conv/kernel", "conv/bias", "dense/kernel", "dense/bias"};
  for (size_t i = 0; i < 4; ++i) {
    Variable* v = model.variables()[i];
    out[names[i]] = v->value();
    out[std::string(names[i]) + "/Adam"] = adam.GetSlot(*v, "m")->value();
    out[std::string(names[i]) + "/Adam_1"] = adam.GetSlot(*v, "v")->value();
  }
  out["beta1_power"] = adam.beta1_power()->value();
  out["beta2_power"] = adam.beta2_power()->value();
  return out;
}

TEST(AdamGraphTest, TrainsBitForBitAsEagerTf1AdamAndSavesTf1Names) {
  const std::map<std::string, Tensor> want = TrainEagerly();
  const std::string dir = TempDir();
  Graph graph;
  Graph::AsDefault in(graph);
  Model model(2);
  const Tensor x = Placeholder(DType::kFloat32, Shape{5, 6, 6, 1}, "x");
  const Tensor loss = model.Loss(x, Labels());
  Adam adam(Tf1Options(0.01));
  const Operation train = adam.Minimize(loss);
  EXPECT_EQ(train.name(), "Adam");
  EXPECT_EQ(graph.node(train.index()).op, "NoOp");
  const Node* update = graph.FindNode("Adam/update_conv/kernel/ApplyAdam");
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(update->op, "ApplyAdam");
  EXPECT_EQ(update->inputs[0], "conv/kernel");
  EXPECT_EQ(update->inputs[1], "conv/kernel/Adam");
  EXPECT_EQ(update->inputs[2], "conv/kernel/Adam_1");
  EXPECT_EQ(update->inputs[3], "beta1_power/read");
  EXPECT_EQ(update->inputs[5], "Adam/learning_rate");
  // The powers advance after every update.
  ASSERT_NE(graph.FindNode("Adam/mul"), nullptr);
  EXPECT_THAT(graph.FindNode("Adam/mul")->inputs,
              ::testing::Contains("^Adam/update_dense/bias/ApplyAdam"));
  ASSERT_NE(graph.FindNode("Adam/Assign"), nullptr);
  EXPECT_EQ(graph.FindNode("Adam/Assign")->inputs[0], "beta1_power");

  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  float first_loss = 0, last_loss = 0;
  for (int step = 0; step < kSteps; ++step) {
    const auto out = sess.Run({loss, train}, {{x, Images()}});
    (step == 0 ? first_loss : last_loss) = out[0]->scalar<float>();
  }
  EXPECT_LT(last_loss, first_loss);  // it trains

  Saver saver;
  const std::string prefix = saver.Save(sess, dir + "/model.ckpt");
  BundleReader reader(prefix);
  std::vector<std::string> keys;
  keys.reserve(want.size());
  for (const auto& [key, value] : want) keys.push_back(key);
  EXPECT_EQ(reader.Keys(), keys);  // exactly TF1's names, nothing else
  for (const auto& [key, value] : want) ExpectSameBits(reader.Read(key), value, key);
  // beta1_power starts at beta1 and is multiplied after each step, in float32.
  EXPECT_EQ(reader.Read("beta1_power").scalar<float>(), 0.9f * 0.9f * 0.9f * 0.9f);

  EAGER_SKIP_WITHOUT_TFCKPT();
  std::string output;
  EXPECT_EQ(testing::TfckptVerify(prefix, &output), 0) << output;
}

}  // namespace
}  // namespace eager
