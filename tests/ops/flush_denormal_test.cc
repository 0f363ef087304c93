// Kernels run in TF's kernel mode: denormal inputs read as zero and denormal
// results are written as zero (runtime/flush_denormal.h), on the
// calling thread, on the pool's workers and in a Session; the caller's own
// mode is back after every op, also after one that throws.

#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/parallel.h"
#include "ops/session.h"
#include "runtime/graph.h"
#include "runtime/threads.h"
#include "tests/testing/fp_mode.h"

namespace eager {
namespace {

using testing::Bits;
using testing::CallerControl;
using testing::CallerMode;
using testing::HalfMinNormal;
using testing::SmallDenormal;

class FlushDenormalOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!internal::kCanFlushDenormals) GTEST_SKIP() << "no flush-to-zero control on this CPU";
  }
  void TearDown() override { SetNumThreads(saved_threads_); }
  const int saved_threads_ = GetNumThreads();
};

TEST_F(FlushDenormalOpsTest, MulOfADenormalByOneGivesZeroOnTheCallingThread) {
  CallerMode caller(/*flush=*/false, FE_TONEAREST);
  const Tensor x = Tensor::FromVector<float>({SmallDenormal(), -SmallDenormal(), 2.0f}, Shape{3});
  const Tensor y = Mul(x, Tensor(1.0f));
  const auto out = y.data<float>();
  EXPECT_EQ(Bits(out[0]), 0u);           // +0
  EXPECT_EQ(Bits(out[1]), 0x80000000u);  // -0
  EXPECT_EQ(out[2], 2.0f);
  // One element, the per-op path of `a * b` on scalars.
  EXPECT_EQ(Bits(Mul(Tensor(SmallDenormal()), Tensor(1.0f)).scalar<float>()), 0u);
}

TEST_F(FlushDenormalOpsTest, ResultsThatWouldBeDenormalAreZero) {
  CallerMode caller(/*flush=*/false, FE_TONEAREST);
  EXPECT_EQ(Bits(Mul(Tensor(1e-20f), Tensor(1e-20f)).scalar<float>()), 0u);  // 1e-40
  const float min = std::numeric_limits<float>::min();
  EXPECT_EQ(Bits(Sub(Tensor(1.5f * min), Tensor(min)).scalar<float>()), 0u);  // 0.5 x 2^-126
  // The same arithmetic on the caller's thread still makes denormals.
  EXPECT_EQ(std::fpclassify(testing::MultiplyHere(1e-20f, 1e-20f)), FP_SUBNORMAL);
}

TEST_F(FlushDenormalOpsTest, CallersModeIsExactlyAsBeforeAfterAnOp) {
  CallerMode caller(/*flush=*/false, FE_UPWARD);
  const internal::FpControl before = CallerControl();
  (void)Mul(Tensor(SmallDenormal()), Tensor(1.0f));
  EXPECT_EQ(CallerControl(), before);
  EXPECT_EQ(std::fpclassify(testing::MultiplyHere(SmallDenormal(), 1.0f)), FP_SUBNORMAL);
}

TEST_F(FlushDenormalOpsTest, CallersModeIsExactlyAsBeforeAfterAKernelThrows) {
  CallerMode caller(/*flush=*/false, FE_DOWNWARD);
  const internal::FpControl before = CallerControl();
  const Tensor params = Tensor::FromVector<float>({1, 2, 3}, Shape{3});
  // GatherV2 checks its indices inside the kernel, so this throws in kernel mode.
  EXPECT_THROW((void)Gather(params, Tensor::FromVector<int32_t>({0, 5}, Shape{2})),
               InvalidArgumentError);
  EXPECT_EQ(CallerControl(), before);
}

TEST_F(FlushDenormalOpsTest, CallerThatSetFlushToZeroItselfKeepsIt) {
  CallerMode caller(/*flush=*/true, FE_TONEAREST);
  const internal::FpControl before = CallerControl();
  EXPECT_EQ(Bits(Mul(Tensor(SmallDenormal()), Tensor(1.0f)).scalar<float>()), 0u);
  EXPECT_EQ(CallerControl(), before);
  EXPECT_EQ(testing::MultiplyHere(SmallDenormal(), 1.0f), 0.0f);
}

// 2^20 elements: above the parallel threshold, in 32 blocks the caller and
// the pool's workers share.
TEST_F(FlushDenormalOpsTest, LargeElementwiseOpOnThePoolFlushesEveryBlock) {
  CallerMode caller(/*flush=*/false, FE_TONEAREST);
  const internal::FpControl before = CallerControl();
  SetNumThreads(2);
  const int64_t n = int64_t{1} << 20;
  ASSERT_GE(n, internal::kParallelElementwiseMin);
  const std::vector<float> denormals(static_cast<size_t>(n), HalfMinNormal());
  const Tensor x = Tensor::FromVector<float>(denormals, Shape{n});
  const Tensor y =
      Mul(x, Tensor::FromVector<float>(std::vector<float>(denormals.size(), 1.0f), Shape{n}));
  int64_t nonzero = 0;
  for (float v : y.data<float>()) nonzero += Bits(v) != 0;
  EXPECT_EQ(nonzero, 0);
  EXPECT_EQ(CallerControl(), before);
}

// That the pool's workers set kernel mode themselves (not only inherit it
// from a creator inside a kernel) is tested in autodiff_tests
// (tests/autodiff/pool_worker_mode_test.cc): this binary's parameterized
// tests run ops while registering, so its processes start with a pool.

TEST_F(FlushDenormalOpsTest, SessionRunFlushesAndRestoresTheCallersMode) {
  CallerMode caller(/*flush=*/false, FE_TOWARDZERO);
  const internal::FpControl before = CallerControl();
  Graph graph;
  Tensor x;
  Tensor product;
  {
    Graph::AsDefault in(graph);
    x = Placeholder(DType::kFloat32, Shape{2}, "x");
    product = Mul(x, Constant(Tensor(1.0f), "one"));
  }
  Session session(graph);
  const Tensor y =
      session.Run(product, {{x, Tensor::FromVector<float>({SmallDenormal(), 3.0f}, Shape{2})}});
  EXPECT_EQ(Bits(y.data<float>()[0]), 0u);
  EXPECT_EQ(y.data<float>()[1], 3.0f);
  EXPECT_EQ(CallerControl(), before);
}

}  // namespace
}  // namespace eager
