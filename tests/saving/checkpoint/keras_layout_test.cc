// Checkpoints in the Keras 3 and tf_keras 2.11+ layouts (KerasLayout). The
// expected keys are what TF 2.21 wrote for seed 000's model (one Dense, Adam,
// one step): Keras 3 and tf_keras.optimizers.Adam; tests/tf_keras checks the
// files against TF itself.

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "autodiff/flatten.h"
#include "autodiff/input_layer.h"
#include "autodiff/layers/embedding.h"
#include "autodiff/layers/recurrent.h"
#include "autodiff/sequential.h"
#include "ops/nn_ops.h"
#include "runtime/errors.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/checkpoint/checkpoint.h"
#include "tests/saving/checkpoint/checkpoint_test_model.h"
#include "tests/saving/saving_test_util.h"

namespace eager::testing {
namespace {

std::set<std::string> Keys(const std::string& prefix) {
  std::set<std::string> keys;
  for (const std::string& key : BundleReader(prefix).Keys()) {
    if (key != "_CHECKPOINTABLE_OBJECT_GRAPH") keys.insert(key);
  }
  return keys;
}

std::string Value(const std::string& path) { return path + "/.ATTRIBUTES/VARIABLE_VALUE"; }

// Trains one step in `layout`, saves, returns the path.
std::string SaveAfterOneStep(const std::string& dir, KerasLayout layout, bool layout_first) {
  MyModel model;
  Adam optimizer;
  Checkpoint checkpoint({{"model", &model}, {"optimizer", &optimizer}});
  if (layout_first) SetKerasLayout(checkpoint, layout);
  TrainStep(model, optimizer, Input());
  if (!layout_first) SetKerasLayout(checkpoint, layout);  // a built model changes layout
  return checkpoint.Save(dir + "/ckpt");
}

TEST(KerasLayoutTest, Keras3WritesKeras3Keys) {
  for (bool layout_first : {true, false}) {
    const std::string path = SaveAfterOneStep(TempDir(), KerasLayout::kKeras3, layout_first);
    EXPECT_EQ(Keys(path), (std::set<std::string>{
                              Value("model/dense/_kernel"), Value("model/dense/bias"),
                              Value("optimizer/_iterations"), Value("optimizer/_learning_rate"),
                              Value("optimizer/_variables/2"), Value("optimizer/_variables/3"),
                              Value("optimizer/_variables/4"), Value("optimizer/_variables/5"),
                              Value("save_counter")}))
        << "layout set " << (layout_first ? "before" : "after") << " the first step";
  }
}

TEST(KerasLayoutTest, Keras2WritesTfKerasKeys) {
  const std::string path = SaveAfterOneStep(TempDir(), KerasLayout::kKeras2, true);
  EXPECT_EQ(Keys(path), (std::set<std::string>{
                            Value("model/dense/kernel"), Value("model/dense/bias"),
                            Value("optimizer/_iterations"), Value("optimizer/_learning_rate"),
                            Value("optimizer/_variables/1"), Value("optimizer/_variables/2"),
                            Value("optimizer/_variables/3"), Value("optimizer/_variables/4"),
                            Value("save_counter")}));
}

// Restored into fresh objects (before their first step, so every value is
// restored on creation through the lists) and stepped, the model equals the
// one that kept training, bit for bit; the restore is fully consumed.
TEST(KerasLayoutTest, EveryLayoutRestoresBeforeTheFirstStepAndContinuesExactly) {
  for (KerasLayout layout :
       {KerasLayout::kKeras2Legacy, KerasLayout::kKeras2, KerasLayout::kKeras3}) {
    SCOPED_TRACE(std::string(KerasLayoutName(layout)));
    const std::string dir = TempDir();
    MyModel model;
    Adam optimizer;
    Checkpoint checkpoint({{"model", &model}, {"optimizer", &optimizer}});
    SetKerasLayout(checkpoint, layout);
    TrainStep(model, optimizer, Input());
    const std::string path = checkpoint.Save(dir + "/ckpt");
    TrainStep(model, optimizer, Input());

    MyModel restored_model;
    Adam restored_optimizer;
    Checkpoint restored({{"model", &restored_model}, {"optimizer", &restored_optimizer}});
    SetKerasLayout(restored, layout);
    CheckpointLoadStatus status = restored.Restore(path);
    TrainStep(restored_model, restored_optimizer, Input());
    status.AssertConsumed();
    EXPECT_EQ(restored_optimizer.iterations(), 2);
    ExpectSameValue(restored_model.dense.kernel(), model.dense.kernel());
    ExpectSameValue(*restored_model.dense.bias(), *model.dense.bias());
    for (const char* slot : {"m", "v"}) {
      ExpectSameValue(*restored_optimizer.GetSlot(restored_model.dense.kernel(), slot),
                      *optimizer.GetSlot(model.dense.kernel(), slot));
    }
  }
}

// A Keras 3 file read in another layout does not match silently.
TEST(KerasLayoutTest, ALayoutMismatchIsNotConsumed) {
  const std::string path = SaveAfterOneStep(TempDir(), KerasLayout::kKeras3, true);
  MyModel model;
  Adam optimizer;
  Checkpoint restored({{"model", &model}, {"optimizer", &optimizer}});
  CheckpointLoadStatus status = restored.Restore(path);
  TrainStep(model, optimizer, Input());
  EXPECT_THROW(status.AssertConsumed(), FailedPreconditionError);
}

// A real tf_keras 2.11+ file (tf2_checkpoint_manager_tictactoe, ckpt-17: a
// Sequential of Dense(9, relu) and Dense(9, softmax) whose compiled Adam is
// "net/optimizer", at iteration 116). Its m and v are "_variables/1..8",
// each layer's kernel then bias, m before v: after one step with zero
// gradients, m = 0.9 m_file and v = 0.999 v_file for the right variable.
TEST(KerasLayoutTest, RestoresARealTfKerasCheckpointWithTheNewOptimizer) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const std::string path = RealdataDir() + "/tf2_checkpoint_manager_tictactoe/tf_ckpts/ckpt-17";
  struct Net : Module {
    Dense d0{9, Relu};
    Dense d1{9, Softmax};
    Adam optimizer;
    Net() {
      Track("layer_with_weights-0", d0);
      Track("layer_with_weights-1", d1);
      Track("optimizer", optimizer);
    }
  } net;
  Adam unused;
  Variable step(Tensor(int32_t{0}), "step");
  Checkpoint checkpoint({{"net", &net}, {"optimizer", &unused}, {"step", &step}});
  SetKerasLayout(checkpoint, KerasLayout::kKeras2);
  CheckpointLoadStatus status = checkpoint.Restore(path);
  net.d0.Build(9);
  net.d1.Build(9);
  EXPECT_EQ(net.optimizer.iterations(), 116);
  std::vector<Variable*> vars = {&net.d0.kernel(), net.d0.bias(), &net.d1.kernel(), net.d1.bias()};
  std::vector<std::optional<Tensor>> zeros;
  zeros.reserve(vars.size());
  for (Variable* v : vars) zeros.emplace_back(Tensor::Zeros(v->shape()));
  net.optimizer.ApplyGradients(zeros, vars);
  status.AssertConsumed();
  const BundleReader reader(path);
  for (size_t i = 0; i < vars.size(); ++i) {
    for (const auto& [slot, decay, index] :
         {std::tuple{"m", 0.9, 1 + 2 * i}, std::tuple{"v", 0.999, 2 + 2 * i}}) {
      SCOPED_TRACE(StrCat("slot ", slot, " of variable ", i));
      const std::vector<float> saved =
          reader.Read(Value(StrCat("net/optimizer/_variables/", index))).ToVector<float>();
      const std::vector<float> now =
          net.optimizer.GetSlot(*vars[i], slot)->value().ToVector<float>();
      ASSERT_EQ(now.size(), saved.size());
      for (size_t k = 0; k < now.size(); ++k) {
        EXPECT_NEAR(now[k], decay * saved[k], 1e-6 * std::abs(saved[k]) + 1e-30);
      }
    }
  }
}

}  // namespace
// Keras 3 saves a Sequential as "_functional/_operations/<i>" with its
// InputLayer at 0 (TF 2.21; tests/tf_keras checks against TF): an eager
// Sequential's first InputLayer is that 0, else an empty object stands in.
TEST(KerasLayoutTest, Keras3SequentialWritesFunctionalOperations) {
  for (bool with_input : {false, true}) {
    Sequential model;
    if (with_input) model.Add(std::make_unique<InputLayer>(Shape{2, 3}));
    model.Add(std::make_unique<Flatten>());
    model.Add(std::make_unique<Dense>(4));
    Checkpoint checkpoint({{"model", &model}});
    SetKerasLayout(checkpoint, KerasLayout::kKeras3);
    model(Tensor::Zeros(Shape{1, 2, 3}, DType::kFloat32));
    const std::string path = checkpoint.Write(TempDir() + "/seq3");
    EXPECT_EQ(Keys(path), (std::set<std::string>{Value("model/_functional/_operations/2/_kernel"),
                                                 Value("model/_functional/_operations/2/bias")}))
        << (with_input ? "with" : "without") << " an InputLayer";
  }
}

