// Measuring a kernel in a child process (`tessel measure --json`), so that a kernel that
// crashes or hangs takes down only that process, never the Studio or the tuner that asked
// (DESIGN.md, "Measurement is isolated").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compiler/driver/Driver.h"
#include "compiler/driver/MeasureKernel.h"
#include "core/support/Error.h"

namespace tessel::driver {

/// A task of a model: the child imports and compiles the model with these options, which
/// gives the same kernel names as in this process, and measures the kernel `taskName`
/// (ScheduleTask::name). Only the pass options of `compile` travel: the child compiles for
/// its host, as measuring on this machine requires.
struct ModelTaskSource {
  std::string modelPath;
  LoadOptions load;  ///< Input shapes become --input-shape, input values files for --input.
  CompileOptions compile;
  std::string taskName;
};

/// An operator `tessel bench` knows, with its flags: {"matmul", {{"m", "64"}, {"n", "64"}}};
/// parameters left out take the command's defaults.
struct OperatorSource {
  std::string name;
  std::map<std::string, std::string> parameters;
};

/// What to measure and how.
struct IsolatedMeasureRequest {
  std::variant<ModelTaskSource, OperatorSource> source;
  /// Schedule text as the editor shows it; nullopt: the kernel's default schedule.
  std::optional<std::string> scheduleText;
  /// What a schedule error's location says instead of the temporary file the text went
  /// through ("schedule" when empty).
  std::string scheduleName;
  /// What messages call the kernel; empty: the task's name, or the operator's.
  std::string kernelName;
  /// The numbers become the child's flags; `cancelled` is polled every few tens of ms and
  /// kills the child at once; `progress` hears the child's percentages.
  MeasureOptions options;
  /// Threads of the child's parallel loops; 0 or less: its default (TESSEL_NUM_THREADS or
  /// every core).
  int threads = 0;
  /// The tessel executable; empty: findTesselExecutable().
  std::string tesselPath;
  /// Wall-clock limit of the child in seconds; 0 or less: 5 minutes plus four times
  /// options.minSeconds (importing and compiling a model on a loaded machine takes time,
  /// and only a kernel that hangs should ever reach it).
  double timeoutSeconds = 0;
};

/// Runs `tessel measure ... --json` for `request` in a child process and reads its result.
/// A schedule error, an unknown task or a bad model is the child's own Diagnostic (a schedule
/// error keeps its line and column); a kernel that crashes the child is a Diagnostic naming
/// the kernel and the signal ("the kernel 'fused_conv_relu_3' crashed while being measured
/// (SIGSEGV); ..."), one that outlives the time limit says so, with the end of what the child
/// wrote on stderr. A cancelled measurement is a Diagnostic saying it was cancelled. Blocks
/// until the child ends: call it from a worker thread.
Expected<Measurement> measureIsolated(const IsolatedMeasureRequest& request);

/// The arguments (after the program name) measureIsolated passes to `tessel`, given where it
/// wrote the schedule text (ignored without one) and each input value (by input name).
std::vector<std::string> measureCommandArguments(const IsolatedMeasureRequest& request,
                                                 const std::string& scheduleFile,
                                                 const std::map<std::string, std::string>& inputFiles);

/// The flags after the command name that make a child `tessel` import and compile `modelPath` as
/// this process did: the model, --input-shape for each shape, --input for each input value
/// (written to `inputFiles` by writeInputValueFiles), and the pass options. Only the pass
/// options of `compile` travel: the child compiles for its own host.
std::vector<std::string> modelSourceArguments(const std::string& modelPath, const LoadOptions& load,
                                              const CompileOptions& compile,
                                              const std::map<std::string, std::string>& inputFiles);
/// "--operator OP --flag value ...": a bare operator with its `tessel bench` flags.
std::vector<std::string> operatorSourceArguments(const OperatorSource& op);
/// Writes each of load.inputValues as an .npy file into `directory` (input_0.npy, ...), for a
/// child to read with --input; the files by input name, or a Diagnostic naming the file.
Expected<std::map<std::string, std::string>> writeInputValueFiles(const LoadOptions& load, const std::string& directory);

/// Where the `tessel` command-line tool is: `explicitPath` when given, else the environment
/// variable TESSEL_CLI when set, else `tessel` next to the running executable (build/bin
/// holds tessel-studio and tessel), else the first `tessel` on PATH. A path given explicitly
/// or by TESSEL_CLI that is not an executable file is an error rather than skipped; finding
/// none is a Diagnostic saying how to point at it.
Expected<std::string> findTesselExecutable(const std::string& explicitPath = "");

}  // namespace tessel::driver
