// `tessel compile --time-report`: where a compile's time went, phase by phase and kernel by kernel.
#include "app/cli/CompileTimeReport.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "compiler/lower/Lower.h"

namespace tessel::cli {

namespace {

/// Appends one line: the phase name indented by `depth`, then seconds in a column, then a note.
void addLine(std::string& out, int depth, const std::string& name, double seconds, const std::string& note = "") {
  char line[256];
  std::snprintf(line, sizeof line, "%*s%-*s %9.3f s", 2 * depth, "", 44 - 2 * depth, name.c_str(), seconds);
  out += line;
  if (!note.empty()) out += "  " + note;
  out += "\n";
}

std::string percentOf(double part, double whole) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f%%", whole > 0 ? 100 * part / whole : 0.0);
  return text;
}

/// One kernel's compile time: its schedule, its lowering steps and its code generation.
struct KernelTime {
  const driver::CompiledKernel* kernel = nullptr;
  double lowerSeconds = 0;
  CodegenTimes codegen;
  double total() const { return lowerSeconds + codegen.total(); }
};

}  // namespace

std::string formatCompileTimeReport(const CompileTimes& times, int slowest) {
  const driver::CompiledModel& model = *times.compiled;
  std::string out = "time report (wall clock, except where summed over kernels)\n";

  double loadSeconds = times.load.importSeconds + times.load.inferTypesSeconds;
  addLine(out, 1, "load", loadSeconds, percentOf(loadSeconds, times.totalSeconds));
  addLine(out, 2, "import", times.load.importSeconds, "reading the file, building the graph");
  if (times.imported)
    for (const graph::ImportStep& step : times.imported->importSteps) addLine(out, 3, step.name, step.milliseconds / 1e3);
  addLine(out, 2, "type inference", times.load.inferTypesSeconds);

  addLine(out, 1, "passes", model.passSeconds, percentOf(model.passSeconds, times.totalSeconds));
  for (const graph::PassSnapshot& pass : model.snapshots)
    addLine(out, 2, pass.passName, pass.milliseconds / 1e3, pass.skipped ? "skipped" : "");

  // Lowering: building each kernel's schedule, then each lowering step, summed over kernels.
  const std::vector<std::string>& stepNames = loweringStepNames();
  std::vector<double> stepSeconds(stepNames.size(), 0.0);
  double scheduleSeconds = 0;
  std::vector<KernelTime> kernels;
  for (size_t k = 0; k < model.kernels.size(); ++k) {
    const driver::CompiledKernel& kernel = model.kernels[k];
    KernelTime time;
    time.kernel = &kernel;
    time.lowerSeconds = kernel.scheduleMilliseconds / 1e3;
    scheduleSeconds += kernel.scheduleMilliseconds / 1e3;
    for (size_t s = 0; s < kernel.loweringMilliseconds.size() && s < stepSeconds.size(); ++s) {
      stepSeconds[s] += kernel.loweringMilliseconds[s] / 1e3;
      time.lowerSeconds += kernel.loweringMilliseconds[s] / 1e3;
    }
    if (k < times.exported.kernels.size()) time.codegen = times.exported.kernels[k];
    kernels.push_back(time);
  }
  double stepsSeconds = scheduleSeconds + std::accumulate(stepSeconds.begin(), stepSeconds.end(), 0.0);
  addLine(out, 1, "lowering (" + std::to_string(model.kernels.size()) + " kernels)", model.lowerSeconds,
          percentOf(model.lowerSeconds, times.totalSeconds));
  addLine(out, 2, "tensor expression and schedule", scheduleSeconds, "summed over kernels");
  for (size_t s = 0; s < stepNames.size(); ++s) addLine(out, 2, stepNames[s], stepSeconds[s], "summed over kernels");
  addLine(out, 2, "memory plan and the rest", std::max(0.0, model.lowerSeconds - stepsSeconds));

  CodegenTimes codegen;
  for (const CodegenTimes& kernel : times.exported.kernels) {
    codegen.emitSeconds += kernel.emitSeconds;
    codegen.optimizeSeconds += kernel.optimizeSeconds;
    codegen.machineCodeSeconds += kernel.machineCodeSeconds;
  }
  char cpu[64];
  std::snprintf(cpu, sizeof cpu, "%.1f", codegen.total());
  size_t aliases = model.kernels.size() - std::min(model.kernels.size(), times.exported.distinctKernels);
  addLine(out, 1, "code generation", times.exported.codegenWallSeconds,
          percentOf(times.exported.codegenWallSeconds, times.totalSeconds) + ", on all cores; " + cpu + " s of CPU");
  if (aliases)
    out += "    (" + std::to_string(aliases) + " kernels identical to another but for their name are aliases of it, "
           "compiled with it)\n";
  addLine(out, 2, "LLVM IR emission", codegen.emitSeconds, "summed over kernels");
  addLine(out, 2, "LLVM optimizer (O3)", codegen.optimizeSeconds, "summed over kernels");
  addLine(out, 2, "machine code", codegen.machineCodeSeconds, "summed over kernels");
  addLine(out, 1, "link kernels.so", times.exported.linkSeconds);
  addLine(out, 1, "write params.bin and graph.json", times.exported.writeSeconds);
  addLine(out, 1, "total", times.totalSeconds);

  std::sort(kernels.begin(), kernels.end(),
            [](const KernelTime& a, const KernelTime& b) { return a.total() > b.total(); });
  size_t shown = std::min(kernels.size(), size_t(std::max(0, slowest)));
  if (shown) out += "slowest kernels (lowering + code generation)\n";
  for (size_t i = 0; i < shown; ++i) {
    const KernelTime& time = kernels[i];
    char line[512];
    std::snprintf(line, sizeof line, "  %zu. %s\n     %9.3f s: lowering %.3f s, IR %.3f s, optimizer %.3f s, machine code %.3f s",
                  i + 1, time.kernel->name.c_str(), time.total(), time.lowerSeconds, time.codegen.emitSeconds,
                  time.codegen.optimizeSeconds, time.codegen.machineCodeSeconds);
    out += line;
    out += "\n";
  }
  return out;
}

}  // namespace tessel::cli
