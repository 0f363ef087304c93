// The Saver in graph mode: Save(sess) with PREFIX.meta, ImportMetaGraph on
// our files and on every real TF1 .meta, partial restores, and real TF1
// models run forward after import + restore, checked against the same
// computation done eagerly from the checkpoint's tensors.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/conv_ops.h"
#include "ops/graph_ops.h"
#include "ops/matmul.h"
#include "ops/nn_ops.h"
#include "ops/operators.h"
#include "ops/pooling_ops.h"
#include "ops/random_generator.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "ops/unary_ops.h"
#include "runtime/graph.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/saver/meta_graph_import_export.h"
#include "saving/saver/saver.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
using ::eager::testing::RealdataDir;
using ::eager::testing::TempDir;
using ::testing::HasSubstr;

// Seed 004's graph: v1 = [1.0], v2 = [2.0], add = v1 + v2, Saver().
std::string SaveSeedGraph(const std::string& dir) {
  Graph graph;
  Graph::AsDefault in(graph);
  Variable v1(Tensor::FromVector<float>({1.0f}, Shape{1}), "v1");
  Variable v2(Tensor::FromVector<float>({2.0f}, Shape{1}), "v2");
  Tensor sum = v1.value() + v2.value();
  EXPECT_EQ(sum.name(), "add:0");
  Saver saver;
  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  EXPECT_EQ(sess.Run(sum).ToVector<float>(), std::vector<float>{3.0f});
  return saver.Save(sess, dir + "/model.ckpt");
}

TEST(GraphSaverTest, SaveWritesTheBundleTheMetaGraphAndTheStateFile) {
  const std::string dir = TempDir();
  const std::string prefix = SaveSeedGraph(dir);
  EXPECT_EQ(testing::ListDir(dir),
            (std::vector<std::string>{"checkpoint", "model.ckpt.data-00000-of-00001",
                                      "model.ckpt.index", "model.ckpt.meta"}));
  BundleReader reader(prefix);
  EXPECT_EQ(reader.Keys(), (std::vector<std::string>{"v1", "v2"}));

  const MetaGraph meta = ReadMetaGraph(prefix + ".meta");
  EXPECT_EQ(meta.tensorflow_version, "1.14.0");  // the GraphDef version and OpDefs we follow
  EXPECT_EQ(meta.tensorflow_git_version, "eager");
  ASSERT_TRUE(meta.saver_def);
  EXPECT_EQ(meta.saver_def->filename_tensor_name, "save/Const:0");
  EXPECT_EQ(meta.saver_def->save_tensor_name, "save/control_dependency:0");
  EXPECT_EQ(meta.saver_def->restore_op_name, "save/restore_all");
  EXPECT_EQ(meta.saver_def->version, 2);
  const std::vector<MetaVariableDef> vars = VariableDefsOf(meta, "variables");
  ASSERT_EQ(vars.size(), 2u);
  EXPECT_EQ(vars[0].variable_name, "v1:0");
  EXPECT_EQ(vars[0].initializer_name, "v1/Assign");
  EXPECT_EQ(vars[0].snapshot_name, "v1/read:0");
  EXPECT_EQ(vars[0].initial_value_name, "v1/initial_value:0");
  EXPECT_TRUE(vars[0].trainable);
  EXPECT_EQ(VariableDefsOf(meta, "trainable_variables").size(), 2u);
  std::vector<std::string> ops;
  for (const MetaOpDef& op : meta.stripped_op_list) ops.push_back(op.name);
  EXPECT_EQ(ops, (std::vector<std::string>{"AddV2", "Assign", "Const", "Identity", "NoOp",
                                           "RestoreV2", "SaveV2", "VariableV2"}));
}

