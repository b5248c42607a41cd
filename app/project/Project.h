// A Tessel project (.tessel): a model with everything needed to compile, check and measure it
// the same way every time, as a versioned JSON document the Studio and `tessel project` share.
//
// On disk (format "tessel-project", version 1; every key but "format", "version" and "model"
// may be left out and takes the default shown):
//
//   {
//     "format": "tessel-project",
//     "version": 1,
//     "model": "tiny_resnet.onnx",                    // relative to the project file
//     "input_shapes": {"image": [1, 3, 32, 32]},      // for inputs with open dimensions
//     "target": {"threads": 0, "vector_lanes": 0},    // 0: the machine's
//     "passes": {"opt_level": 3, "disabled": [], "config": {"AlterLayout.blocked_activations": "true"}},
//     "tasks": [{"name": "Softmax__Softmax", "workload": "softmax_1x10_axis1",
//                "trace": ["vectorize(softmax.exp, ax1)"]}],   // one string per line
//     "tuning_records": "",                            // empty: none
//     "export": {"enabled": false, "directory": ""},
//     "reference": {"directory": "", "rtol": 0.001, "atol": 1e-07},   // input_N.pb, output_N.pb
//     "benchmark": {"repeats": 20, "threads": 0, "max_latency_ms": 50,
//                   "baseline_ms": 0.4, "max_ratio": 1.5,
//                   "max_tuned_ratio": 1.0},                         // each limit optional
//     "measurements": {"Softmax__Softmax": [{"number": 1, "trace": "...", "medianMs": 0.01,
//                       ...}]},                        // the Studio's measured variants per task
//     "metadata": {}                                   // anything; kept as it is
//   }
//
// Unknown keys are errors (with the known ones listed): a misspelled "max_latency_ms" would
// otherwise silently drop a check from CI. Data of other tools belongs under "metadata",
// which is carried through load and save unchanged.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/driver/ScheduleEdits.h"
#include "core/support/Error.h"

namespace tessel::project {

inline constexpr const char* kProjectFormat = "tessel-project";
/// The format version this build writes and the newest it reads.
inline constexpr int kProjectVersion = 1;
/// The extension of project files.
inline constexpr const char* kProjectExtension = ".tessel";

/// What the model is compiled for.
struct TargetSettings {
  int threads = 0;      ///< Worker threads to compile for and run with; 0: the machine's default.
  int vectorLanes = 0;  ///< float32 lanes the default schedules assume; 0: the host's vector width.
  bool operator==(const TargetSettings&) const = default;
};

/// The graph passes' options (see compiler/graph/PassManager.h).
struct PassSettings {
  int optLevel = 3;
  std::vector<std::string> disabledPasses;
  /// Pass options by "<Pass>.<option>" (PassOptions::config).
  std::map<std::string, std::string> config;
  bool operator==(const PassSettings&) const = default;
};

/// Where `tessel project run` writes the deployable module.
struct ExportSettings {
  bool enabled = false;
  std::string directory;  ///< Absolute in memory; empty: none.
  bool operator==(const ExportSettings&) const = default;
};

/// Reference inputs and outputs the compiled model must reproduce.
struct ReferenceData {
  std::string directory;  ///< input_0.pb, ..., output_0.pb, ... (the ONNX test layout); empty: none.
  double rtol = 1e-3;
  double atol = 1e-7;
  bool operator==(const ReferenceData&) const = default;
};

/// How the model is measured and what the measurement must meet.
struct BenchmarkSettings {
  int repeats = 20;  ///< Timed runs; the median is compared with the limits.
  int threads = 0;   ///< Threads while measuring; 0: the target's.
  std::optional<double> maxLatencyMs;  ///< The median latency must not exceed this.
  /// Together: the median must not exceed maxRatio times baselineMs (a saved measurement).
  std::optional<double> baselineMs;
  std::optional<double> maxRatio;
  /// With tuning records: the median latency with them must not exceed this many times the
  /// median without them, the two measured in turns in the same run (tuning must not regress
  /// the model; 1.02 allows 2% of noise).
  std::optional<double> maxTunedRatio;
  bool operator==(const BenchmarkSettings&) const = default;
};

/// A project in memory. Paths are absolute here; on disk they are relative to the project
/// file's directory, so a project and its model can move together.
struct Project {
  std::string model;  ///< The ONNX model.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  TargetSettings target;
  PassSettings passes;
  std::vector<driver::ScheduleEdit> tasks;  ///< At most one per task name.
  std::string tuningRecords;                ///< Empty: none.
  ExportSettings exportSettings;
  ReferenceData reference;
  BenchmarkSettings benchmark;
  /// The "measurements" object as compact JSON text (empty when absent): per task name, the
  /// schedule variants measured in the Studio, oldest first, each an object with at least a
  /// positive "medianMs" (the Studio's MeasureHistory::toJson writes the rest).
  std::string measurements;
  std::string metadata;  ///< The "metadata" object as compact JSON text; empty when absent.

  bool operator==(const Project&) const = default;

  /// The edit for `task`, or null.
  const driver::ScheduleEdit* findTask(const std::string& task) const;
  /// Adds the edit, or replaces the one for the same task.
  void setTask(driver::ScheduleEdit edit);
  /// Removes `task`'s edit (back to the default schedule); false when there was none.
  bool removeTask(const std::string& task);
};

/// How much of a project loading checks.
enum class FileChecks {
  Required,  ///< The model (and reference directory, when named) must exist.
  Skipped,   ///< Only the document itself is checked (used before overwriting a file).
};

/// Reads and validates a project file. Every mistake is a Diagnostic located at the file:
/// invalid JSON (with the line and column), not a Tessel project, a newer format version
/// ("written by a newer Tessel (version 3); this build reads version 1"), a wrong type or
/// value (with the JSON path: "tasks[2].trace: line 3, column 7: ..."), an unknown key, a
/// schedule trace that does not parse, pass options the pass manager rejects, or (with
/// FileChecks::Required) a missing model or reference directory, or an input shape for an
/// input the model does not have.
Expected<Project> loadProject(const std::string& path, FileChecks checks = FileChecks::Required);

/// The same from JSON text, as if read from `path` (relative paths resolve against its
/// directory; messages name it).
Expected<Project> parseProject(const std::string& text, const std::string& path,
                               FileChecks checks = FileChecks::Required);

/// The JSON text `project` is saved as at `path`: paths relative to its directory, or
/// absolute when `path` is empty (an untitled project's autosave). Ends with a newline.
std::string formatProject(const Project& project, const std::string& path);

/// Saves `project` at `path` atomically (see writeFileAtomically), then removes the
/// autosave of `path` (it is older than what was just saved). Refuses, leaving the file
/// untouched, to overwrite an existing file that is not a project this build can read
/// (corrupt, another format, a newer version): the caller must save under another name.
Status saveProject(const Project& project, const std::string& path);

/// A project over `model` with defaults: the absolute model path and, when the model sits in
/// the ONNX test layout (test_data_set_0/ beside it, or MODEL_STEM/test_data_set_0/), that
/// directory as reference data. What `tessel project new` writes.
Project starterProject(const std::string& model);

}  // namespace tessel::project