// Keras 3 records Embedding(mask_zero=True)'s mask as a NotEqual operation
// when a later layer takes the mask (TF 2.21 wrote _operations/1 embedding,
// 3 lstm, 4 dense for Embedding, LSTM, Dense; tests/tf_keras/keras_zoo_test.py
// and keras_functional_masks_test.py restore such files): it takes an index
// but saves nothing. A Dense takes no mask: then there is no NotEqual.
TEST(KerasLayoutTest, Keras3SequentialSkipsTheIndexOfEmbeddingsMaskOp) {
  for (bool mask_zero : {false, true}) {
    for (bool recurrent : {false, true}) {
      Sequential model;
      model.Add(std::make_unique<layers::Embedding>(10, 4, mask_zero));
      if (recurrent) model.Add(std::make_unique<layers::SimpleRNN>(3));
      model.Add(std::make_unique<Dense>(2));
      Checkpoint checkpoint({{"model", &model}});
      SetKerasLayout(checkpoint, KerasLayout::kKeras3);
      model(Tensor::FromVector<int32_t>({1, 2, 0}, Shape{1, 3}));
      const int shift = mask_zero && recurrent ? 1 : 0;
      std::set<std::string> want = {Value("model/_functional/_operations/1/_embeddings")};
      const std::string dense = std::to_string(2 + (recurrent ? 1 : 0) + shift);
      want.insert(Value("model/_functional/_operations/" + dense + "/_kernel"));
      want.insert(Value("model/_functional/_operations/" + dense + "/bias"));
      // The SimpleRNN's three variables are under its own index.
      const std::string rnn = "model/_functional/_operations/" + std::to_string(2 + shift) + "/";
      std::set<std::string> keys = Keys(checkpoint.Write(TempDir() + "/embedding3")), rnn_keys;
      for (const std::string& key : keys) {
        if (key.rfind(rnn, 0) == 0 && !want.contains(key)) rnn_keys.insert(key);
      }
      for (const std::string& key : rnn_keys) keys.erase(key);
      EXPECT_EQ(keys, want) << (mask_zero ? "with" : "without") << " mask_zero, "
                            << (recurrent ? "with" : "without") << " a SimpleRNN";
      EXPECT_EQ(rnn_keys.size(), recurrent ? 3u : 0u);
    }
  }
}