TEST(GraphSaverTest, TfckptListsOurMetaGraphLikeTfs) {
  EAGER_SKIP_WITHOUT_TFCKPT();
  const std::string dir = TempDir();
  const std::string prefix = SaveSeedGraph(dir);
  std::string out;
  ASSERT_EQ(testing::RunTfckpt("verify '" + prefix + "'", dir + "/log", &out), 0) << out;
  ASSERT_EQ(testing::RunTfckpt("meta '" + prefix + ".meta'", dir + "/log", &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("# stripped_op_list: AddV2, Assign, Const, Identity, NoOp, "
                             "RestoreV2, SaveV2, VariableV2"));
  EXPECT_THAT(out, HasSubstr("add "));
  EXPECT_THAT(out, HasSubstr("<- v1/read, v2/read"));
  EXPECT_THAT(out, HasSubstr("save/RestoreV2 "));
  EXPECT_THAT(out, HasSubstr("filename_tensor_name='save/Const:0'"));
  EXPECT_THAT(out, HasSubstr("restore_op_name='save/restore_all'"));
  EXPECT_THAT(out, HasSubstr("collection variables"));
}

TEST(GraphSaverTest, ImportMetaGraphRebuildsTheGraphAndItsSaver) {
  const std::string dir = TempDir();
  const std::string prefix = SaveSeedGraph(dir);
  Graph graph;
  Graph::AsDefault in(graph);
  std::unique_ptr<Saver> saver = ImportMetaGraph(prefix + ".meta");
  ASSERT_NE(saver, nullptr);
  EXPECT_EQ(saver->variables().size(), 2u);
  Session sess(graph);
  EXPECT_THROW(sess.Run("add:0"), FailedPreconditionError);  // not restored yet
  saver->Restore(sess, prefix);
  EXPECT_EQ(sess.Run(graph.TensorByName("add:0")).ToVector<float>(), std::vector<float>{3.0f});
  // Saving again keeps the imported SaverDef (no second save/ subgraph).
  const std::string again = saver->Save(sess, dir + "/again");
  const MetaGraph meta = ReadMetaGraph(again + ".meta");
  EXPECT_EQ(meta.saver_def->restore_op_name, "save/restore_all");
  int restore_ops = 0;
  for (const MetaGraphNode& n : meta.nodes) restore_ops += n.op == "RestoreV2";
  EXPECT_EQ(restore_ops, 1);
}

TEST(GraphSaverTest, PartialRestoreLeavesTheOthersUninitialized) {
  const std::string dir = TempDir();
  const std::string prefix = SaveSeedGraph(dir);
  Graph graph;
  Graph::AsDefault in(graph);
  Variable v1(Tensor::FromVector<float>({0.0f}, Shape{1}), "v1");
  Variable v2(Tensor::FromVector<float>({0.0f}, Shape{1}), "v2");
  Session sess(graph);
  Saver({&v1}).Restore(sess, prefix);
  EXPECT_EQ(sess.Run(v1.value()).ToVector<float>(), std::vector<float>{1.0f});
  try {
    sess.Run(v1.value() + v2.value());
    FAIL() << "expected FailedPreconditionError";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Attempting to use uninitialized value v2"));
  }
}

// saver_test.py's pattern: saver2 = Saver(saver_def=saver.as_saver_def()) in
// the graph of `saver`. The first Saver's save/restore nodes are in the live
// graph, so the second finds its restore op and variables (under the first
// one's renamed keys), restores what the first saved, and its .meta names
// the first one's nodes, which the graph has once.
TEST(GraphSaverTest, ASaverFromTheSaverDefOfASaverOfTheSameGraphWorks) {
  const std::string dir = TempDir();
  Graph graph;
  Graph::AsDefault in(graph);
  Variable v1(Tensor::FromVector<float>({1.0f}, Shape{1}), "v1");
  Variable v2(Tensor::FromVector<float>({2.0f, 3.0f}, Shape{2}), "v2");
  Tensor sum = ReduceSum(v1.value()) + ReduceSum(v2.value());
  Saver saver({{"first", &v1}, {"second", &v2}});
  const MetaSaverDef def = saver.saver_def();
  EXPECT_EQ(def.restore_op_name, "save/restore_all");
  EXPECT_NE(graph.FindNode("save/restore_all"), nullptr);
  EXPECT_NE(graph.FindNode("save/RestoreV2"), nullptr);
  Session sess(graph);
  sess.Run(GlobalVariablesInitializer());
  const std::string prefix = saver.Save(sess, dir + "/model.ckpt");

  SaverOptions options;
  options.saver_def = def;
  Saver saver2(options);
  ASSERT_EQ(saver2.variables().size(), 2u);
  EXPECT_EQ(saver2.variables().at("first"), &v1);
  EXPECT_EQ(saver2.variables().at("second"), &v2);
  EXPECT_EQ(saver2.saver_def().restore_op_name, "save/restore_all");
  v1.Assign(Tensor::FromVector<float>({-5.0f}, Shape{1}));
  v2.Assign(Tensor::FromVector<float>({0.0f, 0.0f}, Shape{2}));
  EXPECT_EQ(sess.Run(sum).ToVector<float>(), std::vector<float>{-5.0f});
  saver2.Restore(sess, prefix);
  EXPECT_EQ(sess.Run(sum).ToVector<float>(), std::vector<float>{6.0f});
  // saver2's .meta holds one save/restore subgraph, the first Saver's.
  saver2.Save(sess, dir + "/again.ckpt");
  const MetaGraph meta = ReadMetaGraph(dir + "/again.ckpt.meta");
  ASSERT_TRUE(meta.saver_def);
  EXPECT_EQ(meta.saver_def->restore_op_name, "save/restore_all");
  int restores = 0;
  for (const MetaGraphNode& node : meta.nodes) restores += node.op == "RestoreV2" ? 1 : 0;
  EXPECT_EQ(restores, 1);
  // A second Saver built afresh gets its own scope.
  Saver third;
  EXPECT_EQ(third.saver_def().restore_op_name, "save_1/restore_all");
  EXPECT_NE(graph.FindNode("save_1/restore_all"), nullptr);
}

TEST(GraphSaverTest, SessionOfAnotherGraphIsRejected) {
  const std::string dir = TempDir();
  Graph a, b;
  Graph::AsDefault in(a);
  Variable v(Tensor::FromVector<float>({1.0f}, Shape{1}), "v");
  Saver saver;
  Session other(b);
  EXPECT_THROW(saver.Save(other, dir + "/x"), InvalidArgumentError);
  EXPECT_THROW(ImportMetaGraph(dir + "/missing.meta"), NotFoundError);
}

TEST(GraphSaverTest, ImportMetaGraphNeedsAGraph) {
  EXPECT_THROW(ImportMetaGraph("whatever.meta"), FailedPreconditionError);
}

// Every real .meta imports; its Saver covers what its restore subgraph
// restores, and restores from the checkpoint beside it when that is there.
TEST(GraphSaverTest, ImportsEveryRealMetaFileAndRestoresItsCheckpoint) {
  EAGER_SKIP_WITHOUT_REALDATA();
  struct Case {
    const char* meta;
    const char* checkpoint;  // "" when the data is absent or not V2
    size_t keys;
  };
  const Case cases[] = {
      {"tf1_saver_scopes_tiny/model.ckpt.meta", "tf1_saver_scopes_tiny/model.ckpt", 7},
      {"tf1_saver_lenet_adam/lenet.meta", "tf1_saver_lenet_adam/lenet", 42},
      {"tf1_saver_mnist_mlp_ema/model.ckpt-29001.meta", "tf1_saver_mnist_mlp_ema/model.ckpt-29001",
       9},
      {"tf1_saver_udacity_mlp/model.ckpt.meta", "tf1_saver_udacity_mlp/model.ckpt", 4},
      {"tf1_saver_handson_bn_partial_adam/my_logreg_model.meta",
       "tf1_saver_handson_bn_partial_adam/my_logreg_model", 1},
      {"tf1_saver_handson_bn_partial_adam/dnn11_0_to_4.ckpt.meta",
       "tf1_saver_handson_bn_partial_adam/dnn11_0_to_4.ckpt", 0},
      {"tf1_saver_ssd_mobilenet_v2_index_only/model.ckpt.meta", "", 345},
      {"tf1_estimator_wide_deep_tf17/data_model/model.ckpt-3760.meta",
       "tf1_estimator_wide_deep_tf17/data_model/model.ckpt-3760", 0},
      {"tf1_estimator_linear_ftrl_tf27/model.ckpt-200.meta", "", 0},
      {"legacy_v1_session_bundle_half_plus_two/00000123/export.meta", "", 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.meta);
    const std::string meta_path = RealdataDir() + "/" + c.meta;
    Graph graph;
    Graph::AsDefault in(graph);
    std::unique_ptr<Saver> saver = ImportMetaGraph(meta_path);
    EXPECT_EQ(graph.num_nodes(), static_cast<int>(ReadMetaGraph(meta_path).nodes.size()));
    if (c.keys > 0) {
      ASSERT_NE(saver, nullptr);
      EXPECT_EQ(saver->variables().size(), c.keys);
    }
    if (*c.checkpoint != '\0' && saver != nullptr) {
      Session sess(graph);
      saver->Restore(sess, RealdataDir() + "/" + c.checkpoint);
      const BundleReader reader(RealdataDir() + "/" + c.checkpoint);
      for (const auto& [key, v] : saver->variables()) {
        const Tensor stored = v->stored_value();
        const Tensor read = reader.Read(key);  // held: bytes() views its buffer
        const auto a = stored.bytes();
        const auto b = read.bytes();
        EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << key;
      }
    }
  }
}

// An op eager lacks imports; running it names the op type and the node.
TEST(GraphSaverTest, UnknownOpsFailOnlyWhenRun) {
  EAGER_SKIP_WITHOUT_REALDATA();
  Graph graph;
  Graph::AsDefault in(graph);
  // A TF 1.x logistic regression whose loss summary (ScalarSummary) eager
  // does not run.
  const std::string prefix = RealdataDir() + "/tf1_saver_handson_bn_partial_adam/my_logreg_model";
  std::unique_ptr<Saver> saver = ImportMetaGraph(prefix + ".meta");
  Session sess(graph);
  saver->Restore(sess, prefix);
  try {
    sess.Run("logistic_regression/train/log_loss:0");
    FAIL() << "expected UnimplementedError";
  } catch (const UnimplementedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("node 'logistic_regression/train/log_loss' has op type "
                                    "'ScalarSummary'"));
  }
}

