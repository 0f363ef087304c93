// SavedModelExport: an eager model traced into a graph and written as a
// SavedModel; eager's LoadSavedModel runs it back here, TF 2.21 judges it in
// tests/tf_saved_model. What a trace cannot express fails naming the cause.

#include "saving/saver/saved_model_export.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "autodiff/dense.h"
#include "autodiff/exponential_moving_average.h"
#include "autodiff/module.h"
#include "ops/array_ops.h"
#include "ops/conv_ops.h"
#include "ops/execute.h"
#include "ops/fused_matmul.h"
#include "ops/nn_ops.h"
#include "ops/operators.h"
#include "ops/pooling_ops.h"
#include "ops/session.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "runtime/variable.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::TempDir;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// Deterministic inputs that are not round numbers.
Tensor Ramp(const Shape& shape, float scale, float offset) {
  std::vector<float> values(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = offset + scale * static_cast<float>(i % 11);
  return Tensor::FromVector<float>(values, shape);
}

struct TwoLayers : Module {
  Dense hidden{5, Relu, true, 7};
  Dense out{3, nullptr, true, 8};
  TwoLayers() {
    Track("hidden", hidden);
    Track("out", out);
  }
  Tensor operator()(const Tensor& x) { return out(hidden(x)); }
};

// The model with a second output, as a served classifier has.
struct Classifier {
  TwoLayers& model;
  std::vector<Tensor> operator()(const Tensor& x) const {
    const Tensor logits = model(x);
    return {logits, Softmax(logits)};
  }
};

std::map<std::string, Signature> ServingSignature() {
  return {{"serving_default",
           Signature{{"images", TensorSpec(DType::kFloat32, {-1, 4})}, {"logits", "probs"}}}};
}

TEST(SavedModelExportTest, TracedModelRunsBackWithEagersValues) {
  TwoLayers model;
  const Tensor x = Ramp(Shape({6, 4}), 0.31f, -1.2f);
  const Tensor eager_logits = model(x);  // builds the layers
  const std::string dir = TempDir() + "/export/1";
  const std::string pb = SavedModelExport(Classifier{model}, dir, ServingSignature());
  EXPECT_EQ(pb, dir + "/saved_model.pb");
  EXPECT_TRUE(std::filesystem::exists(dir + "/variables/variables.index"));

  // The model's own variables stay eager; the graph had mirrors of them.
  EXPECT_FALSE(model.hidden.kernel().in_graph());
  EXPECT_THAT(model(x).data<float>(), ElementsAreArray(eager_logits.data<float>()));

  SavedModelBundle loaded = LoadSavedModel(dir, {"serve"});
  const MetaSignature& sig = loaded.signature("serving_default");
  EXPECT_EQ(sig.method_name, "tensorflow/serving/predict");
  EXPECT_EQ(sig.inputs.at("images").name, "images:0");
  EXPECT_EQ(sig.inputs.at("images").shape.dims, (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(sig.outputs.at("logits").name, "logits:0");
  EXPECT_EQ(sig.outputs.at("probs").name, "probs:0");
  EXPECT_EQ(sig.outputs.at("probs").shape.dims, (std::vector<int64_t>{-1, 3}));

  // TF's node types and names: the layers' scopes, variables as VariableV2
  // named as the model's (the layers' names depend on what the process made
  // before: "dense", "dense_1", ...).
  const Graph& graph = loaded.graph();
  const std::string hidden = model.hidden.name();
  for (const auto& [name, op] : std::vector<std::pair<std::string, std::string>>{
           {"images", "Placeholder"},
           {std::string(model.hidden.kernel().shared_name()), "VariableV2"},
           {hidden + "/MatMul", "MatMul"},
           {hidden + "/Relu", "Relu"},
           {std::string(model.out.bias()->shared_name()), "VariableV2"},
           {"probs", "Identity"}}) {
    const Node* node = graph.FindNode(name);
    ASSERT_NE(node, nullptr) << name;
    EXPECT_EQ(node->op, op) << name;
  }
  EXPECT_EQ(loaded.graph().GlobalVariables().size(), 4u);

  Session sess(loaded.graph());
  const Tensor batch = Ramp(Shape({9, 4}), -0.17f, 0.9f);  // another batch size
  auto out = loaded.Run(sess, "serving_default", {{"images", batch}});
  // The graph runs MatMul, AddV2, Relu: bit-identical to eager's fusion.
  EXPECT_THAT(out.at("logits").data<float>(), ElementsAreArray(model(batch).data<float>()));
  EXPECT_THAT(out.at("probs").data<float>(), ElementsAreArray(Softmax(model(batch)).data<float>()));
}

// The default signature is traced first: its tensors get the plain names a
// TF Serving client asks for, whatever other keys sort before it ("raw" <
// "serving_default").
TEST(SavedModelExportTest, DefaultSignatureGetsThePlainNames) {
  TwoLayers model;
  const Tensor x = Ramp(Shape({2, 4}), 0.13f, -0.4f);
  model(x);
  std::map<std::string, Signature> signatures = ServingSignature();
  signatures.emplace(
      "raw", Signature{{"images", TensorSpec(DType::kFloat32, {-1, 4})}, {"logits", "probs"}});
  const std::string dir = TempDir() + "/export_two/1";
  SavedModelExport(Classifier{model}, dir, signatures);

  SavedModelBundle loaded = LoadSavedModel(dir, {"serve"});
  const MetaSignature& serving = loaded.signature("serving_default");
  EXPECT_EQ(serving.inputs.at("images").name, "images:0");
  EXPECT_EQ(serving.outputs.at("logits").name, "logits:0");
  const MetaSignature& raw = loaded.signature("raw");
  EXPECT_EQ(raw.inputs.at("images").name, "images_1:0");
  EXPECT_EQ(raw.outputs.at("probs").name, "probs_1:0");
  // Both run and agree: the same variables, the same call.
  Session sess(loaded.graph());
  auto a = loaded.Run(sess, "serving_default", {{"images", x}});
  auto b = loaded.Run(sess, "raw", {{"images", x}});
  EXPECT_THAT(a.at("probs").data<float>(), ElementsAreArray(b.at("probs").data<float>()));
}

// A small convolutional classifier, shaped as the CNN main job's
// (examples/fashion_mnist/cnn.h): flat images reshaped in the call, Conv2D +
// BiasAdd + Relu, MaxPool, Dense.
struct SmallCnn : Module {
  Variable* filter = nullptr;
  Variable* bias = nullptr;
  Dense out{3, nullptr, true, 9};
  SmallCnn() {
    filter = &AddVariable("filter", Ramp(Shape({3, 3, 1, 2}), 0.07f, -0.3f));
    bias = &AddVariable("bias", Ramp(Shape({2}), 0.05f, -0.02f));
    Track("out", out);
  }
  Tensor operator()(const Tensor& images) {
    const Tensor x = Reshape(images, {-1, 6, 6, 1});
    const Tensor conv =
        Relu(BiasAdd(Conv2D(x, filter->value(), {.padding = "SAME"}), bias->value()));
    return out(Reshape(MaxPool(conv), {-1, 18}));
  }
};

TEST(SavedModelExportTest, ConvolutionalModelRunsBackWithEagersValues) {
  SmallCnn model;
  model(Ramp(Shape({2, 36}), 0.05f, -0.1f));  // builds the Dense layer
  const std::string dir = TempDir() + "/cnn_export/1";
  SavedModelExport([&model](const Tensor& x) { return model(x); }, dir,
                   {{"serving_default",
                     Signature{{"images", TensorSpec(DType::kFloat32, {-1, 36})}, {"logits"}}}});
  SavedModelBundle loaded = LoadSavedModel(dir, {"serve"});
  for (const char* op : {"Conv2D", "BiasAdd", "MaxPool", "Reshape"}) {
    bool found = false;
    for (int i = 0; i < loaded.graph().num_nodes(); ++i) found |= loaded.graph().node(i).op == op;
    EXPECT_TRUE(found) << op;
  }
  Session sess(loaded.graph());
  const Tensor batch = Ramp(Shape({5, 36}), -0.13f, 0.6f);  // another batch size
  const Tensor expected = model(batch);
  const Tensor got = loaded.Run(sess, "serving_default", {{"images", batch}}).at("logits");
  ASSERT_EQ(got.shape(), expected.shape());
  EXPECT_THAT(got.data<float>(),
              ::testing::Pointwise(::testing::FloatNear(1e-6f), expected.data<float>()));
}

TEST(SavedModelExportTest, ReadInsteadExportsTheMovingAverages) {
  TwoLayers model;
  const Tensor x = Ramp(Shape({2, 4}), 0.2f, 0.1f);
  (void)model(x);
  ExponentialMovingAverage ema(0.5);
  const std::vector<Variable*> weights = model.TrainableVariables();
  ema.Apply(weights);
  for (Variable* v : weights) v->Assign(Ramp(v->shape(), 0.05f, -0.2f));
  ema.Apply();  // the shadows are now halfway between
  std::map<std::string, Signature> signatures = {
      {"raw", Signature{{"images", TensorSpec(DType::kFloat32, {-1, 4})}, {"logits"}}},
      {"serving_default", Signature{{"images", TensorSpec(DType::kFloat32, {-1, 4})}, {"logits"}}}};
  for (Variable* v : weights) {
    signatures.at("serving_default").read_instead.emplace(v, ema.AverageVariable(*v));
  }
  const std::string dir = TempDir() + "/1";
  SavedModelExport(model, dir, signatures);

  const Tensor raw = model(x);
  Tensor averaged;
  {
    std::vector<Tensor> saved;
    for (Variable* v : weights) {
      saved.push_back(v->value());
      v->Assign(ema.Average(*v));
    }
    averaged = model(x);
    for (size_t i = 0; i < weights.size(); ++i) weights[i]->Assign(saved[i]);
  }
  SavedModelBundle loaded = LoadSavedModel(dir, {"serve"});
  // Both sets of variables, under TF's EMA names.
  EXPECT_EQ(ema.AverageName(model.hidden.kernel()),
            StrCat(model.hidden.kernel().shared_name(), "/ExponentialMovingAverage"));
  EXPECT_NE(loaded.graph().FindNode(ema.AverageName(model.hidden.kernel())), nullptr);
  EXPECT_EQ(loaded.graph().GlobalVariables().size(), 8u);
  Session sess(loaded.graph());
  EXPECT_THAT(loaded.Run(sess, "raw", {{"images", x}}).at("logits").data<float>(),
              ElementsAreArray(raw.data<float>()));
  EXPECT_THAT(loaded.Run(sess, "serving_default", {{"images", x}}).at("logits").data<float>(),
              ElementsAreArray(averaged.data<float>()));
}

TEST(SavedModelExportTest, ValueDependentBranchFailsNamingTheTensor) {
  TwoLayers model;
  (void)model(Ramp(Shape({1, 4}), 1, 0));
  auto branching = [&](const Tensor& x) {
    const Tensor h = model(x);
    return h.data<float>()[0] > 0 ? h : Relu(h);  // needs a value the trace does not have
  };
  const std::string dir = TempDir() + "/1";
  try {
    SavedModelExport(
        branching, dir,
        {{"serving_default", Signature{{"x", TensorSpec(DType::kFloat32, {-1, 4})}, {"y"}}}});
    FAIL() << "expected FailedPreconditionError";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("tracing signature 'serving_default'"));
    EXPECT_THAT(e.what(), HasSubstr(StrCat("'", model.out.name(), "/add:0'")));
    EXPECT_THAT(e.what(), HasSubstr("value-dependent branch"));
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/saved_model.pb"));
}

TEST(SavedModelExportTest, OpWithoutGraphFormFailsNamingIt) {
  Variable w(Ramp(Shape({4, 2}), 0.1f, 0), "w");
  Variable b(Ramp(Shape({2}), 0.1f, 0), "b");
  auto fused = [&](const Tensor& x) {
    return Execute(kFusedMatMulOp, std::vector<Tensor>{x, w.value(), b.value()},
                   Attrs{{"relu", true}, {"transpose_a", false}, {"transpose_b", false}});
  };
  EXPECT_THROW(
      {
        try {
          SavedModelExport(fused, TempDir() + "/1",
                           {{"s", Signature{{"x", TensorSpec(DType::kFloat32, {-1, 4})}, {"y"}}}});
        } catch (const UnimplementedError& e) {
          EXPECT_THAT(e.what(), HasSubstr("_FusedMatMul has no graph form"));
          EXPECT_THAT(e.what(), HasSubstr("tracing signature 's'"));
          throw;
        }
      },
      UnimplementedError);
}

TEST(SavedModelExportTest, ChangingEagerStateFailsNamingTheVariable) {
  Variable calls(0.0f, "calls");
  auto counting = [&](const Tensor& x) {
    calls.AssignAdd(Tensor(1.0f));  // would count once, at export, and never when served
    return Relu(x);
  };
  EXPECT_THAT(
      [&] {
        SavedModelExport(counting, TempDir() + "/1",
                         {{"s", Signature{{"x", TensorSpec(DType::kFloat32, {-1, 4})}, {"y"}}}});
      },
      ::testing::ThrowsMessage<UnimplementedError>(
          HasSubstr("Variable::AssignAdd on 'calls' while tracing into a graph")));
  EXPECT_EQ(calls.value().scalar<float>(), 0.0f);
}

TEST(SavedModelExportTest, UnbuiltLayerFailsNamingItsVariable) {
  Dense layer(3, nullptr, true, 1, "late");
  auto call = [&](const Tensor& x) { return layer(x); };
  try {
    SavedModelExport(call, TempDir() + "/1",
                     {{"s", Signature{{"x", TensorSpec(DType::kFloat32, {-1, 4})}, {"y"}}}});
    FAIL() << "expected FailedPreconditionError";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("created variable 'late/kernel'"));
    EXPECT_THAT(e.what(), HasSubstr("call the model eagerly once"));
  }
}

TEST(SavedModelExportTest, ResultsMustMatchTheSignature) {
  Variable w(Ramp(Shape({4, 2}), 0.1f, 0), "w");
  const auto spec = TensorSpec(DType::kFloat32, {-1, 4});
  auto one = [&](const Tensor& x) { return Relu(x); };
  EXPECT_THAT(
      [&] {
        SavedModelExport(one, TempDir() + "/1", {{"s", Signature{{"x", spec}, {"a", "b"}}}});
      },
      ::testing::ThrowsMessage<InvalidArgumentError>(
          HasSubstr("returned 1 tensors; signature 's' names 2 outputs (a, b)")));
  const Tensor value = w.value();
  auto constant = [&](const Tensor&) -> const Tensor& { return value; };  // made before the trace
  EXPECT_THAT(
      [&] {
        SavedModelExport(constant, TempDir() + "/2", {{"s", Signature{{"x", spec}, {"y"}}}});
      },
      ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("output 'y' is an eager tensor")));
  auto two_inputs = std::map<std::string, Signature>{
      {"s", Signature{std::vector<Signature::Input>{{"x", spec}, {"z", spec}}, {"y"}}}};
  EXPECT_THAT([&] { SavedModelExport(one, TempDir() + "/3", two_inputs); },
              ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("has 2 inputs")));
}

