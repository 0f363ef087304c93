// Recurrent layers (autodiff/layers/recurrent.h) in checkpoints: the keys
// tf_keras 2.21 and Keras 3 write for an RNN layer ("<layer>/cell/kernel",
// "recurrent_kernel", "bias"; tests/tf_keras/keras_recurrent_test.py checks
// them against TF itself), restore-on-create into an unbuilt layer, and a
// shape mismatch named.

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "autodiff/dense.h"
#include "autodiff/layers/recurrent.h"
#include "autodiff/sequential.h"
#include "ops/random_generator.h"
#include "runtime/errors.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/checkpoint/checkpoint.h"
#include "tests/saving/saving_test_util.h"

namespace eager::testing {
namespace {

std::string Value(const std::string& path) { return path + "/.ATTRIBUTES/VARIABLE_VALUE"; }

std::set<std::string> Keys(const std::string& prefix) {
  std::set<std::string> keys;
  for (const std::string& key : BundleReader(prefix).Keys()) {
    if (key != "_CHECKPOINTABLE_OBJECT_GRAPH") keys.insert(key);
  }
  return keys;
}

TEST(RecurrentCheckpointTest, SequentialWritesTfKerasKeysAndRestoresOnCreation) {
  const Tensor x = RandomNormal(Shape{2, 5, 3}, 4);
  const std::string dir = TempDir();
  std::string path;
  std::vector<float> want;
  {
    Sequential model;
    model.Add(std::make_unique<layers::GRU>(4, layers::RecurrentConfig{.seed = 9}));
    model.Add(std::make_unique<Dense>(2));
    Checkpoint checkpoint({{"model", &model}});
    SetKerasLayout(checkpoint, KerasLayout::kKeras2);
    want = model(x).ToVector<float>();
    path = checkpoint.Save(dir + "/ckpt");
  }
  EXPECT_EQ(Keys(path), (std::set<std::string>{
                            Value("model/layer_with_weights-0/cell/kernel"),
                            Value("model/layer_with_weights-0/cell/recurrent_kernel"),
                            Value("model/layer_with_weights-0/cell/bias"),
                            Value("model/layer_with_weights-1/kernel"),
                            Value("model/layer_with_weights-1/bias"), Value("save_counter")}));
  // Another seed: only the restore can make the outputs equal.
  Sequential model;
  model.Add(std::make_unique<layers::GRU>(4, layers::RecurrentConfig{.seed = 10}));
  model.Add(std::make_unique<Dense>(2));
  Checkpoint checkpoint({{"model", &model}});
  SetKerasLayout(checkpoint, KerasLayout::kKeras2);
  CheckpointLoadStatus status = checkpoint.Restore(path);
  EXPECT_EQ(model(x).ToVector<float>(), want);
  status.AssertConsumed();
}

TEST(RecurrentCheckpointTest, AnotherUnitCountNamesTheVariableAndShapes) {
  const std::string dir = TempDir();
  layers::LSTM saved(4);
  saved(Tensor::Zeros(Shape{1, 2, 3}));
  const std::string path = Checkpoint({{"lstm", &saved}}).Save(dir + "/ckpt");
  layers::LSTM other(5);
  Checkpoint checkpoint({{"lstm", &other}});
  checkpoint.Restore(path);
  try {
    other(Tensor::Zeros(Shape{1, 2, 3}));
    FAIL() << "restoring [3,16] into an LSTM(5) kernel [3,20] did not throw";
  } catch (const InvalidArgumentError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("kernel"), std::string::npos) << message;
    EXPECT_NE(message.find("[3,16]"), std::string::npos) << message;
    EXPECT_NE(message.find("[3,20]"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace eager::testing
