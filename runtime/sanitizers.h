#pragma once

// Which sanitizer this translation unit is compiled with, in one place: GCC
// says so with __SANITIZE_*__, clang with __has_feature. The few places
// that behave differently under a sanitizer (memory budgets, heap
// measurement, poisoning cached blocks) ask here.

#if defined(__SANITIZE_ADDRESS__)
#define EAGER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EAGER_ASAN 1
#endif
#endif

#if defined(EAGER_ASAN) || defined(__SANITIZE_THREAD__)
#define EAGER_SHADOW_MEMORY 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define EAGER_SHADOW_MEMORY 1
#endif
#endif

namespace eager {

// AddressSanitizer: its allocator replaces malloc, so heap statistics
// (mallinfo2) say nothing, and a block may be poisoned.
#ifdef EAGER_ASAN
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif

// A sanitizer with shadow memory (ASan, TSan, MSan): it reserves terabytes
// of address space, so the process cannot run under an RLIMIT_AS budget.
#ifdef EAGER_SHADOW_MEMORY
inline constexpr bool kSanitizerShadowMemory = true;
#else
inline constexpr bool kSanitizerShadowMemory = false;
#endif

}  // namespace eager