TEST(SavedModelExportTest, SeveralInputsAsAVector) {
  auto sum = [](const std::vector<Tensor>& in) { return in[0] + Relu(in[1]); };
  const auto spec = TensorSpec(DType::kFloat32, {-1, 2});
  const std::string dir = TempDir() + "/1";
  SavedModelExport(
      sum, dir, {{"s", Signature{std::vector<Signature::Input>{{"a", spec}, {"b", spec}}, {"y"}}}});
  SavedModelBundle loaded = LoadSavedModel(dir, {"serve"});
  Session sess(loaded.graph());
  const Tensor a = Ramp(Shape({2, 2}), 1, 0), b = Ramp(Shape({2, 2}), -1, 1);
  EXPECT_THAT(loaded.Run(sess, "s", {{"a", a}, {"b", b}}).at("y").data<float>(),
              ElementsAreArray((a + Relu(b)).data<float>()));
}

TEST(SavedModelExportTest, NeverOverwritesAnExport) {
  auto id = [](const Tensor& x) { return Relu(x); };
  const auto sigs =
      std::map<std::string, Signature>{{"s", {{"x", TensorSpec(DType::kFloat32, {2})}, {"y"}}}};
  const std::string dir = TempDir() + "/1";
  SavedModelExport(id, dir, sigs);
  EXPECT_THROW(SavedModelExport(id, dir, sigs), FailedPreconditionError);
}

