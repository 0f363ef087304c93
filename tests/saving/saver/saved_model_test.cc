// SavedModel: TF1 SavedModels written by TensorFlow (../shared/realdata) load
// and run their signatures with TF's documented outputs; eager's own exports
// (SavedModelBuilder) read back. tests/tf_saved_model/saved_model.py has TF 2.21 judge
// eager's exports.

#include "saving/saver/saved_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "ops/graph_ops.h"
#include "ops/matmul.h"
#include "ops/operators.h"
#include "ops/session.h"
#include "runtime/names.h"
#include "runtime/variable.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::RealdataDir;
using ::eager::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Realdata(const std::string& name) { return RealdataDir() + "/" + name + "/00000123"; }

TEST(SavedModelTest, HalfPlusTwoFromTf114RunsItsSignatures) {
  EAGER_SKIP_WITHOUT_REALDATA();
  SavedModelBundle model = LoadSavedModel(Realdata("savedmodel_tf1_half_plus_two"), {"serve"});
  EXPECT_EQ(model.main_op(), model.meta_graph().collections.at("saved_model_main_op").node_list[0]);
  const MetaSignature& sig = model.signature("serving_default");
  EXPECT_EQ(sig.method_name, "tensorflow/serving/predict");
  EXPECT_EQ(sig.inputs.at("x").name, "x:0");
  EXPECT_EQ(sig.inputs.at("x").shape.dims, (std::vector<int64_t>{-1, 1}));
  Session sess(model.graph());
  model.RunMainOp(sess);
  const Tensor x = Tensor::FromVector<float>({1.0f, 2.0f, 5.0f, -3.0f}, Shape({4, 1}));
  // serving: y = a*x + b with a = 0.5, b = 2 (TF Serving's half_plus_two).
  auto y = model.Run(sess, "serving_default", {{"x", x}});
  EXPECT_THAT(y.at("y").data<float>(), ElementsAre(2.5f, 3.0f, 4.5f, 0.5f));
  // regress_x2_to_y3: y3 = a2*x2 + c2 with a2 = 0.5, c2 = 3.
  auto y3 = model.Run(sess, "regress_x2_to_y3", {{"inputs", x}});
  EXPECT_THAT(y3.at("outputs").data<float>(), ElementsAre(3.5f, 4.0f, 5.5f, 1.5f));
}

TEST(SavedModelTest, CounterFromTf15KeepsStateAcrossSignatures) {
  EAGER_SKIP_WITHOUT_REALDATA();
  SavedModelBundle model = LoadSavedModel(Realdata("savedmodel_tf1_counter"), {"serve"});
  Session sess(model.graph());
  model.RunMainOp(sess);
  auto get = [&] { return model.Run(sess, "get_counter", {}).at("output").scalar<float>(); };
  EXPECT_EQ(get(), 0.0f);  // the saved value
  EXPECT_EQ(model.Run(sess, "incr_counter", {}).at("output").scalar<float>(), 1.0f);
  EXPECT_EQ(
      model.Run(sess, "incr_counter_by", {{"delta", Tensor(3.0f)}}).at("output").scalar<float>(),
      4.0f);
  EXPECT_EQ(get(), 4.0f);
  EXPECT_EQ(model.Run(sess, "reset_counter", {}).at("output").scalar<float>(), 0.0f);
  EXPECT_EQ(get(), 0.0f);
}

// The conv variant mixes resource variables (three tf.keras Conv2D layers:
// VarHandleOp, ReadVariableOp, AssignVariableOp) into its graph; they restore
// and run, and it serves TF 2.21's outputs for these inputs.
TEST(SavedModelTest, HalfPlusTwoConvFromTf112RunsItsResourceVariables) {
  EAGER_SKIP_WITHOUT_REALDATA();
  SavedModelBundle model = LoadSavedModel(Realdata("savedmodel_tf1_half_plus_two_conv"), {"serve"});
  EXPECT_EQ(model.signature("serving_default").inputs.at("x").name, "x:0");
  Session sess(model.graph());
  model.RunMainOp(sess);
  const Tensor x = Tensor::FromVector<float>({1.0f, 2.0f, 5.0f}, Shape({3, 1}));
  auto y = model.Run(sess, "serving_default", {{"x", x}});
  EXPECT_THAT(y.at("y").data<float>(), ElementsAre(2.5f, 3.0f, 4.5f));
  // The Conv2D layers' kernels are resource variables of the graph.
  bool found = false;
  for (const Variable* v : model.graph().GlobalVariables()) {
    if (v->shared_name() != "conv2d/kernel") continue;
    found = true;
    EXPECT_TRUE(v->is_initialized());
    EXPECT_EQ(model.graph().FindNode("conv2d/kernel")->op, "VarHandleOp");
  }
  EXPECT_TRUE(found);
}

