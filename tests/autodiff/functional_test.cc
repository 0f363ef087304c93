// The functional API (autodiff/keras_tensor.h, autodiff/functional.h):
// symbolic shapes, graphs run against the same layers called by hand, shared
// and nested layers, Keras's operation order and checkpoint edges (the
// orders and edges TF 2.21 showed for the same model), and the errors.

#include "autodiff/functional.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autodiff/dense.h"
#include "autodiff/gradient_tape.h"
#include "autodiff/input_layer.h"
#include "autodiff/layers/merging.h"
#include "autodiff/layers/normalization.h"
#include "autodiff/layers/regularization.h"
#include "autodiff/sequential.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "runtime/errors.h"
#include "runtime/graph.h"

namespace eager {
namespace {

std::vector<std::string> Names(const std::vector<Layer*>& layers) {
  std::vector<std::string> names;
  names.reserve(layers.size());
  for (const Layer* layer : layers) names.push_back(layer->name());
  return names;
}

void ExpectMessage(const std::function<void()>& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "expected InvalidArgumentError containing: " << part;
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(FunctionalTest, SymbolicCallsInferShapesAndBuild) {
  const KerasTensor a = Input({3}, DType::kFloat32, "a");
  EXPECT_EQ(a.shape(), Shape::Partial({-1, 3}));
  EXPECT_EQ(a.layer().name(), "a");
  EXPECT_NE(dynamic_cast<InputLayer*>(&a.layer()), nullptr);
  Dense dense(4);
  const KerasTensor h = dense(a);
  EXPECT_EQ(h.shape(), Shape::Partial({-1, 4}));
  EXPECT_EQ(h.dtype(), DType::kFloat32);
  EXPECT_EQ(&h.layer(), &dense);
  EXPECT_TRUE(dense.built());  // as Keras builds on a symbolic call
  // An unknown inner dimension stays unknown; a known one is computed.
  const KerasTensor seq = Input({-1, 3}, DType::kFloat32, "seq");
  const KerasTensor s = dense(seq);
  EXPECT_EQ(s.shape(), Shape::Partial({-1, -1, 4}));
  layers::Concatenate concat;
  EXPECT_EQ(concat({h, h}).shape(), Shape::Partial({-1, 8}));
}

// The two-input, two-output model with a shared Dense that
// tests/tf_keras/keras_functional_test.py gives TF.
struct TwoTowers {
  KerasTensor a = Input({3}, DType::kFloat32, "a");
  KerasTensor b = Input({2}, DType::kFloat32, "b");
  Dense pa{3, nullptr, true, 1, "pa"};
  Dense pb{3, nullptr, true, 2, "pb"};
  Dense shared{4, nullptr, true, 3, "shared"};
  layers::Concatenate concat{-1, "concatenate"};
  Dense o1{2, nullptr, true, 4, "o1"};
  Dense o2{1, nullptr, true, 5, "o2"};
  std::unique_ptr<Model> model;
  TwoTowers() {
    const KerasTensor sa = shared(pa(a));
    const KerasTensor sb = shared(pb(b));
    const KerasTensor c = concat({sa, sb});
    model = std::make_unique<Model>(std::vector<KerasTensor>{a, b},
                                    std::vector<KerasTensor>{o1(c), o2(sb)}, "towers");
  }
};

TEST(FunctionalTest, RunsTheGraphAsTheLayersCalledByHand) {
  TwoTowers t;
  const Tensor xa = RandomUniform(Shape{5, 3}, 7, -1.0, 1.0);
  const Tensor xb = RandomUniform(Shape{5, 2}, 8, -1.0, 1.0);
  const std::vector<Tensor> ys = (*t.model)({xa, xb});
  ASSERT_EQ(ys.size(), 2u);
  const Tensor sb = t.shared(t.pb(xb));
  const Tensor c = t.concat({t.shared(t.pa(xa)), sb});
  EXPECT_EQ(ys[0].ToVector<float>(), t.o1(c).ToVector<float>());
  EXPECT_EQ(ys[1].ToVector<float>(), t.o2(sb).ToVector<float>());
  EXPECT_EQ(ys[0].shape(), (Shape{5, 2}));
  // The shared Dense is one layer: its two variables once (5 Dense layers).
  EXPECT_EQ(t.model->TrainableVariables().size(), 10u);
}

TEST(FunctionalTest, OperationsInKerasOrder) {
  TwoTowers t;
  // model.operations (Keras 3) and model.layers (tf_keras) of the same
  // model in TF 2.21.
  EXPECT_EQ(Names(t.model->operations()),
            (std::vector<std::string>{"a", "b", "pa", "pb", "shared", "concatenate", "o1", "o2"}));
}

TEST(FunctionalTest, CheckpointEdgesOfEachKerasLine) {
  TwoTowers t;
  // tf_keras (as TF 2.21 wrote it): layer-0, layer-1, then each weighted
  // layer's layer_with_weights-k before its layer-i.
  std::vector<std::string> edges;
  for (const Trackable::Child& c : t.model->Children()) edges.push_back(c.name);
  EXPECT_EQ(edges,
            (std::vector<std::string>{"layer-0", "layer-1", "layer_with_weights-0", "layer-2",
                                      "layer_with_weights-1", "layer-3", "layer_with_weights-2",
                                      "layer-4", "layer-5", "layer_with_weights-3", "layer-6",
                                      "layer_with_weights-4", "layer-7"}));
  SetKerasLayout(*t.model, KerasLayout::kKeras3);
  const std::vector<Trackable::Child> root = t.model->Children();
  ASSERT_EQ(root.size(), 1u);
  EXPECT_EQ(root[0].name, "_operations");
  const std::vector<Trackable::Child> ops = root[0].object->Children();
  ASSERT_EQ(ops.size(), 8u);
  EXPECT_EQ(ops[4].name, "4");
  EXPECT_EQ(ops[4].object, &t.shared);
  // Keras 3's Dense kernel edge reached through the list.
  EXPECT_EQ(ops[4].object->Children()[0].name, "_kernel");
}

TEST(FunctionalTest, TrainingIsPassedThrough) {
  const KerasTensor x = Input({200});
  layers::Dropout dropout(0.5, 11);
  Model model({x}, {dropout(x)});
  const Tensor ones = Tensor::FromVector<float>(std::vector<float>(200, 1.0f), Shape{1, 200});
  EXPECT_EQ(model(ones).ToVector<float>(), ones.ToVector<float>());
  const std::vector<float> trained = model(ones, /*training=*/true).ToVector<float>();
  int zeros = 0;
  for (const float v : trained) zeros += v == 0.0f;
  EXPECT_GT(zeros, 50);
  EXPECT_LT(zeros, 150);
}

// The shape runs of a symbolic call are inference calls: they build
// BatchNormalization but leave its moving statistics as initialized; the
// model's training call then updates them.
TEST(FunctionalTest, SymbolicCallsLeaveMovingStatisticsAlone) {
  const KerasTensor x = Input({3});
  layers::BatchNormalization bn;
  Model model({x}, {bn(x)});
  ASSERT_TRUE(bn.built());
  EXPECT_EQ(bn.moving_mean().value().ToVector<float>(), std::vector<float>(3, 0.0f));
  EXPECT_EQ(bn.moving_variance().value().ToVector<float>(), std::vector<float>(3, 1.0f));
  model(Tensor::FromVector<float>({1, 2, 3, 3, 4, 5}, Shape{2, 3}), /*training=*/true);
  // Keras's momentum 0.99: mean (2, 3, 4) moves the moving mean 1% of the way.
  const std::vector<float> mean = bn.moving_mean().value().ToVector<float>();
  EXPECT_NEAR(mean[0], 0.02f, 1e-6);
  EXPECT_NEAR(mean[2], 0.04f, 1e-6);
}

TEST(FunctionalTest, NestedModelsAndSequentialsAreLayers) {
  const KerasTensor in = Input({3}, DType::kFloat32, "inner_in");
  Dense d1(4, nullptr, true, 1);
  Model inner({in}, {d1(in)}, "inner");
  Sequential seq;
  seq.Add(std::make_unique<Dense>(2, nullptr, true, 2));
  const KerasTensor x = Input({3}, DType::kFloat32, "outer_in");
  const KerasTensor y = seq(inner(x));
  EXPECT_EQ(y.shape(), Shape::Partial({-1, 2}));
  Model outer({x}, {y}, "outer");
  EXPECT_EQ(Names(outer.operations()), (std::vector<std::string>{"outer_in", "inner", seq.name()}));
  const Tensor v = RandomUniform(Shape{2, 3}, 9, -1.0, 1.0);
  EXPECT_EQ(outer(v).ToVector<float>(), seq(d1(v)).ToVector<float>());
  EXPECT_EQ(outer.TrainableVariables().size(), 4u);
  // Gradients flow through the nested graph to every variable.
  GradientTape tape;
  const Tensor loss = ReduceSum(outer(v));
  std::vector<const Variable*> vars;
  for (Variable* var : outer.TrainableVariables()) vars.push_back(var);
  for (const auto& g : tape.Gradient(loss, vars)) EXPECT_TRUE(g.has_value());
}

// Orders TF 2.21 gives (Keras 3 and tf_keras alike): an input no output
// uses is an operation too, after the used inputs; an inner tensor as a
// model input starts the model from a new InputLayer, its producers left out.
TEST(FunctionalTest, UnusedAndInnerInputsAsKeras) {
  const KerasTensor a = Input({3}, DType::kFloat32, "a");
  const KerasTensor b = Input({2}, DType::kFloat32, "b");
  Dense d(2, nullptr, true, 1, "d");
  Model unused({a, b}, {d(a)}, "unused");
  EXPECT_EQ(Names(unused.operations()), (std::vector<std::string>{"a", "b", "d"}));
  const Tensor xa = RandomUniform(Shape{2, 3}, 3, -1.0, 1.0);
  EXPECT_EQ(unused(std::vector<Tensor>{xa, Tensor::Zeros(Shape{2, 2})})[0].ToVector<float>(),
            d(xa).ToVector<float>());

  Dense h(4, nullptr, true, 2, "h");
  Dense d2(1, nullptr, true, 3, "d2");
  const KerasTensor inner = h(a);
  Model from_inner({inner}, {d2(inner)}, "from_inner");
  const std::vector<Layer*> ops = from_inner.operations();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_NE(dynamic_cast<InputLayer*>(ops[0]), nullptr);
  EXPECT_EQ(ops[1], &d2);
  const Tensor x = RandomUniform(Shape{2, 4}, 4, -1.0, 1.0);
  EXPECT_EQ(from_inner(x).ToVector<float>(), d2(x).ToVector<float>());
  ExpectMessage([&] { from_inner(Tensor::Zeros(Shape{2, 3})); }, "expected inputs of shape");
}

TEST(FunctionalTest, ErrorsNameTheModelAndTensor) {
  TwoTowers t;
  const Tensor xa = Tensor::Zeros(Shape{2, 3});
  ExpectMessage([&] { (*t.model)(std::vector<Tensor>{xa}); },
                "Model 'towers' takes 2 inputs, got 1");
  ExpectMessage([&] { (*t.model)({xa, Tensor::Zeros(Shape{2, 3})}); }, "InputLayer 'b'");
  ExpectMessage(
      [&] {
        (*t.model)({xa, Tensor::Zeros(Shape{2, 2}, DType::kFloat64)});
      },
      "input 1 ('b') must be float32");
  ExpectMessage([&] { (*t.model)(xa); }, "has 2 inputs and 2 outputs");
  // An output that needs an Input the model does not list.
  const KerasTensor other = Input({2}, DType::kFloat32, "other");
  Dense d(1);
  ExpectMessage([&] { Model({t.a}, {d(other)}, "m"); },
                "depend on Input 'other', which is not among the model's inputs");
  ExpectMessage(
      [] {
        Input({3, -2}, DType::kFloat32, "bad");
      },
      "Input 'bad': dimensions must be >= 0 or -1 (unknown), got -2");
  // The shape runs of a symbolic call would add nodes to a graph.
  Graph graph;
  Graph::AsDefault in(graph);
  Dense fresh(1);
  EXPECT_THROW(fresh(t.a), FailedPreconditionError);
}

}  // namespace
}  // namespace eager
