#pragma once

// Included by every source whose float arithmetic must round exactly as
// TensorFlow's kernels do (the optimizers, the EMA, ApplyAdam): such a file
// must be compiled with -ffp-contract=off, or GCC (whose default for C++ is
// -ffp-contract=fast) fuses a * b + c into one FMA where the CPU has it,
// rounding once instead of twice. For ops/ and autodiff/ only; not installed
// (cmake/package.cmake): not user API.
//
// Why a macro: GCC 12 has no way to tell the flag from inside the source. No
// predefined macro differs between -ffp-contract=fast and off (__FP_FAST_FMA
// says only that the CPU has FMA); `#pragma STDC FP_CONTRACT OFF` is
// ignored in C++; contraction happens after constant evaluation, so no
// static_assert can observe it; and `#pragma GCC optimize("fp-contract=off")`
// would set it per function, but GCC documents that as unfit for production
// code and it stops inlining across functions with differing options. So
// the build passes the flag and the macro EAGER_FP_CONTRACT_OFF together,
// from one CMake list (EAGER_FP_CONTRACT_OFF_OPTIONS in CMakeLists.txt), and
// this header refuses to compile a file that got neither; the
// autodiff_fp_contract test checks that every file with the macro has
// -ffp-contract=off as its last -ffp-contract option.

#if !defined(EAGER_FP_CONTRACT_OFF)
#error "compile with EAGER_FP_CONTRACT_OFF_OPTIONS (-ffp-contract=off): no fused multiply-adds"
#endif
