// Object-based restores of real TensorFlow-written files (../shared/realdata)
// into equivalent C++ objects, and the Keras layout of what we write.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <filesystem>

#include "autodiff/adam.h"
#include "autodiff/dense.h"
#include "autodiff/module.h"
#include "autodiff/sequential.h"
#include "ops/array_ops.h"
#include "ops/operators.h"
#include "ops/reduction_ops.h"
#include "ops/unary_ops.h"
#include "runtime/errors.h"
#include "runtime/flush_denormal.h"
#include "runtime/names.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/checkpoint/checkpoint.h"
#include "saving/checkpoint/checkpoint_key.h"
#include "saving/checkpoint/object_graph.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::RealdataDir;
using ::eager::testing::TempDir;
using ::testing::HasSubstr;

// Keras's Normalization layer, as far as its checkpoint goes: mean and
// variance [features] float32 (each also under its "adapt_" alias edge),
// count int64, all non-trainable.
class Normalization : public Layer {
 public:
  explicit Normalization(int64_t features) : Layer(UniqueObjectName("normalization")) {
    NameScope scope(name());
    mean_ = &AddVariable("mean", Tensor::Zeros(Shape{features}), /*trainable=*/false);
    Track("adapt_mean", *mean_);  // Keras's second edge to the same variable
    variance_ = &AddVariable("variance", Ones(Shape{features}), false);
    Track("adapt_variance", *variance_);
    count_ = &AddVariable("count", Tensor(int64_t{0}), false);
  }
  Tensor Call(const Tensor& x) override { return (x - mean_->value()) / Sqrt(variance_->value()); }
  Variable& mean() const { return *mean_; }
  Variable& count() const { return *count_; }

 private:
  Variable* mean_;
  Variable* variance_;
  Variable* count_;
};

std::vector<float> Floats(const BundleReader& reader, const std::string& key) {
  return reader.Read(key).ToVector<float>();
}

// One ApplyGradients with zero gradients: creates the slots (from the
// checkpoint) and moves m by m * (1 - beta_1) towards 0.
void ZeroGradientStep(Optimizer& optimizer, const std::vector<Variable*>& variables) {
  std::vector<Optimizer::GradientAndVariable> pairs;
  pairs.reserve(variables.size());
  for (Variable* v : variables) pairs.emplace_back(Tensor::Zeros(v->shape(), v->dtype()), v);
  optimizer.ApplyGradients(pairs);
}

std::vector<std::string> SlotKeysInOrder(const std::string& prefix) {
  BundleReader reader(prefix);
  const auto graph =
      internal::ParseObjectGraph(reader.Read(kObjectGraphKey).scalar<std::string>(), prefix);
  std::vector<std::string> out;
  for (const auto& node : graph.nodes) {
    for (const auto& slot : node.slot_variables) {
      const auto& attributes =
          graph.nodes[static_cast<size_t>(slot.slot_variable_node_id)].attributes;
      out.push_back(attributes.empty() ? "?" : attributes[0].checkpoint_key);
    }
  }
  return out;
}

// The object graph's tree shape, one line per fact, in breadth-first order
// of the nodes that hold checkpoint values: each edge between two of them
// (local name -> the target's path), each attribute with its key, and each
// slot variable (slot name, original variable's path). Nodes without values
// (Keras's train_function, a Normalization's _adapt_function, ...) and
// Keras's edge from the model to itself ("root") carry nothing to restore
// and are left out; ids are not compared, as those extra nodes shift them.
std::vector<std::string> TreeShape(const internal::SavedObjectGraph& graph) {
  const size_t n = graph.nodes.size();
  std::vector<bool> has_values(n);
  for (bool changed = true; changed;) {  // a node has values if a descendant has
    changed = false;
    for (size_t i = 0; i < n; ++i) {
      const auto& node = graph.nodes[i];
      bool values = !node.attributes.empty() || !node.slot_variables.empty();
      for (const auto& child : node.children) values = values || has_values[child.node_id];
      if (values && !has_values[i]) has_values[i] = changed = true;
    }
  }
  std::vector<std::string> path(n);
  std::vector<size_t> order = {0};
  path[0] = "(root)";
  for (size_t k = 0; k < order.size(); ++k) {
    for (const auto& child : graph.nodes[order[k]].children) {
      const auto id = static_cast<size_t>(child.node_id);
      if (id != 0 && path[id].empty()) {
        path[id] = path[order[k]] + "." + child.local_name;
        order.push_back(id);
      }
    }
  }
  std::vector<std::string> lines;
  for (size_t i : order) {
    if (!has_values[i]) continue;
    const auto& node = graph.nodes[i];
    for (const auto& child : node.children) {
      if (child.node_id != 0 && has_values[child.node_id]) {
        lines.push_back(path[i] + " child " + child.local_name + " -> " + path[child.node_id]);
      }
    }
    for (const auto& attribute : node.attributes) {
      lines.push_back(path[i] + " attribute " + attribute.name + " " + attribute.checkpoint_key);
    }
    for (const auto& slot : node.slot_variables) {
      const auto& slot_node = graph.nodes[static_cast<size_t>(slot.slot_variable_node_id)];
      lines.push_back(
          path[i] + " slot " + slot.slot_name + " of " + path[slot.original_variable_node_id] +
          " at " + (slot_node.attributes.empty() ? "?" : slot_node.attributes[0].checkpoint_key));
    }
  }
  return lines;
}

