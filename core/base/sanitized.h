// FITBENCH_SANITIZED is defined in a build with AddressSanitizer or ThreadSanitizer (GCC's macros
// or Clang's __has_feature), whose shadow memory (terabytes of address space) no lowered RLIMIT_AS
// leaves room for, whose allocators replace malloc, and whose programs take several times the
// memory of a release build's.
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FITBENCH_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FITBENCH_SANITIZED 1
#endif
#endif