TEST(CaptureVariablesTest, MirrorsEagerVariablesOncePerSource) {
  Variable a(1.5f, "cap_a");
  Variable b(2.5f, "cap_b");
  Variable wide(Tensor::FromVector<float>({1, 2}, Shape({2})), "cap_wide");
  Variable empty(DType::kFloat32, Shape{}, "cap_empty");
  Graph graph;
  Graph::AsDefault in(graph);
  {
    Graph::CaptureVariables capture(graph);
    EXPECT_EQ(a.value().name(), "cap_a/read:0");
    EXPECT_EQ(a.value().name(), "cap_a/read:0");  // one mirror per source
    EXPECT_EQ(graph.CapturedVariable(a)->stored_value().scalar<float>(), 1.5f);
    EXPECT_THROW((void)empty.value(), FailedPreconditionError);
  }
  {
    Graph::CaptureVariables substitute(graph, {{&a, &b}, {&b, &wide}});
    EXPECT_EQ(a.value().name(), "cap_b/read:0");
    EXPECT_THAT([&] { (void)b.value(); }, ::testing::ThrowsMessage<InvalidArgumentError>(
                                              HasSubstr("a substitute must match")));
  }
  EXPECT_FALSE(a.value().is_symbolic());  // no scope: an eager read, as before
}

TEST(CaptureVariablesTest, ANameTakenInTheGraphFails) {
  Variable v(1.0f, "taken_name");
  Graph graph;
  Graph::AsDefault in(graph);
  graph.AddNode(Node{.name = "taken_name", .op = "NoOp"});
  Graph::CaptureVariables capture(graph);
  EXPECT_THAT([&] { (void)v.value(); },
              ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("the name is taken")));
  EXPECT_EQ(graph.GlobalVariables().size(), 0u);
}

}  // namespace
}  // namespace eager
