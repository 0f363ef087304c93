#include "ops/internal/blas_core.h"

#include <cblas.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

// OpenBLAS's DYNAMIC_ARCH entry points: quit forgets the chosen core, init
// chooses again (OPENBLAS_CORETYPE first, else cpuid) and sets up the core's
// parameters. Weak, so an OpenBLAS built for one core (without them) links
// and is simply left as it is.
extern "C" void gotoblas_dynamic_init() __attribute__((weak));
extern "C" void gotoblas_dynamic_quit() __attribute__((weak));

namespace eager::internal {
namespace {

constexpr std::string_view kFallbackCore = "Prescott";  // OpenBLAS's "unknown CPU"

#if defined(__x86_64__) || defined(__i386__)
uint64_t EnabledXStateBits() {
  uint32_t eax = 0;
  uint32_t edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}
#endif

}  // namespace

CpuFeatures HostCpuFeatures() {
  CpuFeatures cpu;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0;
  unsigned b = 0;
  unsigned c = 0;
  unsigned d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return cpu;
  const bool osxsave = (c & (1U << 27)) != 0;
  if (!osxsave) return cpu;  // the OS saves no AVX state: SSE only
  const bool fma = (c & (1U << 12)) != 0;
  const uint64_t xcr0 = EnabledXStateBits();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;
  const bool zmm_state = (xcr0 & 0xE6) == 0xE6;  // + opmask, ZMM_Hi256, Hi16_ZMM
  cpu.avx = ymm_state && (c & (1U << 28)) != 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return cpu;
  cpu.avx2_fma = cpu.avx && fma && (b & (1U << 5)) != 0;
  constexpr unsigned kAvx512Set = (1U << 16) | (1U << 17) | (1U << 28) | (1U << 30) | (1U << 31);
  cpu.avx512 = cpu.avx2_fma && zmm_state && (b & kAvx512Set) == kAvx512Set;  // F DQ CD BW VL
#endif
  return cpu;
}

std::string_view ChooseBlasCore(std::string_view detected, const CpuFeatures& cpu) {
  if (detected != kFallbackCore) return {};
  if (cpu.avx512) return "SkylakeX";
  if (cpu.avx2_fma) return "Haswell";
  if (cpu.avx) return "Sandybridge";
  return {};
}

bool HasSkylakeXSgemm(std::string_view core) { return core == "SkylakeX" || core == "Cooperlake"; }

void EnsureBlasCore() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;  // the user's choice stands
    if (gotoblas_dynamic_init == nullptr || gotoblas_dynamic_quit == nullptr) return;
    const std::string_view core = ChooseBlasCore(BlasCoreName(), HostCpuFeatures());
    if (core.empty()) return;
    // OpenBLAS reads the choice from the environment only; it is set for
    // this call alone, so that child processes still see the user's
    // environment. Runs once, before eager's first GEMM.
    setenv("OPENBLAS_CORETYPE", std::string(core).c_str(), 1);
    gotoblas_dynamic_quit();
    gotoblas_dynamic_init();
    unsetenv("OPENBLAS_CORETYPE");
  });
}

std::string BlasCoreName() {
  const char* name = openblas_get_corename();
  return name != nullptr ? std::string(name) : std::string();
}

}  // namespace eager::internal
