// runtime/flush_denormal.h: the kernel mode (denormals flushed,
// round to nearest) and that the caller gets its own mode back.

#include "runtime/flush_denormal.h"

#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "runtime/variable.h"
#include "tests/testing/fp_mode.h"

namespace eager {
namespace {

using internal::ScopedFlushDenormal;
using testing::CallerControl;
using testing::CallerMode;
using testing::HalfMinNormal;
using testing::MultiplyHere;
using testing::SmallDenormal;

class FlushDenormalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!internal::kCanFlushDenormals) GTEST_SKIP() << "no flush-to-zero control on this CPU";
  }
};

TEST_F(FlushDenormalTest, ScopeFlushesDenormalInputsAndResults) {
  CallerMode caller(/*flush=*/false, FE_TONEAREST);
  ASSERT_EQ(std::fpclassify(MultiplyHere(SmallDenormal(), 1.0f)), FP_SUBNORMAL);
  {
    const ScopedFlushDenormal flush;
    EXPECT_EQ(testing::Bits(MultiplyHere(SmallDenormal(), 1.0f)), 0u);  // input read as +0
    EXPECT_EQ(testing::Bits(MultiplyHere(-SmallDenormal(), 1.0f)), 0x80000000u);  // as -0
    EXPECT_EQ(MultiplyHere(1e-20f, 1e-20f), 0.0f);  // 1e-40 would be a denormal result
  }
  EXPECT_EQ(std::fpclassify(MultiplyHere(SmallDenormal(), 1.0f)), FP_SUBNORMAL);
}

TEST_F(FlushDenormalTest, ScopeRoundsToNearestAndRestoresTheCallersRounding) {
  CallerMode caller(/*flush=*/false, FE_UPWARD);
  const internal::FpControl before = CallerControl();
  // (1 + eps)^2 = 1 + 2 eps + eps^2: up to 1 + 3 eps, to nearest 1 + 2 eps.
  const float one_plus = 1.0f + std::numeric_limits<float>::epsilon();
  const float up = MultiplyHere(one_plus, one_plus);
  {
    const ScopedFlushDenormal flush;
    EXPECT_EQ(CallerControl() & internal::kRoundingControl, 0u);  // (fegetround reads x87's)
    EXPECT_LT(MultiplyHere(one_plus, one_plus), up);
  }
  EXPECT_EQ(CallerControl(), before);
  EXPECT_EQ(MultiplyHere(one_plus, one_plus), up);
}

TEST_F(FlushDenormalTest, CallerModeIsRestoredWhenTheScopeIsLeftByAnException) {
  CallerMode caller(/*flush=*/false, FE_TOWARDZERO);
  const internal::FpControl before = CallerControl();
  EXPECT_THROW(
      {
        const ScopedFlushDenormal flush;
        ASSERT_NE(CallerControl(), before);
        throw std::runtime_error("kernel failed");
      },
      std::runtime_error);
  EXPECT_EQ(CallerControl(), before);
  EXPECT_EQ(std::fpclassify(MultiplyHere(SmallDenormal(), 1.0f)), FP_SUBNORMAL);
}

TEST_F(FlushDenormalTest, CallerThatFlushesItselfKeepsItsMode) {
  CallerMode caller(/*flush=*/true, FE_TONEAREST);
  const internal::FpControl before = CallerControl();
  {
    const ScopedFlushDenormal flush;
    EXPECT_EQ(CallerControl(), before);
  }
  EXPECT_EQ(CallerControl(), before);
  EXPECT_EQ(MultiplyHere(SmallDenormal(), 1.0f), 0.0f);
}

TEST_F(FlushDenormalTest, NestedScopesRestoreTheOutermostCallersMode) {
  CallerMode caller(/*flush=*/false, FE_DOWNWARD);
  const internal::FpControl before = CallerControl();
  {
    const ScopedFlushDenormal outer;
    const internal::FpControl kernel_mode = CallerControl();
    {
      const ScopedFlushDenormal inner;
      EXPECT_EQ(CallerControl(), kernel_mode);
    }
    EXPECT_EQ(CallerControl(), kernel_mode);
  }
  EXPECT_EQ(CallerControl(), before);
}

TEST_F(FlushDenormalTest, ExceptionFlagsRaisedInsideTheScopeStayRaised) {
  CallerMode caller(/*flush=*/false, FE_TONEAREST);
  std::feclearexcept(FE_ALL_EXCEPT);
  {
    const ScopedFlushDenormal flush;
    volatile float zero = 0.0f;
    volatile float quotient = 1.0f / zero;
    (void)quotient;
  }
  EXPECT_TRUE(std::fetestexcept(FE_DIVBYZERO));
  std::feclearexcept(FE_ALL_EXCEPT);
}

TEST_F(FlushDenormalTest, EnterKernelModeForThisThreadStays) {
  CallerMode caller(/*flush=*/false, FE_UPWARD);
  internal::EnterKernelModeForThisThread();
  EXPECT_EQ(CallerControl() & internal::kRoundingControl, 0u);
  EXPECT_EQ(MultiplyHere(SmallDenormal(), 1.0f), 0.0f);
  const internal::FpControl kernel_mode = CallerControl();
  { const ScopedFlushDenormal flush; }
  EXPECT_EQ(CallerControl(), kernel_mode);
}

// TF's AssignAdd and AssignSub are kernels; Variable's run in their mode.
TEST_F(FlushDenormalTest, VariableAssignSubFlushesADenormalDifference) {
  CallerMode caller(/*flush=*/false, FE_TONEAREST);
  const internal::FpControl before = CallerControl();
  const float min = std::numeric_limits<float>::min();
  Variable v(1.5f * min, "v");
  v.AssignSub(Tensor(min));  // 0.5 x 2^-126 exactly, a denormal
  EXPECT_EQ(testing::Bits(v.value().scalar<float>()), 0u);
  Variable w(HalfMinNormal(), "w");  // stored as given: no arithmetic
  ASSERT_EQ(std::fpclassify(w.value().scalar<float>()), FP_SUBNORMAL);
  w.AssignAdd(Tensor(0.0f));
  EXPECT_EQ(testing::Bits(w.value().scalar<float>()), 0u);
  EXPECT_EQ(CallerControl(), before);
}

}  // namespace
}  // namespace eager
