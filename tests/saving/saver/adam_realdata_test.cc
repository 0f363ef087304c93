// TF1-compatible Adam against a real TensorFlow 1.0.1 checkpoint: CarND
// LeNet-Lab (../shared/realdata/tf1_saver_lenet_adam) trained 4300 steps, so
// its beta1_power is 0.9^4300 in float32, stuck at the denormal 4 * 2^-149
// where repeated *0.9 stops changing, and beta2_power is 0.999^4300.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>

#include "autodiff/adam.h"
#include "runtime/names.h"
#include "saving/bundle/bundle_reader.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using testing::RealdataDir;

uint32_t Bits(float x) { return std::bit_cast<uint32_t>(x); }

TEST(AdamRealdataTest, Tf1PowersAfter4300StepsEqualTheLenetCheckpointBitForBit) {
  EAGER_SKIP_WITHOUT_REALDATA();
  const BundleReader reader(RealdataDir() + "/tf1_saver_lenet_adam/lenet");
  const float saved_beta1_power = reader.Read("beta1_power").scalar<float>();
  const float saved_beta2_power = reader.Read("beta2_power").scalar<float>();

  ResetDefaultNames();
  AdamOptions options;
  options.tf1_compatible = true;
  Adam adam(options);
  Variable w(Tensor::FromVector<float>({1.0f}, Shape{1}), "w");
  const Tensor g = Tensor::FromVector<float>({0.5f}, Shape{1});
  for (int step = 0; step < 4300; ++step) adam.ApplyGradients({{g, &w}});

  const float beta1_power = adam.beta1_power()->value().scalar<float>();
  const float beta2_power = adam.beta2_power()->value().scalar<float>();
  EXPECT_EQ(Bits(beta1_power), Bits(saved_beta1_power));
  EXPECT_EQ(std::fpclassify(beta1_power), FP_SUBNORMAL);  // kept, not flushed to zero
  EXPECT_EQ(Bits(beta2_power), Bits(saved_beta2_power));
  EXPECT_TRUE(std::isfinite(w.value().scalar<float>()));
}

}  // namespace
}  // namespace eager
