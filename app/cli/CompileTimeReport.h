// `tessel compile --time-report`: where a compile's time went, phase by phase and kernel by kernel.
#pragma once

#include <string>

#include "compiler/driver/Driver.h"
#include "compiler/export/ExportModule.h"

namespace tessel::cli {

/// What a compile measured about itself, phase by phase.
struct CompileTimes {
  driver::LoadTimes load;
  const graph::Graph* imported = nullptr;  ///< Its import steps (opset conversion) are timed.
  const driver::CompiledModel* compiled = nullptr;
  ExportTimes exported;
  double totalSeconds = 0;
};

/// The report as text: import, type inference, each pass, each lowering step summed over the
/// kernels, code generation (IR emission, LLVM's optimizer, machine code; CPU time summed
/// over kernels, and the wall time on all cores), linking, and the `slowest` slowest kernels
/// with where their time went. Phases are indented under the phase they belong to.
std::string formatCompileTimeReport(const CompileTimes& times, int slowest = 5);

}  // namespace tessel::cli
