// A functional Model's checkpoint in each Keras line's layout
// (autodiff/functional.h): the keys TF 2.21 writes for the same model
// (tests/tf_keras/keras_functional_test.py checks against TF itself), a
// round trip in each layout, and a file of the other layout refused with a
// message naming the layout it holds.

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "autodiff/dense.h"
#include "autodiff/functional.h"
#include "autodiff/layers/merging.h"
#include "autodiff/sequential.h"
#include "runtime/errors.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/checkpoint/checkpoint.h"
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

std::string Value(const std::string& path) {
  return "model/" + path + "/.ATTRIBUTES/VARIABLE_VALUE";
}

// Two inputs, a Dense shared by both, a Concatenate, one output; the seeds
// differ with `seed`, so two instances hold different weights.
struct Towers {
  KerasTensor a = Input({3}, DType::kFloat32, "a");
  KerasTensor b = Input({3}, DType::kFloat32, "b");
  Dense shared;
  layers::Concatenate concat{-1, "concatenate"};
  Dense out;
  std::unique_ptr<Model> model;
  explicit Towers(uint64_t seed)
      : shared(4, nullptr, true, seed, "shared"), out(2, nullptr, true, seed + 1, "out") {
    const KerasTensor c = concat({shared(a), shared(b)});
    model = std::make_unique<Model>(std::vector<KerasTensor>{a, b},
                                    std::vector<KerasTensor>{out(c)}, "towers");
  }
};

std::string WriteIn(KerasLayout layout, uint64_t seed) {
  Towers t(seed);
  Checkpoint checkpoint({{"model", t.model.get()}});
  SetKerasLayout(checkpoint, layout);
  return checkpoint.Write(TempDir() + "/towers_" + std::string(KerasLayoutName(layout)));
}

TEST(FunctionalLayoutTest, EachLineWritesItsKeys) {
  // Operations: a, b, shared, concatenate, out.
  EXPECT_EQ(Keys(WriteIn(KerasLayout::kKeras3, 1)),
            (std::set<std::string>{Value("_operations/2/_kernel"), Value("_operations/2/bias"),
                                   Value("_operations/4/_kernel"), Value("_operations/4/bias")}));
  EXPECT_EQ(Keys(WriteIn(KerasLayout::kKeras2, 1)),
            (std::set<std::string>{
                Value("layer_with_weights-0/kernel"), Value("layer_with_weights-0/bias"),
                Value("layer_with_weights-1/kernel"), Value("layer_with_weights-1/bias")}));
}

// tf_keras's model.save_weights in TF format: the model is the root.
TEST(FunctionalLayoutTest, RootModeReachesTheLayers) {
  Towers t(1);
  Checkpoint checkpoint(*t.model);
  SetKerasLayout(checkpoint, KerasLayout::kKeras2);
  const std::string path = checkpoint.Write(TempDir() + "/root");
  EXPECT_EQ(Keys(path),
            (std::set<std::string>{"layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE",
                                   "layer_with_weights-0/bias/.ATTRIBUTES/VARIABLE_VALUE",
                                   "layer_with_weights-1/kernel/.ATTRIBUTES/VARIABLE_VALUE",
                                   "layer_with_weights-1/bias/.ATTRIBUTES/VARIABLE_VALUE"}));
  Towers restored(7);
  Checkpoint reader(*restored.model);
  SetKerasLayout(reader, KerasLayout::kKeras2);
  reader.Restore(path).AssertConsumed();
  EXPECT_EQ(restored.out.kernel().value().ToVector<float>(),
            t.out.kernel().value().ToVector<float>());
}

TEST(FunctionalLayoutTest, RoundTripsInEachLayout) {
  const std::vector<Tensor> x = {Tensor::FromVector<float>({1, 2, 3, -1, 0, 2}, Shape{2, 3}),
                                 Tensor::FromVector<float>({0, 1, -2, 3, 1, 1}, Shape{2, 3})};
  for (KerasLayout layout : {KerasLayout::kKeras3, KerasLayout::kKeras2}) {
    SCOPED_TRACE(std::string(KerasLayoutName(layout)));
    Towers saved(1);
    Checkpoint writer({{"model", saved.model.get()}});
    SetKerasLayout(writer, layout);
    const std::string path = writer.Save(TempDir() + "/round_trip");
    Towers restored(7);
    ASSERT_NE((*restored.model)(x)[0].ToVector<float>(), (*saved.model)(x)[0].ToVector<float>());
    Checkpoint reader({{"model", restored.model.get()}});
    SetKerasLayout(reader, layout);
    reader.Restore(path).AssertConsumed();
    EXPECT_EQ((*restored.model)(x)[0].ToVector<float>(), (*saved.model)(x)[0].ToVector<float>());
  }
}

TEST(FunctionalLayoutTest, TheOtherLayoutIsNamed) {
  const struct {
    KerasLayout file, model;
    const char* message;
  } cases[] = {
      {KerasLayout::kKeras3, KerasLayout::kKeras2,
       "holds a Keras 3 functional model (edge '_operations'), but Model 'towers' is in the "
       "keras2 layout"},
      {KerasLayout::kKeras2, KerasLayout::kKeras3,
       "holds a tf_keras (Keras 2) model (edge 'layer_with_weights-0'), but Model 'towers' is in "
       "the keras3 layout"},
  };
  for (const auto& c : cases) {
    const std::string path = WriteIn(c.file, 1);
    Towers t(7);
    Checkpoint checkpoint({{"model", t.model.get()}});
    SetKerasLayout(checkpoint, c.model);
    try {
      checkpoint.Restore(path);
      ADD_FAILURE() << "restored a " << KerasLayoutName(c.file) << " file into a "
                    << KerasLayoutName(c.model) << " model";
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
  }
}

// A Keras 3 Sequential's file ("_functional") is not a functional model's.
TEST(FunctionalLayoutTest, ASequentialsFileIsNamed) {
  Sequential seq;
  seq.Add(std::make_unique<Dense>(4));
  seq(Tensor::Zeros(Shape{1, 3}));
  Checkpoint writer({{"model", &seq}});
  SetKerasLayout(writer, KerasLayout::kKeras3);
  const std::string path = writer.Write(TempDir() + "/seq");
  Towers t(7);
  Checkpoint checkpoint({{"model", t.model.get()}});
  SetKerasLayout(checkpoint, KerasLayout::kKeras3);
  try {
    checkpoint.Restore(path);
    ADD_FAILURE() << "restored a Sequential's file into a functional Model";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("Keras 3 Sequential (edge '_functional/_operations')"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace eager::testing