internal::SavedObjectGraph ObjectGraphOf(const std::string& prefix) {
  const BundleReader reader(prefix);
  return internal::ParseObjectGraph(reader.Read(kObjectGraphKey).scalar<std::string>(), prefix);
}

// Keras save_weights of Sequential([Normalization, Dense x4]) compiled with
// Adam: restored by structure (Dense built later, slots on the first step),
// and what we write for the same objects has exactly Keras's keys and slot order.
TEST(CheckpointRealdataTest, KerasSaveWeightsWithAdamSlots) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string prefix = RealdataDir() + "/tf2_keras_save_weights_adam/training_1/cp.ckpt";
  Sequential model;
  auto* norm = new Normalization(79);
  model.Add(std::unique_ptr<Layer>(norm));
  model.Add(std::make_unique<Dense>(128, Relu));
  model.Add(std::make_unique<Dense>(128, Relu));
  model.Add(std::make_unique<Dense>(128, Relu));
  model.Add(std::make_unique<Dense>(40));
  Adam optimizer;
  model.Track("optimizer", optimizer);
  Checkpoint checkpoint(model);  // save_weights layout: the model is the root
  CheckpointLoadStatus status = checkpoint.Read(prefix);
  status.AssertExistingObjectsMatched();

  const BundleReader reader(prefix);
  EXPECT_EQ(optimizer.iterations(), 613107);
  EXPECT_EQ(norm->count().value().scalar<int64_t>(), 44783);
  EXPECT_EQ(norm->mean().value().ToVector<float>(),
            Floats(reader, "layer_with_weights-0/mean/.ATTRIBUTES/VARIABLE_VALUE"));

  model(Ones(Shape{2, 79}));  // builds the Dense layers from the checkpoint
  auto* last = dynamic_cast<Dense*>(model.layers()[4]);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->kernel().value().ToVector<float>(),
            Floats(reader, "layer_with_weights-4/kernel/.ATTRIBUTES/VARIABLE_VALUE"));

  ZeroGradientStep(optimizer, model.TrainableVariables());
  const std::vector<float> m_saved = Floats(
      reader, "layer_with_weights-4/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE");
  const float one_minus_beta1 = 1.0f - optimizer.beta_1().value().scalar<float>();
  const std::vector<float> m_now =
      optimizer.GetSlot(last->kernel(), "m")->value().ToVector<float>();
  ASSERT_EQ(m_now.size(), m_saved.size());
  for (size_t i = 0; i < m_now.size(); ++i) {
    // The kernel's arithmetic in TF's kernel mode: the product is rounded on
    // its own (no fused multiply-add) and flushed when denormal, so an m
    // below ~1.2e-37 stays as it was (m[68] is 1.12e-37), as in TF.
    float expected;
    {
      const internal::ScopedFlushDenormal flush;
      const volatile float step = (0.0f - m_saved[i]) * one_minus_beta1;
      expected = m_saved[i] + step;
    }
    ASSERT_FLOAT_EQ(m_now[i], expected) << i;
  }
  status.AssertConsumed();

  // Our file for these objects: the same keys, the same slot order.
  const std::string ours = TempDir() + "/ours";
  checkpoint.Write(ours);
  EXPECT_EQ(BundleReader(ours).Keys(), reader.Keys());
  EXPECT_EQ(SlotKeysInOrder(ours), SlotKeysInOrder(prefix));
  EAGER_SKIP_WITHOUT_TFCKPT();
  std::string output;
  EXPECT_EQ(::eager::testing::TfckptVerify(ours, &output), 0) << output;
}