// TF Serving's TF 2 half_plus_two (tf.saved_model.save by TF 2.14): its
// signatures are library functions that StatefulPartitionedCall nodes call
// with the variables' handles; the variables restore by TF's restore
// function's keys ("a/.ATTRIBUTES/VARIABLE_VALUE") and the signature serves
// y = a * x + b = x / 2 + 2.
TEST(SavedModelTest, Tf2HalfPlusTwoRunsItsServingSignature) {
  EAGER_SKIP_WITHOUT_REALDATA();
  SavedModelBundle model = LoadSavedModel(Realdata("savedmodel_tf2_half_plus_two"), {"serve"});
  ASSERT_NE(model.graph().functions(), nullptr);
  Session sess(model.graph());
  for (const float x : {1.0f, 2.0f, 5.0f}) {
    auto y = model.Run(sess, "serving_default", {{"x", Tensor::FromVector<float>({x}, Shape{1})}});
    EXPECT_THAT(y.at("y").data<float>(), ElementsAre(x / 2 + 2));
  }
}

// A Keras 3 model.export() written by TF 2.20 (a 9-feature regression MLP):
// loaded and served as TF 2.21's tf.saved_model.load serves it for this
// input (x[i][j] = (9 i + j) / 10 gives 50.84625244 and 40.36751938).
TEST(SavedModelTest, Keras3ExportFromTf220ServesTfsOutputs) {
  EAGER_SKIP_WITHOUT_REALDATA();
  SavedModelBundle model =
      LoadSavedModel(RealdataDir() + "/tf220_keras3_export_savedmodel", {"serve"});
  Session sess(model.graph());
  std::vector<float> x(18);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) / 10;
  auto out = model.Run(sess, "serving_default",
                       {{"keras_tensor_25", Tensor::FromVector<float>(x, Shape({2, 9}))}});
  const Tensor& y = out.at("output_0");
  EXPECT_EQ(y.shape(), Shape({2, 1}));
  EXPECT_NEAR(y.data<float>()[0], 50.84625244140625f, 1e-4);
  EXPECT_NEAR(y.data<float>()[1], 40.36751937866211f, 1e-4);
}

TEST(SavedModelTest, UnknownTagsSignatureAndInputAreNamed) {
  EAGER_SKIP_WITHOUT_REALDATA();
  try {
    LoadSavedModel(Realdata("savedmodel_tf1_half_plus_two"), {"train"});
    FAIL();
  } catch (const NotFoundError& e) {
    EXPECT_THAT(e.what(), HasSubstr("{\"train\"}"));
    EXPECT_THAT(e.what(), HasSubstr("Available tag sets: {\"serve\"}"));
  }
  SavedModelBundle model = LoadSavedModel(Realdata("savedmodel_tf1_half_plus_two"), {"serve"});
  Session sess(model.graph());
  EXPECT_THROW(model.signature("nope"), NotFoundError);
  try {
    model.Run(sess, "serving_default", {{"images", Tensor(1.0f)}});
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("missing input 'x'"));
  }
  EXPECT_THROW(LoadSavedModel(TempDir() + "/no_such_model", {"serve"}), NotFoundError);
}

TEST(SavedModelTest, BuilderExportReadsBack) {
  ResetDefaultNames();
  const std::string dir = TempDir() + "/saved_model_builder/1";
  std::filesystem::remove_all(TempDir() + "/saved_model_builder");
  {
    Graph graph;
    Graph::AsDefault in(graph);
    Tensor x = Placeholder(DType::kFloat32, Shape::Partial({-1, 2}), "x");
    Variable w(Tensor::FromVector<float>({2.0f, -1.0f}, Shape({2, 1})), "w");
    Variable b(0.25f, "b");
    Tensor y = MatMul(x, w.value()) + b.value();
    Tensor doubled = y * Tensor(2.0f);
    Session sess(graph);
    sess.Run(GlobalVariablesInitializer());
    SavedModelBuilder builder(dir);
    builder.AddMetaGraphAndVariables(sess, {"serve"},
                                     {{"serving_default", {{{"x", x}}, {{"y", y}}}},
                                      {"doubled", {{{"x", x}}, {{"y", y}, {"twice", doubled}}}}},
                                     /*main_op=*/"init");
    builder.AddMetaGraph(sess, {"serve", "gpu"}, {{"serving_default", {{{"x", x}}, {{"y", y}}}}});
    builder.Save();
    EXPECT_THROW(SavedModelBuilder{dir}, FailedPreconditionError);
  }
  EXPECT_TRUE(std::filesystem::exists(dir + "/variables/variables.index"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/variables/checkpoint"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/variables/variables.meta"));
  ResetDefaultNames();
  SavedModelBundle model = LoadSavedModel(dir, {"serve"});
  const MetaTensorInfo& in = model.signature("serving_default").inputs.at("x");
  EXPECT_EQ(in.tf_dtype, 1);  // DT_FLOAT
  EXPECT_EQ(in.shape.dims, (std::vector<int64_t>{-1, 2}));
  Session sess(model.graph());
  // No main op run: the values come from variables/, not the initializer.
  const Tensor x = Tensor::FromVector<float>({1.0f, 1.0f, 3.0f, 0.0f}, Shape({2, 2}));
  auto out = model.Run(sess, "doubled", {{"x", x}});
  EXPECT_THAT(out.at("y").data<float>(), ElementsAre(1.25f, 6.25f));
  EXPECT_THAT(out.at("twice").data<float>(), ElementsAre(2.5f, 12.5f));
  SavedModelBundle gpu = LoadSavedModel(dir, {"gpu", "serve"});
  EXPECT_EQ(gpu.main_op(), "");
}

}  // namespace
}  // namespace eager
