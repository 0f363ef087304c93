// Keras layouts with weightless layers: a Sequential with Flatten before its
// Dense layers (a real Keras save_weights file: Flatten is "layer-0", no
// values) and a functional model's InputLayer as "layer-0" restore into the
// equivalent eager Sequential. Keras's Model._trackable_children lists
// "layer_with_weights-K" and "layer-I" edges (tf_keras engine/training.py,
// _layer_checkpoint_dependencies); TF binds each saved object through the
// first edge that reaches it (restore.py, CheckpointPosition.bind_object).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autodiff/adam.h"
#include "autodiff/dense.h"
#include "autodiff/flatten.h"
#include "autodiff/input_layer.h"
#include "autodiff/sequential.h"
#include "ops/array_ops.h"
#include "ops/random_generator.h"
#include "ops/unary_ops.h"
#include "runtime/errors.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/checkpoint/checkpoint.h"
#include "saving/checkpoint/object_graph.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::RealdataDir;
using ::eager::testing::TempDir;

// Rabbit-JCY/little_ruan's iris model: Sequential([Flatten(), Dense(128,
// relu), Dense(3, softmax)]) trained with Adam and saved by save_weights, in
// two shards. The same Sequential in eager restores it; with TF's deferred
// slot restoration everything is consumed once the model is built.
TEST(KerasWeightlessLayersTest, SequentialWithFlattenRestoresRealKerasFile) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string prefix = RealdataDir() + "/tf2_keras_sharded2_iris/model.ckpt";
  Sequential model;
  model.Add(std::make_unique<Flatten>());
  model.Add(std::make_unique<Dense>(128, Relu));
  model.Add(std::make_unique<Dense>(3));
  Adam optimizer;
  model.Track("optimizer", optimizer);
  Checkpoint checkpoint(model);
  CheckpointLoadStatus status = checkpoint.Read(prefix);
  model(Tensor::Zeros(Shape{1, 2, 2}));  // [1, 2, 2] -> Flatten -> [1, 4]: builds
  const BundleReader reader(prefix);
  auto& hidden = dynamic_cast<Dense&>(*model.layers()[1]);
  auto& output = dynamic_cast<Dense&>(*model.layers()[2]);
  EXPECT_EQ(hidden.kernel().value().ToVector<float>(),
            reader.Read("layer-1/kernel/.ATTRIBUTES/VARIABLE_VALUE").ToVector<float>());
  EXPECT_EQ(output.bias()->value().ToVector<float>(),
            reader.Read("layer-2/bias/.ATTRIBUTES/VARIABLE_VALUE").ToVector<float>());
  EXPECT_EQ(optimizer.GetSlot(hidden.kernel(), "v")->value().ToVector<float>(),
            reader.Read("layer-1/kernel/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE")
                .ToVector<float>());
  EXPECT_EQ(optimizer.iterations(), 3840);
  status.AssertConsumed();  // no step needed
}

// A functional model's layout: "layer-0" is the InputLayer (no values), the
// Dense layers are "layer_with_weights-K" and "layer-(K+1)", the same object
// reached by two edges. Saved and restored through the Sequential that has
// an InputLayer first; the saved object of each Dense is bound through its
// first edge (layer_with_weights-K), and the second edge leads to it too.
TEST(KerasWeightlessLayersTest, InputLayerGivesTheFunctionalLayout) {
  const std::string dir = TempDir();
  Sequential model;
  model.Add(std::make_unique<InputLayer>(Shape{4}));
  model.Add(std::make_unique<Dense>(8, Relu));
  model.Add(std::make_unique<Dense>(3));
  const Tensor x = RandomNormal(Shape{2, 4}, 3);
  const Tensor y = model(x);
  const std::string path = Checkpoint(model).Write(dir + "/weights");

  const BundleReader reader(path);
  const auto graph = internal::ReadObjectGraph(reader);
  ASSERT_TRUE(graph);
  const auto& root = graph->nodes[0];
  std::vector<std::string> edges;
  for (const auto& child : root.children) edges.push_back(child.local_name);
  EXPECT_THAT(edges, ::testing::ElementsAre("layer-0", "layer_with_weights-0", "layer-1",
                                            "layer_with_weights-1", "layer-2"));
  EXPECT_TRUE(graph->nodes[static_cast<size_t>(root.children[0].node_id)].attributes.empty());
  EXPECT_TRUE(graph->nodes[static_cast<size_t>(root.children[0].node_id)].children.empty());
  EXPECT_EQ(root.children[1].node_id, root.children[2].node_id);
  EXPECT_TRUE(reader.Contains("layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE"));

  Sequential restored;
  restored.Add(std::make_unique<InputLayer>(Shape{4}));
  restored.Add(std::make_unique<Dense>(8, Relu));
  restored.Add(std::make_unique<Dense>(3));
  CheckpointLoadStatus status = Checkpoint(restored).Read(path);
  EXPECT_EQ(restored(x).ToVector<float>(), y.ToVector<float>());
  status.AssertConsumed();
  EXPECT_THROW(restored(Tensor::Zeros(Shape{2, 5})), InvalidArgumentError);  // InputLayer's shape
}

// TF's two-edge rule (restore.py, CheckpointPosition.bind_object): a
// Sequential saved with Flatten as layer-0, restored into one without it. The
// saved Dense objects are reached through "layer_with_weights-K" first and
// bind there, so both layers get the right values; the saved "layer-1" (the
// first Dense) leads to the second Dense here: reported, not an error.
TEST(KerasWeightlessLayersTest, FirstEdgeBindsTheOtherIsChecked) {
  const std::string dir = TempDir();
  Sequential saved;
  saved.Add(std::make_unique<Flatten>());
  saved.Add(std::make_unique<Dense>(4));
  saved.Add(std::make_unique<Dense>(4));
  const Tensor x = RandomNormal(Shape{2, 4}, 9);
  const Tensor y = saved(x);
  const std::string path = Checkpoint(saved).Write(dir + "/weights");

  Sequential restored;  // no Flatten
  restored.Add(std::make_unique<Dense>(4));
  restored.Add(std::make_unique<Dense>(4));
  restored(x);
  ::testing::internal::CaptureStderr();
  CheckpointLoadStatus status = Checkpoint(restored).Read(path);
  const std::string warning = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(restored(x).ToVector<float>(), y.ToVector<float>());
  EXPECT_THAT(warning, ::testing::HasSubstr("Inconsistent references"));
  EXPECT_THAT(warning, ::testing::HasSubstr("(root).layer_with_weights-0 is also reached through "
                                            "(root).layer-1"));
  status.AssertExistingObjectsMatched();

  // A mismatch names the edge the restore followed to the variable.
  Sequential wrong;
  wrong.Add(std::make_unique<Flatten>());
  wrong.Add(std::make_unique<Dense>(5));
  wrong.Add(std::make_unique<Dense>(4));
  wrong(x);
  try {
    Checkpoint(wrong).Read(path);
    FAIL() << "a kernel of another shape must be rejected";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("((root).layer_with_weights-0.kernel)"));
  }
}

}  // namespace
}  // namespace eager
