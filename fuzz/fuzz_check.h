// fuzz_check.h — what the fuzz targets share: an invariant check that stops
// the fuzzer with a message (libFuzzer then saves the input as a crash).
#pragma once

#include <cstdio>
#include <cstdlib>

// A broken invariant is a bug as real as a crash: abort so libFuzzer keeps
// the input, after saying which one.
#define LOOM_FUZZ_CHECK(cond)                                                          \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                    \
    }                                                                                  \
  } while (0)
