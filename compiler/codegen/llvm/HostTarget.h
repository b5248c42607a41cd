// The machine this process runs on, as LLVM sees it: the Target every command uses unless it
// is told another. (No LLVM header here: Qt code includes this.)
#pragma once

#include "core/target/Target.h"

namespace tessel {

/// This machine: LLVM's triple, CPU name and every feature the CPU reports (AVX-512 or
/// AVX2 are used when present), the widest vector those allow, the runtime thread pool's
/// thread count as `cores` (so it follows --threads / TESSEL_NUM_THREADS), and the data
/// cache sizes the C library reports. Detected once; `cores` is read on every call.
Target hostTarget();

}  // namespace tessel
