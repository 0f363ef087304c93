// Checkpoints in the Keras 3 and tf_keras 2.11+ layouts (KerasLayout). The
// expected keys are what TF 2.21 wrote for seed 000's model (one Dense, Adam,
// one step): Keras 3 and tf_keras.optimizers.Adam; tests/tf_keras checks the
// files against TF itself.

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "checkpoint_test_model.h"
#include "saving/bundle_reader.h"
#include "saving/checkpoint.h"
#include "saving_test_util.h"

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

}  // namespace
}  // namespace eager::testing
