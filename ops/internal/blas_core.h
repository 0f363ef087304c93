#pragma once

// Which OpenBLAS kernels ("core type") eager's GEMM runs on. Private to ops/.
//
// Debian's OpenBLAS is a DYNAMIC_ARCH build: its library constructor picks
// kernels from the CPU's family and model. A CPU it does not know (0.3.21 on
// family 6 model 207, an AVX-512 Xeon) gets its fallback, Prescott's SSE3
// kernels, at a fifth of the speed. The constructor runs before any of our
// code, so eager repairs the choice afterwards: before its first GEMM, when
// the user did not set OPENBLAS_CORETYPE and OpenBLAS reports its fallback,
// EnsureBlasCore() reruns OpenBLAS's own core selection
// (gotoblas_dynamic_quit, then gotoblas_dynamic_init, exported by every
// DYNAMIC_ARCH build) with OPENBLAS_CORETYPE set, for that call only, to the
// core that the CPU's instruction sets (cpuid) call for. OpenBLAS then sets up
// that core's blocking parameters itself. An OPENBLAS_CORETYPE the user set,
// even to a slower core, is left alone, and so is any core OpenBLAS did
// recognise.

#include <string>
#include <string_view>

namespace eager::internal {

// The instruction sets that decide the core, as the CPU and the OS report
// them (AVX-512 counts only with F, CD, BW, DQ and VL, OpenBLAS's SkylakeX set).
struct CpuFeatures {
  bool avx = false;
  bool avx2_fma = false;  // AVX2 and FMA3
  bool avx512 = false;
};

CpuFeatures HostCpuFeatures();

// The OPENBLAS_CORETYPE eager asks for when OpenBLAS detected `detected`
// on a CPU with `cpu`: empty to keep OpenBLAS's choice (it recognised the CPU,
// or the CPU has nothing better than SSE3), else "SkylakeX", "Haswell" or
// "Sandybridge", the fastest core whose instructions `cpu` has. (Not
// "Cooperlake" for AVX-512 BF16: its float GEMM is SkylakeX's, and 0.3.21's
// OPENBLAS_CORETYPE does not accept that name.)
std::string_view ChooseBlasCore(std::string_view detected, const CpuFeatures& cpu);

// Applies ChooseBlasCore to this process's OpenBLAS, once; later calls return
// at once. Call before every BLAS call (KeepBlasSingleThreaded does): the
// switch must not overlap a GEMM.
void EnsureBlasCore();

// The core OpenBLAS runs now (openblas_get_corename), e.g. "SkylakeX".
std::string BlasCoreName();

// True for the OpenBLAS cores whose float GEMM is SkylakeX's AVX-512 sgemm:
// "SkylakeX" itself and "Cooperlake", which 0.3.21 picks for AVX-512 BF16
// CPUs (Intel Cooper Lake, AMD Zen 4) and builds from SkylakeX's kernel list
// plus its bf16 kernels (kernel/x86_64/KERNEL.COOPERLAKE includes
// KERNEL.SKYLAKEX). What eager derives from that kernel's bits is still
// checked against the installed library at first use (gemm.h, avx512_sgemm.h).
bool HasSkylakeXSgemm(std::string_view core);

}  // namespace eager::internal