// Our Sequential([Normalization, Dense x4]) trained with Adam from scratch,
// saved as model.save_weights saves: the same object-graph tree as Keras's
// file (Keras's edges, Adam's children, slots m then v of each variable).
TEST(CheckpointRealdataTest, SequentialWithAdamHasKerasSaveWeightsTreeShape) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string keras = RealdataDir() + "/tf2_keras_save_weights_adam/training_1/cp.ckpt";
  ResetDefaultNames();
  Sequential model;
  model.Add(std::make_unique<Normalization>(79));
  model.Add(std::make_unique<Dense>(128, Relu));
  model.Add(std::make_unique<Dense>(128, Relu));
  model.Add(std::make_unique<Dense>(128, Relu));
  model.Add(std::make_unique<Dense>(40));
  Adam optimizer;
  model.Track("optimizer", optimizer);
  const Tensor x = Ones(Shape{2, 79});
  model(x);
  optimizer.Minimize([&] { return ReduceMean(Square(model(x))); }, model.TrainableVariables());
  const std::string ours = TempDir() + "/ours";
  Checkpoint(model).Write(ours);

  const std::vector<std::string> expected = TreeShape(ObjectGraphOf(keras));
  // Edges: root 11 (10 layer edges, optimizer), Normalization 5, Dense 4 x 2,
  // Adam 5; attributes: 3 + 8 + 5; Adam's slots: 8 m, then 8 v.
  ASSERT_EQ(expected.size(), 11u + 5 + 8 + 5 + 16 + 16) << ::testing::PrintToString(expected);
  EXPECT_EQ(expected[0], "(root) child layer_with_weights-0 -> (root).layer_with_weights-0");
  EXPECT_THAT(TreeShape(ObjectGraphOf(ours)), ::testing::ElementsAreArray(expected));
}

// TF 2.x functional model (InputLayer, Dense 128, Dense 3) + Adam in two shards.
TEST(CheckpointRealdataTest, TwoShardIrisModel) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string prefix = RealdataDir() + "/tf2_keras_sharded2_iris/model.ckpt";
  Module model;
  Module input_layer;  // Keras's InputLayer: no weights
  Dense hidden(128, Relu), output(3);
  Adam optimizer;
  model.Track("layer-0", input_layer);
  model.Track("layer-1", hidden);
  model.Track("layer-2", output);
  model.Track("optimizer", optimizer);
  Checkpoint checkpoint(model);
  CheckpointLoadStatus status = checkpoint.Read(prefix);
  output(hidden(Ones(Shape{1, 4})));
  const BundleReader reader(prefix);
  EXPECT_EQ(hidden.kernel().value().ToVector<float>(),
            Floats(reader, "layer-1/kernel/.ATTRIBUTES/VARIABLE_VALUE"));
  EXPECT_EQ(output.bias()->value().ToVector<float>(),
            Floats(reader, "layer-2/bias/.ATTRIBUTES/VARIABLE_VALUE"));
  ZeroGradientStep(optimizer, model.TrainableVariables());
  status.AssertConsumed();
}

