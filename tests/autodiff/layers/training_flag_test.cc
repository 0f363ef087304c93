// Layer's `training` argument (autodiff/layer.h): layer(x) is inference,
// layer(x, true) training; a layer that ignores the mode needs only Call(x),
// and Sequential passes the mode to every layer.

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "autodiff/dense.h"
#include "autodiff/layer.h"
#include "autodiff/sequential.h"
#include "ops/binary_ops.h"

namespace eager {
namespace {

// Adds 1 in training, 0 in inference, and records each mode it saw.
class ModeProbe : public Layer {
 public:
  Tensor Call(const Tensor& x) override { return Call(x, false); }
  Tensor Call(const Tensor& x, bool training) override {
    seen.push_back(training);
    return Add(x, Tensor(training ? 1.0f : 0.0f));
  }
  std::vector<bool> seen;
};

TEST(TrainingFlagTest, LayerCallIsInferenceAndTrainingIsExplicit) {
  ModeProbe probe;
  EXPECT_EQ(probe(Tensor(2.0f)).scalar<float>(), 2.0f);
  EXPECT_EQ(probe(Tensor(2.0f), true).scalar<float>(), 3.0f);
  EXPECT_EQ(probe(Tensor(2.0f), false).scalar<float>(), 2.0f);
  EXPECT_EQ(probe.seen, (std::vector<bool>{false, true, false}));
}

TEST(TrainingFlagTest, SequentialPassesTheModeToEveryLayer) {
  Sequential model;
  auto first = std::make_unique<ModeProbe>();
  auto second = std::make_unique<ModeProbe>();
  ModeProbe* a = first.get();
  ModeProbe* b = second.get();
  model.Add(std::move(first));
  model.Add(std::move(second));
  EXPECT_EQ(model(Tensor(1.0f), true).scalar<float>(), 3.0f);
  EXPECT_EQ(model(Tensor(1.0f)).scalar<float>(), 1.0f);
  EXPECT_EQ(a->seen, (std::vector<bool>{true, false}));
  EXPECT_EQ(b->seen, (std::vector<bool>{true, false}));
}

// A layer overriding only Call(x) behaves the same in both modes.
TEST(TrainingFlagTest, ModeIndependentLayersIgnoreIt) {
  Dense dense(2, nullptr, true, /*seed=*/3);
  const Tensor x = Tensor::FromVector<float>({1, 2, 3}, Shape{1, 3});
  EXPECT_EQ(dense(x, true).ToVector<float>(), dense(x).ToVector<float>());
}

}  // namespace
}  // namespace eager