std::vector<float> Floats(const Tensor& t) { return t.ToVector<float>(); }

void ExpectNear(const std::vector<float>& a, const std::vector<float>& b, float tolerance) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tolerance) << "element " << i;
}

// MNIST_MLP (TF 1.1): x-input -> layer1 (MatMul, Add, Relu) -> layer2 logits.
TEST(GraphSaverTest, RealMnistMlpRunsForwardAsEagerComputesIt) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string prefix = RealdataDir() + "/tf1_saver_mnist_mlp_ema/model.ckpt-29001";
  const Tensor x = RandomUniform(Shape{3, 784}, /*seed=*/5, 0.0, 1.0, DType::kFloat32);
  Graph graph;
  Tensor logits;
  {
    Graph::AsDefault in(graph);
    std::unique_ptr<Saver> saver = ImportMetaGraph(prefix + ".meta");
    Session sess(graph);
    saver->Restore(sess, prefix);
    logits = sess.Run("layer2/add:0", {{"x-input:0", x}});
  }
  const BundleReader r(prefix);
  const Tensor hidden = Relu(Add(MatMul(x, r.Read("layer1/weights")), r.Read("layer1/biases")));
  const Tensor expected = Add(MatMul(hidden, r.Read("layer2/weights")), r.Read("layer2/biases"));
  EXPECT_EQ(logits.shape(), (Shape{3, 10}));
  ExpectNear(Floats(logits), Floats(expected), 1e-5f);
}

