// eager-ckpt on Keras files (issue 40, "Tools"): a .weights.h5 and a .keras
// are listed, dumped, verified, diffed and summarized as checkpoints keyed by
// HDF5 dataset path, under their own names; the temporary bundle behind them
// is gone afterwards; a damaged file is an error naming it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <sstream>
#include <string>

#include "autodiff/dense.h"
#include "eager.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/keras/keras_model.h"
#include "saving/keras/keras_weights.h"
#include "saving/tools/checkpoint_tools.h"
#include "saving/tools/inspect_checkpoint.h"
#include "saving/tools/keras_file_bundle.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using ::eager::testing::TempDir;
using ::testing::HasSubstr;

std::unique_ptr<Sequential> Model(uint64_t seed) {
  auto model = std::make_unique<Sequential>("seq");
  model->Add(std::make_unique<Dense>(3, Relu, true, seed));
  model->Add(std::make_unique<Dense>(2, nullptr, true, seed + 1));
  (void)(*model)(Tensor::FromVector<float>({1.0f, 2.0f}, Shape({1, 2})));
  return model;
}

TEST(KerasFileToolsTest, WeightsFileListsDumpsVerifiesAndDiffs) {
  const std::string dir = TempDir() + "/keras_tools";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto a = Model(1);
  auto b = Model(1);
  b->TrainableVariables()[1]->Assign(Tensor::FromVector<float>({0.5f, 0.0f, 0.0f}, Shape({3})));
  SaveKerasWeights(dir + "/a.weights.h5", *a);
  SaveKerasWeights(dir + "/b.weights.h5", *b);
  SaveKerasModel(dir + "/a.keras", *a);
  std::string bundle_dir;
  {
    std::unique_ptr<ckpt_tool::KerasFileBundle> holder;
    const BundleReader reader(ckpt_tool::ResolveReadablePath(dir + "/a.weights.h5", holder));
    bundle_dir = std::filesystem::path(reader.prefix()).parent_path().string();
    std::ostringstream list;
    ListCheckpoint(reader, list);
    EXPECT_THAT(list.str(), HasSubstr(dir + "/a.weights.h5: 4 tensors in 1 shard"));
    EXPECT_THAT(list.str(), HasSubstr("layers/dense/vars/0  float32  [2,3]  24 bytes"));
    EXPECT_THAT(list.str(), HasSubstr("layers/dense/vars/1  float32  [3]  12 bytes"));
    EXPECT_THAT(list.str(), HasSubstr("layers/dense_1/vars/0  float32  [3,2]  24 bytes"));
    EXPECT_THAT(list.str(), HasSubstr("layers/dense_1/vars/1  float32  [2]  8 bytes"));
    EXPECT_EQ(reader.Read("layers/dense/vars/0").ValuesString(100),
              a->TrainableVariables()[0]->value().ValuesString(100));
    const VerifyResult verified = VerifyCheckpoint(reader);
    EXPECT_EQ(verified.tensors, 4);
    EXPECT_TRUE(verified.unchecked.empty());
    EXPECT_TRUE(std::filesystem::exists(bundle_dir));
  }
  EXPECT_FALSE(std::filesystem::exists(bundle_dir)) << "the temporary bundle stays";

  std::unique_ptr<ckpt_tool::KerasFileBundle> ha, hb, hk;
  const BundleReader ra(ckpt_tool::ResolveReadablePath(dir + "/a.weights.h5", ha));
  const BundleReader rb(ckpt_tool::ResolveReadablePath(dir + "/b.weights.h5", hb));
  const std::vector<TensorDifference> diff = DiffCheckpoints(ra, rb);
  EXPECT_TRUE(HasDifferences(diff));
  std::ostringstream printed;
  PrintCheckpointDiff(ra, rb, diff, false, printed);
  EXPECT_THAT(printed.str(), HasSubstr("--- " + dir + "/a.weights.h5"));
  EXPECT_THAT(printed.str(), HasSubstr("0 added, 0 removed, 1 changed, 3 same"));
  // The .keras archive holds the same weights as a's .weights.h5.
  const BundleReader rk(ckpt_tool::ResolveReadablePath(dir + "/a.keras", hk));
  EXPECT_FALSE(HasDifferences(DiffCheckpoints(ra, rk)));
  std::ostringstream stats;
  PrintTensorStatistics(rk, ComputeTensorStatistics(rk), false, stats);
  EXPECT_THAT(stats.str(), HasSubstr(dir + "/a.keras: 4 tensors"));
}

TEST(KerasFileToolsTest, ADamagedKerasFileIsAnErrorNamingIt) {
  const std::string dir = TempDir() + "/keras_tools_bad";
  std::filesystem::create_directories(dir);
  testing::WriteFile(dir + "/bad.weights.h5", "not an HDF5 file at all");
  testing::WriteFile(dir + "/bad.keras", "not a zip");
  for (const char* name : {"/bad.weights.h5", "/bad.keras", "/missing.keras"}) {
    std::unique_ptr<ckpt_tool::KerasFileBundle> holder;
    try {
      ckpt_tool::ResolveReadablePath(dir + name, holder);
      ADD_FAILURE() << name << " was read";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(dir + name));
    }
    EXPECT_EQ(holder, nullptr);
  }
}

}  // namespace
}  // namespace eager