// A Keras 3 functional model ("_operations" right under the model) is not a
// Sequential's structure: the restore says so instead of matching nothing.
TEST(KerasLayoutTest, AKeras3FunctionalFileIntoASequentialNamesTheEdge) {
  Module functional;
  Module operations;
  InputLayer input;
  Dense dense(4);
  dense.Build(6);
  functional.Track("_operations", operations);
  operations.Track("0", input);
  operations.Track("1", dense);
  SetKerasLayout(dense, KerasLayout::kKeras3);
  const std::string path = Checkpoint({{"model", &functional}}).Write(TempDir() + "/functional3");
  for (KerasLayout layout : {KerasLayout::kKeras3, KerasLayout::kKeras2}) {
    Sequential model;
    model.Add(std::make_unique<Flatten>());
    model.Add(std::make_unique<Dense>(4));
    Checkpoint checkpoint({{"model", &model}});
    SetKerasLayout(checkpoint, layout);
    try {
      checkpoint.Restore(path);
      ADD_FAILURE() << "restored a functional model's file into a Sequential";
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("Keras 3 functional model (edge '_operations')"),
                std::string::npos)
          << e.what();
    }
  }
}

// A root-mode Checkpoint (Keras's model.save_weights: the object itself is
// the root) passes the layout on to everything below its root.
TEST(KerasLayoutTest, SetKerasLayoutReachesARootModeCheckpointsObjects) {
  struct Root : Module {
    MyModel model;
    Adam optimizer;
    Root() {
      Track("model", model);
      Track("optimizer", optimizer);
    }
  } root;
  Checkpoint checkpoint(root);
  SetKerasLayout(checkpoint, KerasLayout::kKeras3);
  TrainStep(root.model, root.optimizer, Input());
  const std::string path = checkpoint.Write(TempDir() + "/root_mode");
  EXPECT_EQ(Keys(path), (std::set<std::string>{
                            Value("model/dense/_kernel"), Value("model/dense/bias"),
                            Value("optimizer/_iterations"), Value("optimizer/_learning_rate"),
                            Value("optimizer/_variables/2"), Value("optimizer/_variables/3"),
                            Value("optimizer/_variables/4"), Value("optimizer/_variables/5")}));
}

}  // namespace eager::testing