// Udacity MLP (TF 1.14): Placeholder [?,28,28,1] -> Reshape -> 256 ReLU -> 10 -> Softmax.
TEST(GraphSaverTest, RealUdacityMlpRunsForwardAsEagerComputesIt) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string prefix = RealdataDir() + "/tf1_saver_udacity_mlp/model.ckpt";
  const Tensor x = RandomUniform(Shape{2, 28, 28, 1}, /*seed=*/6, 0.0, 1.0, DType::kFloat32);
  Graph graph;
  Tensor probabilities;
  {
    Graph::AsDefault in(graph);
    std::unique_ptr<Saver> saver = ImportMetaGraph(prefix + ".meta");
    Session sess(graph);
    saver->Restore(sess, prefix);
    probabilities = sess.Run("Softmax:0", {{"Placeholder:0", x}});
  }
  const BundleReader r(prefix);
  const Tensor flat = Reshape(x, {2, 784});
  const Tensor hidden = Relu(Add(MatMul(flat, r.Read("Variable")), r.Read("Variable_2")));
  const Tensor expected = Softmax(Add(MatMul(hidden, r.Read("Variable_1")), r.Read("Variable_3")));
  EXPECT_EQ(probabilities.shape(), (Shape{2, 10}));
  ExpectNear(Floats(probabilities), Floats(expected), 1e-6f);
}