// A GPflow model saved with tf.train.Checkpoint (TF 2.13): float64
// parameters, each a module holding "_pretransformed_input".
TEST(CheckpointRealdataTest, GpflowFloat64AsPlainVariables) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string prefix = RealdataDir() + "/tf2_checkpoint_gpflow_float64/checkpoints/ckpt-1";
  struct Parameter : Module {
    explicit Parameter(const Shape& shape) {
      value = &AddVariable("_pretransformed_input", Tensor::Zeros(shape, DType::kFloat64));
    }
    Variable* value;
  };
  std::deque<Parameter> parameters;
  std::deque<Module> modules;
  auto param = [&](const Shape& shape) -> Parameter& { return parameters.emplace_back(shape); };
  Module& model = modules.emplace_back();
  Module& kernel = modules.emplace_back();
  Module& kernels = modules.emplace_back();
  for (int i = 0; i < 13; ++i) {
    Module& k = modules.emplace_back();
    k.Track("variance", param(Shape{}));
    k.Track("lengthscales", param(Shape{23}));
    kernels.Track(std::to_string(i), k);
  }
  kernel.Track("kernels", kernels);
  kernel.Track("W", param(Shape{46, 13}));
  Module& inducing_outer = modules.emplace_back();
  Module& inducing = modules.emplace_back();
  inducing.Track("Z", param(Shape{64, 23}));
  inducing_outer.Track("inducing_variable", inducing);
  model.Track("kernel", kernel);
  model.Track("inducing_variable", inducing_outer);
  Parameter& q_mu = param(Shape{64, 13});
  model.Track("q_mu", q_mu);
  model.Track("q_sqrt", param(Shape{13, 2080}));

  Checkpoint checkpoint({{"model", &model}});
  checkpoint.Restore(prefix).AssertConsumed();
  EXPECT_EQ(checkpoint.save_counter().value().scalar<int64_t>(), 1);
  const BundleReader reader(prefix);
  EXPECT_EQ(q_mu.value->value().ToVector<double>(),
            reader.Read("model/q_mu/_pretransformed_input/.ATTRIBUTES/VARIABLE_VALUE")
                .ToVector<double>());
}

// The TF2 half_plus_two SavedModel: its variables are an object-based bundle
// at variables/variables; Restore accepts the SavedModel directory.
TEST(CheckpointRealdataTest, SavedModelHalfPlusTwoVariables) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string dir = RealdataDir() + "/savedmodel_tf2_half_plus_two/00000123";
  Variable a(Tensor(0.0f), "a"), b(Tensor(0.0f), "b"), c(Tensor(0.0f), "c");
  Checkpoint checkpoint({{"a", &a}, {"b", &b}, {"c", &c}});
  checkpoint.Read(dir).AssertConsumed();
  const BundleReader reader(dir + "/variables/variables");
  EXPECT_EQ(a.value().scalar<float>(), 0.5f);
  EXPECT_EQ(b.value().scalar<float>(), reader.Read("b/.ATTRIBUTES/VARIABLE_VALUE").scalar<float>());
  EXPECT_EQ(c.value().scalar<float>(), reader.Read("c/.ATTRIBUTES/VARIABLE_VALUE").scalar<float>());
}

// A TF1 Saver file has no object graph: variables are matched by name.
TEST(CheckpointRealdataTest, NameBasedFallbackForATf1SaverFile) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string prefix = RealdataDir() + "/tf1_saver_scopes_tiny/model.ckpt";
  ResetDefaultNames();
  Variable v(Tensor::Zeros(Shape{1}), "v");
  Variable v1(Tensor::Zeros(Shape{1}), "v1");
  std::optional<Variable> foo_v;
  {
    NameScope foo("foo");
    foo_v.emplace(Tensor::Zeros(Shape{1}), "v");
  }
  ASSERT_EQ(foo_v->shared_name(), "foo/v");
  Checkpoint checkpoint({{"first", &v}, {"second", &v1}, {"scoped", &*foo_v}});
  CheckpointLoadStatus status = checkpoint.Restore(prefix);
  EXPECT_TRUE(status.name_based());
  status.AssertConsumed();  // save_counter is exempt
  const BundleReader reader(prefix);
  EXPECT_EQ(v.value().ToVector<float>(), reader.Read("v").ToVector<float>());
  EXPECT_EQ(foo_v->value().ToVector<float>(), reader.Read("foo/v").ToVector<float>());

  Variable missing(Tensor::Zeros(Shape{1}), "not_in_file");
  Checkpoint more({{"v", &v}, {"missing", &missing}});
  try {
    more.Restore(prefix).AssertConsumed();
    ADD_FAILURE() << "no error";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Some objects had attributes which were not restored"));
    EXPECT_THAT(e.what(), HasSubstr("not_in_file"));
  }

  // Variables created after the restore are looked up by name too.
  ResetDefaultNames();
  Module model;
  struct Holder : Module {
    void Make() { AddVariable("v", Tensor::Zeros(Shape{1})); }
  } holder;
  model.Track("holder", holder);
  Checkpoint later({{"model", &model}});
  CheckpointLoadStatus later_status = later.Restore(prefix);
  holder.Make();  // named "v"
  EXPECT_EQ(holder.Variables()[0]->value().ToVector<float>(), reader.Read("v").ToVector<float>());
  later_status.AssertConsumed();
}

}  // namespace
}  // namespace eager
