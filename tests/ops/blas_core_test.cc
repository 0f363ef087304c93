// ops/internal/blas_core.h: which OpenBLAS core eager asks for, and when.

#include "ops/internal/blas_core.h"

#include <gtest/gtest.h>

namespace eager::internal {
namespace {

CpuFeatures Sse3Only() { return {}; }
CpuFeatures Avx() { return {.avx = true}; }
CpuFeatures Avx2() { return {.avx = true, .avx2_fma = true}; }
CpuFeatures Avx512() { return {.avx = true, .avx2_fma = true, .avx512 = true}; }

TEST(BlasCoreTest, FallbackGetsTheFastestCoreTheInstructionSetsAllow) {
  EXPECT_EQ(ChooseBlasCore("Prescott", Avx512()), "SkylakeX");
  EXPECT_EQ(ChooseBlasCore("Prescott", Avx2()), "Haswell");
  EXPECT_EQ(ChooseBlasCore("Prescott", Avx()), "Sandybridge");
}

TEST(BlasCoreTest, AnSse3OnlyCpuKeepsPrescott) {
  EXPECT_EQ(ChooseBlasCore("Prescott", Sse3Only()), "");
}

TEST(BlasCoreTest, ACoreOpenBlasRecognisedIsKept) {
  // Zen on an AVX-512 Zen 4, or an older core on purpose: not a fallback.
  EXPECT_EQ(ChooseBlasCore("Zen", Avx512()), "");
  EXPECT_EQ(ChooseBlasCore("Haswell", Avx512()), "");
  EXPECT_EQ(ChooseBlasCore("SkylakeX", Avx512()), "");
}

// OpenBLAS 0.3.21 builds Cooperlake (AVX-512 BF16: Cooper Lake, Zen 4) from
// SkylakeX's kernel list (kernel/x86_64/KERNEL.COOPERLAKE includes
// KERNEL.SKYLAKEX), so both run the sgemm whose bits eager relies on.
TEST(BlasCoreTest, SkylakeXAndCooperlakeShareTheSgemm) {
  EXPECT_TRUE(HasSkylakeXSgemm("SkylakeX"));
  EXPECT_TRUE(HasSkylakeXSgemm("Cooperlake"));
  EXPECT_FALSE(HasSkylakeXSgemm("Haswell"));
  EXPECT_FALSE(HasSkylakeXSgemm("Zen"));
  EXPECT_FALSE(HasSkylakeXSgemm("Prescott"));
}

TEST(BlasCoreTest, HostFeaturesAreConsistentWithTheCompilersView) {
  // Each level implies the one below, and matches GCC's own cpuid reading.
  const CpuFeatures cpu = HostCpuFeatures();
  EXPECT_EQ(cpu.avx, __builtin_cpu_supports("avx") != 0);
  EXPECT_EQ(cpu.avx2_fma,
            __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0);
  EXPECT_EQ(cpu.avx512,
            __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("avx512cd") != 0 &&
                __builtin_cpu_supports("avx512bw") != 0 &&
                __builtin_cpu_supports("avx512dq") != 0 && __builtin_cpu_supports("avx512vl") != 0);
}

}  // namespace
}  // namespace eager::internal