// LeNet (TF 1.0.1, the trained second copy Variable_10..19): Placeholder
// [?,32,32,1] -> Conv2D 5x5 VALID + bias, Relu, MaxPool 2x2 -> Conv2D 5x5 +
// bias, Relu, MaxPool -> Reshape [-1,400] -> 120 ReLU -> 84 ReLU -> logits add_9.
TEST(GraphSaverTest, RealLenetRunsForwardAsEagerComputesIt) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string prefix = RealdataDir() + "/tf1_saver_lenet_adam/lenet";
  const Tensor x = RandomUniform(Shape{3, 32, 32, 1}, /*seed=*/7, 0.0, 1.0, DType::kFloat32);
  Graph graph;
  Tensor logits;
  {
    Graph::AsDefault in(graph);
    std::unique_ptr<Saver> saver = ImportMetaGraph(prefix + ".meta");
    Session sess(graph);
    saver->Restore(sess, prefix);
    logits = sess.Run("add_9:0", {{"Placeholder:0", x}});
  }
  const BundleReader r(prefix);
  const auto conv_block = [&](const Tensor& in, const char* w, const char* b) {
    return MaxPool(Relu(Add(Conv2D(in, r.Read(w)), r.Read(b))));
  };
  const Tensor features =
      Reshape(conv_block(conv_block(x, "Variable_10", "Variable_11"), "Variable_12", "Variable_13"),
              {-1, 400});
  const auto dense = [&](const Tensor& in, const char* w, const char* b) {
    return Add(MatMul(in, r.Read(w)), r.Read(b));
  };
  const Tensor expected = dense(Relu(dense(Relu(dense(features, "Variable_14", "Variable_15")),
                                           "Variable_16", "Variable_17")),
                                "Variable_18", "Variable_19");
  EXPECT_EQ(logits.shape(), (Shape{3, 10}));
  // The Session runs the kernels eager runs, in the same order: same bits.
  EXPECT_EQ(Floats(logits), Floats(expected));
  float max_abs = 0;
  for (float v : Floats(expected)) max_abs = std::max(max_abs, std::abs(v));
  EXPECT_GT(max_abs, 0.1f);  // real logits, not an all-zero network
}

}  // namespace
}  // namespace eager

namespace eager {
namespace {

// tensorflow/models' reference data: the GraphDef TF wrote (expected_graph:
// input_tensor -> dense (MatMul, BiasAdd) -> dense_1) and its checkpoint;
// results.json holds TF's output, 0.4701630473136902.
TEST(GraphSaverTest, GoldenDenseGraphDefRunsToTfsOutput) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string dir = RealdataDir() + "/tf1_golden_reference_data/reference_data_test/dense";
  Graph graph;
  Graph::AsDefault in(graph);
  ImportIntoGraph(ReadGraphDef(dir + "/expected_graph"), graph);
  ASSERT_EQ(graph.GlobalVariables().size(), 5u);
  Session sess(graph);
  Saver(graph.GlobalVariables()).Restore(sess, dir + "/model.ckpt");
  const Tensor y = sess.Run("dense_1/BiasAdd:0");
  EXPECT_EQ(y.shape(), (Shape{1, 1}));
  EXPECT_NEAR(y.ToVector<float>()[0], 0.4701630473136902, 1e-6);
}

}  // namespace
}  // namespace eager

