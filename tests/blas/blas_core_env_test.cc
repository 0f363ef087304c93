// The OpenBLAS core eager's GEMM runs on, in a process of its own: OpenBLAS
// reads OPENBLAS_CORETYPE when it is loaded, so each environment is one ctest
// run of this binary (tests/CMakeLists.txt): blas_core_autodetect with the
// variable unset, blas_core_explicit with OPENBLAS_CORETYPE=Sandybridge.

#include <gtest/gtest.h>
#include <strings.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "ops/internal/blas_core.h"
#include "ops/matmul.h"
#include "runtime/threads.h"

namespace eager {
namespace {

// A 64 x 48 x 80 product through eager's GEMM, checked against a plain loop
// in double: whichever core runs, the numbers are right.
void RunAndCheckMatMul() {
  constexpr int64_t m = 64;
  constexpr int64_t k = 48;
  constexpr int64_t n = 80;
  std::vector<float> a(m * k);
  std::vector<float> b(k * n);
  for (int64_t i = 0; i < m * k; ++i) a[i] = static_cast<float>((i * 7) % 11) - 5.0f;
  for (int64_t i = 0; i < k * n; ++i) b[i] = static_cast<float>((i * 5) % 13) * 0.25f;
  const Tensor c =
      MatMul(Tensor::FromVector<float>(a, Shape{m, k}), Tensor::FromVector<float>(b, Shape{k, n}));
  const auto got = c.data<float>();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t p = 0; p < k; ++p) want += double{a[i * k + p]} * b[p * n + j];
      ASSERT_EQ(got[i * n + j], static_cast<float>(want)) << "c[" << i << ", " << j << "]";
    }
  }
}

TEST(BlasCoreEnvTest, WithoutOpenblasCoretypeAnAvx2CpuNeverRunsPrescott) {
  ASSERT_EQ(std::getenv("OPENBLAS_CORETYPE"), nullptr) << "run with OPENBLAS_CORETYPE unset";
  RunAndCheckMatMul();
  const std::string core = internal::BlasCoreName();
  const internal::CpuFeatures cpu = internal::HostCpuFeatures();
  if (cpu.avx2_fma) {
    EXPECT_NE(core, "Prescott");
  }
  // OpenBLAS names the core after the CPU it knows (SkylakeX, or Cooperlake
  // for AVX-512 BF16 parts such as AMD Zen 4); either way an AVX-512 CPU
  // runs an AVX-512 sgemm, never a narrower fallback.
  if (cpu.avx512) {
    EXPECT_TRUE(internal::HasSkylakeXSgemm(core)) << "an AVX-512 CPU runs OpenBLAS's " << core;
  }
  // The variable was set for OpenBLAS alone, never left behind for children.
  EXPECT_EQ(std::getenv("OPENBLAS_CORETYPE"), nullptr);
}

TEST(BlasCoreEnvTest, AnExplicitOpenblasCoretypeIsRespected) {
  const char* wanted = std::getenv("OPENBLAS_CORETYPE");
  ASSERT_NE(wanted, nullptr) << "run with OPENBLAS_CORETYPE set";
  RunAndCheckMatMul();
  EXPECT_EQ(strcasecmp(internal::BlasCoreName().c_str(), wanted), 0)
      << "OpenBLAS runs " << internal::BlasCoreName() << ", the user asked for " << wanted;
}

}  // namespace
}  // namespace eager
