// Which instruction-set extensions this CPU has, so a module compiled for another machine is
// refused with a message instead of dying on an illegal instruction.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace tessel::runtime {

/// Whether this CPU supports `feature`, an LLVM feature name ("avx2", "avx512f", "fma",
/// "sse4.1", ...); true for a name isCheckableCpuFeature does not know.
bool hostHasCpuFeature(const std::string& feature);

/// Returns this thread's AMX tile registers to their initial state (tilerelease) when the
/// process may use them; nothing elsewhere. A thread that stops or sleeps with tiles in use
/// makes every switch of the core save and restore their 8 KiB.
void releaseTileRegisters();

/// Whether hostHasCpuFeature knows how to check `feature`. Features it cannot check (most
/// of LLVM's long list: "cx16", "movbe", ...) are assumed present.
bool isCheckableCpuFeature(const std::string& feature);

/// Every feature name hostHasCpuFeature can check, sorted.
std::vector<std::string> checkableCpuFeatures();

/// The checkable features of `required` that `hasFeature` (the host by default) lacks, in
/// the order given.
std::vector<std::string> missingCpuFeatures(
    const std::vector<std::string>& required,
    const std::function<bool(const std::string&)>& hasFeature = hostHasCpuFeature);

}  // namespace tessel::runtime