namespace eager {
namespace {

std::vector<float> Values(const Tensor& t) { return t.ToVector<float>(); }

// `t` with f applied to each element, in plain C++ (not eager's kernels).
template <typename F>
Tensor MapFloats(const Tensor& t, F f) {
  std::vector<float> v = t.ToVector<float>();
  for (float& x : v) x = f(x);
  return Tensor::FromVector<float>(v, t.shape());
}

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 2e-5f * std::max(1.0f, std::abs(want[i]))) << "element " << i;
  }
}

// Hands-On ML ch. 11 (TF 1.12): X [?,784] -> 5 x (dense + Elu; each followed
// by tf.layers.batch_normalization(training=dnn/training), a tf.cond on a
// PlaceholderWithDefault False); hidden_k+1 reads hidden_k's Elu, and only
// hidden5's batch norm feeds the logits. The eager reference: BN inference
// gamma (h - moving_mean) / sqrt(moving_variance + eps) + beta with eps from
// the graph's Const, Elu as x > 0 ? x : exp(x) - 1 in plain C++.
class RealBatchNormDnnTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::HasRealdata()) GTEST_SKIP() << "realdata not found at " << RealdataDir();
    reader_.emplace(prefix_);
    Graph::AsDefault in(graph_);
    saver_ = ImportMetaGraph(prefix_ + ".meta");
    ASSERT_NE(saver_, nullptr);
    sess_ = std::make_unique<Session>(graph_);
    saver_->Restore(*sess_, prefix_);
  }

  // Hidden5's Elu output, from the checkpoint's tensors.
  Tensor Hidden5(const Tensor& x) const {
    Tensor h = x;
    for (int i = 1; i <= 5; ++i) {
      const std::string layer = "hidden" + std::to_string(i);
      const Tensor pre =
          Add(MatMul(h, reader_->Read(layer + "/kernel")), reader_->Read(layer + "/bias"));
      h = MapFloats(pre, [](float v) { return v > 0 ? v : std::exp(v) - 1.0f; });
    }
    return h;
  }

  Tensor Logits(const Tensor& normalized) const {
    return Add(MatMul(normalized, reader_->Read("logits/kernel")), reader_->Read("logits/bias"));
  }

  // gamma (h - mean) / sqrt(variance + eps) + beta.
  Tensor Normalize(const Tensor& h, const Tensor& mean, const Tensor& variance, float eps) const {
    const Tensor scale = MapFloats(variance, [eps](float v) { return 1.0f / std::sqrt(v + eps); });
    return Add(Mul(Mul(reader_->Read("hidden5/gamma"), scale), Sub(h, mean)),
               reader_->Read("hidden5/beta"));
  }

  float Epsilon() { return sess_->Run("dnn/hidden5_1/batchnorm/add/y:0").ToVector<float>()[0]; }

  const std::string prefix_ =
      RealdataDir() + "/tf1_saver_handson_bn_partial_adam/dnn11_0_to_4.ckpt";
  // Opened in SetUp, after the realdata check: a member initializer would
  // throw before the test can skip.
  std::optional<BundleReader> reader_;
  Graph graph_;
  std::unique_ptr<Saver> saver_;
  std::unique_ptr<Session> sess_;
};

TEST_F(RealBatchNormDnnTest, InferenceRunsLikeEager) {
  EXPECT_EQ(saver_->variables().size(), 62u);
  EXPECT_FLOAT_EQ(Epsilon(), 0.001f);
  const Tensor x = RandomUniform(Shape{4, 784}, /*seed=*/8, 0.0, 1.0, DType::kFloat32);
  const Tensor logits =
      sess_->Run("dnn/logits/BiasAdd:0", {{"X:0", x}});  // training: default False
  EXPECT_EQ(logits.shape(), (Shape{4, 5}));
  const Tensor expected = Logits(Normalize(Hidden5(x), reader_->Read("hidden5/moving_mean"),
                                           reader_->Read("hidden5/moving_variance"), Epsilon()));
  ExpectClose(Values(logits), Values(expected));
  float max_abs = 0;
  for (float v : Values(expected)) max_abs = std::max(max_abs, std::abs(v));
  EXPECT_GT(max_abs, 0.5f);  // a trained network, not zeros
}

