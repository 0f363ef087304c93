// The optimizers' and the EMA's update loops are TF's Apply*/AssignSub
// kernels and run in kernel mode (runtime/flush_denormal.h): state
// that would decay into denormals becomes zero; the caller's mode is kept.

#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <limits>
#include <vector>

#include "autodiff/adam.h"
#include "autodiff/exponential_moving_average.h"
#include "autodiff/sgd.h"
#include "runtime/names.h"
#include "runtime/threads.h"
#include "tests/testing/fp_mode.h"

namespace eager {
namespace {

using testing::Bits;
using testing::CallerControl;
using testing::CallerMode;
using testing::SmallDenormal;

class FlushDenormalAutodiffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!internal::kCanFlushDenormals) GTEST_SKIP() << "no flush-to-zero control on this CPU";
    ResetDefaultNames();
  }
};

float Scalar(const Variable& v) { return v.value().data<float>()[0]; }

TEST_F(FlushDenormalAutodiffTest, AdamFlushesDenormalSlotsAndKeepsTheCallersMode) {
  CallerMode caller(/*flush=*/false, FE_UPWARD);
  const internal::FpControl before = CallerControl();
  Adam adam;
  Variable w(Tensor::FromVector<float>({1.0f, 1.0f}, Shape{2}), "w");
  // m = 0 + (g - 0) * 0.1: 1e-38 for g = 1e-37, a denormal, so 0.
  adam.ApplyGradients({{Tensor::FromVector<float>({1e-37f, 1.0f}, Shape{2}), &w}});
  Variable& m = *adam.GetSlot(w, "m");
  EXPECT_EQ(Bits(m.value().data<float>()[0]), 0u);
  EXPECT_NEAR(m.value().data<float>()[1], 0.1f, 1e-6f);
  EXPECT_EQ(CallerControl(), before);

  // A denormal m (restored, say) reads as zero: m + (0 - m) * 0.1 is 0.
  m.Assign(Tensor::FromVector<float>({SmallDenormal(), 0.1f}, Shape{2}));
  adam.ApplyGradients({{Tensor::FromVector<float>({0.0f, 1.0f}, Shape{2}), &w}});
  EXPECT_EQ(Bits(m.value().data<float>()[0]), 0u);
  EXPECT_EQ(CallerControl(), before);
}

// A large variable is updated over the intra-op pool (ops/apply_adam.h);
// the blocks the pool's workers take flush as the caller's do: m = g * 0.1 for
// g = 1e-37 is a denormal, so 0, in every one of the 2^18 elements.
TEST_F(FlushDenormalAutodiffTest, AdamOverThePoolFlushesInEveryBlock) {
  CallerMode caller(/*flush=*/false, FE_UPWARD);
  const internal::FpControl before = CallerControl();
  const int saved_threads = GetNumThreads();
  SetNumThreads(2);
  constexpr int64_t kSize = int64_t{1} << 18;
  Adam adam;
  Variable w(Tensor::FromVector<float>(std::vector<float>(kSize, 1.0f), Shape{kSize}), "w");
  for (int step = 0; step < 3; ++step) {
    adam.ApplyGradients(
        {{Tensor::FromVector<float>(std::vector<float>(kSize, 1e-37f), Shape{kSize}), &w}});
    int64_t nonzero = 0;
    const Tensor m_slot = adam.GetSlot(w, "m")->value();  // a range-for would drop a temporary
    for (float m : m_slot.data<float>()) nonzero += Bits(m) != 0u;
    EXPECT_EQ(nonzero, 0) << "step " << step + 1;
  }
  SetNumThreads(saved_threads);
  EXPECT_EQ(CallerControl(), before);
}

TEST_F(FlushDenormalAutodiffTest, SgdMomentumFlushesADenormalAccumulator) {
  CallerMode caller(/*flush=*/false, FE_TONEAREST);
  const internal::FpControl before = CallerControl();
  SGD sgd(/*learning_rate=*/0.1, /*momentum=*/0.5);
  Variable w(1.0f, "w");
  // a = 0 * 0.5 - g * 0.1 = -1e-38 for g = 1e-37: a denormal, so -0.
  sgd.ApplyGradients({{Tensor(1e-37f), &w}});
  EXPECT_EQ(Scalar(*sgd.GetSlot(w, "momentum")), 0.0f);
  EXPECT_NE(std::fpclassify(Scalar(*sgd.GetSlot(w, "momentum"))), FP_SUBNORMAL);
  EXPECT_EQ(CallerControl(), before);
}

// shadow -= (shadow - 0) * 0.5: once the product would be a denormal it is
// zero, so the shadow stays at the last normal value instead of decaying
// through the denormals (as in TF, whose update is an AssignSub kernel).
TEST_F(FlushDenormalAutodiffTest, EmaShadowDecayingTowardZeroNeverBecomesDenormal) {
  CallerMode caller(/*flush=*/false, FE_TONEAREST);
  const internal::FpControl before = CallerControl();
  ExponentialMovingAverage ema(0.5);
  Variable v(3e-38f, "v");  // normal: FLT_MIN is 1.18e-38
  ema.Apply({&v});
  v.Assign(0.0f);
  ema.Apply();
  const float last_normal = Scalar(*ema.AverageVariable(v));
  ASSERT_EQ(last_normal, 1.5e-38f);
  for (int step = 0; step < 10; ++step) {
    ema.Apply();  // 7.5e-39 would be a denormal
    EXPECT_EQ(Scalar(*ema.AverageVariable(v)), last_normal) << "step " << step;
  }
  EXPECT_EQ(CallerControl(), before);
}

}  // namespace
}  // namespace eager
