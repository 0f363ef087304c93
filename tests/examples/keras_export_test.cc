// The main job's `--save_keras`: the Keras Sequential written for the MLP
// and the CNN computes what the trained model computes, and the `.keras`
// file reads back into the same function. (tests/tf/main_job_keras.py has
// Keras 3 load the main job's file and reach the accuracy it printed.)

#include "examples/fashion_mnist/keras_export.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "examples/fashion_mnist/dataset.h"
#include "examples/fashion_mnist/models.h"
#include "ops/random_generator.h"
#include "runtime/errors.h"
#include "runtime/names.h"
#include "saving/keras/keras_model.h"

namespace fashion_mnist {
namespace {

std::string TempPath(const std::string& name) {
  const char* base = std::getenv("EAGER_TEST_TMPDIR");
  const auto dir = std::filesystem::path(base != nullptr ? base : "/tmp") / "keras_export_test";
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir / name);
  return (dir / name).string();
}

float MaxAbsDiff(const eager::Tensor& a, const eager::Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  float worst = 0;
  const auto x = a.data<float>();
  const auto y = b.data<float>();
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

class KerasExportTest : public ::testing::TestWithParam<std::string> {};

TEST_P(KerasExportTest, KerasModelComputesTheTrainedFunction) {
  eager::ResetDefaultNames();
  const std::unique_ptr<Classifier> model = MakeModel(GetParam(), 7);
  const eager::Tensor images =
      eager::RandomUniform(eager::Shape{5, kImageSize}, /*seed=*/11, 0.0, 1.0);
  const eager::Tensor logits = (*model)(images);
  // Training moves the biases off zero; so does this, so that a bias the
  // copy dropped shows.
  for (eager::Variable* v : model->TrainableVariables()) {
    v->Assign(eager::RandomUniform(v->value().shape(), 3, -0.1, 0.1));
  }
  const eager::Tensor trained = (*model)(images);
  ASSERT_GT(MaxAbsDiff(logits, trained), 1e-3f);

  const std::unique_ptr<eager::Sequential> keras = AsKerasSequential(*model);
  EXPECT_LT(MaxAbsDiff((*keras)(images), trained), 1e-5f);

  const std::string path = TempPath(GetParam() + ".keras");
  SaveAsKeras(*model, path);
  eager::KerasModel loaded = eager::LoadKerasModel(path);
  EXPECT_LT(MaxAbsDiff((*loaded.model)(images), trained), 1e-5f);
  EXPECT_EQ(loaded.optimizer, nullptr);
}

INSTANTIATE_TEST_SUITE_P(MainJobModels, KerasExportTest, ::testing::Values("mlp", "cnn"));

TEST(KerasExport, UnbuiltModelIsRefused) {
  const std::unique_ptr<Classifier> model = MakeModel("mlp", 1);
  EXPECT_THROW(AsKerasSequential(*model), eager::FailedPreconditionError);
}

}  // namespace
}  // namespace fashion_mnist