// training=True takes tf.cond's other branch: the batch's own moments.
TEST_F(RealBatchNormDnnTest, TrainingModeUsesTheBatchMoments) {
  const Tensor x = RandomUniform(Shape{6, 784}, /*seed=*/9, 0.0, 1.0, DType::kFloat32);
  const Tensor logits =
      sess_->Run("dnn/logits/BiasAdd:0", {{"X:0", x}, {"dnn/training:0", Tensor(true)}});
  const Tensor h = Hidden5(x);
  const Tensor mean = ReduceMean(h, {0});
  const Tensor variance = ReduceMean(Square(Sub(h, mean)), {0});
  ExpectClose(Values(logits), Values(Logits(Normalize(h, mean, variance, Epsilon()))));
}

// The moving-average update (cond_2: an AssignSub through a RefSwitch whose
// decay Const hangs on the true branch by a control edge) runs only when
// training: in inference its nodes are dead and moving_mean stays.
TEST_F(RealBatchNormDnnTest, MovingMeanUpdatesOnlyInTraining) {
  const Tensor x = RandomUniform(Shape{6, 784}, /*seed=*/10, 0.0, 1.0, DType::kFloat32);
  const std::vector<float> before = Values(reader_->Read("hidden5/moving_mean"));
  const Tensor kept = sess_->Run("dnn/hidden5_1/cond_2/Merge:0", {{"X:0", x}});
  EXPECT_EQ(Values(kept), before);
  EXPECT_EQ(Values(sess_->Run("hidden5/moving_mean/read:0")), before);
  EXPECT_EQ(sess_->Run("dnn/hidden5_1/cond_2/Merge:1", {{"X:0", x}}).ToVector<int32_t>(),
            std::vector<int32_t>{0});

  const Tensor updated =
      sess_->Run("dnn/hidden5_1/cond_2/Merge:0", {{"X:0", x}, {"dnn/training:0", Tensor(true)}});
  // moving_mean -= (moving_mean - batch_mean) * (1 - momentum 0.9).
  const std::vector<float> batch_mean = Values(ReduceMean(Hidden5(x), {0}));
  std::vector<float> want(before.size());
  for (size_t i = 0; i < want.size(); ++i) {
    want[i] = before[i] - (before[i] - batch_mean[i]) * 0.1f;
  }
  ExpectClose(Values(updated), want);
  EXPECT_EQ(Values(sess_->Run("hidden5/moving_mean/read:0")), Values(updated));
  // The untaken branch's tensors have no value.
  EXPECT_THROW(
      sess_->Run("dnn/hidden5_1/cond_2/Switch_1:0", {{"X:0", x}, {"dnn/training:0", Tensor(true)}}),
      InvalidArgumentError);
}

// Géron ch. 9 logistic regression (TF 1.12): Sigmoid(X [?,3] @ theta [3,1]).
TEST(GraphSaverTest, RealLogisticRegressionRunsAsEagerComputesIt) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string prefix = RealdataDir() + "/tf1_saver_handson_bn_partial_adam/my_logreg_model";
  const Tensor x = RandomUniform(Shape{5, 3}, /*seed=*/11, -2.0, 2.0, DType::kFloat32);
  Graph graph;
  Tensor y;
  {
    Graph::AsDefault in(graph);
    std::unique_ptr<Saver> saver = ImportMetaGraph(prefix + ".meta");
    ASSERT_NE(saver, nullptr);
    EXPECT_EQ(saver->variables().size(), 1u);
    Session sess(graph);
    saver->Restore(sess, prefix);
    y = sess.Run("logistic_regression/model/Sigmoid:0", {{"X:0", x}});
  }
  const BundleReader r(prefix);
  const Tensor expected = MapFloats(MatMul(x, r.Read("logistic_regression/model/theta")),
                                    [](float v) { return 1.0f / (1.0f + std::exp(-v)); });
  EXPECT_EQ(y.shape(), (Shape{5, 1}));
  ExpectClose(Values(y), Values(expected));
}

}  // namespace
}  // namespace eager
