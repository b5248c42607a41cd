// A property a harness checks on what a parser accepted: a failure is a crash libFuzzer keeps.
#pragma once

#include <cstdio>
#include <cstdlib>

#define TESSEL_FUZZ_CHECK(condition, what)                                         \
  do {                                                                             \
    if (!(condition)) {                                                            \
      std::fprintf(stderr, "fuzz check failed: %s (%s)\n", what, #condition);      \
      std::abort();                                                                \
    }                                                                              \
  } while (0)
