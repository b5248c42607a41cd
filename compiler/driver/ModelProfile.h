// Where a model's time goes: each node's median time over repeated runs of the whole model, as
// `tessel bench --profile` prints it and the Studio's Profile Model keeps it. The tuning
// dashboard's share column and the graph's time colouring read it, so a profile is saved as
// JSON beside the model and read back when the model is opened again.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/driver/Roofline.h"
#include "core/support/Error.h"
#include "runtime/GraphExecutor.h"

namespace tessel::driver {

struct ProfiledNode {
  std::string node;    ///< The graph node (operation) the kernel computes.
  std::string kernel;  ///< The kernel's name (a tuning task's kernels are named so).
  double milliseconds = 0;  ///< Median over the profile's runs.
  std::optional<double> minMilliseconds;  ///< The fastest run (absent in older files).
  // What the roofline needs (addRooflines of Roofline.h): unknown for a module loaded without
  // its compiler and in profiles saved before Tessel recorded them.
  std::string op;                          ///< "Conv", "fused(Conv+Relu)", "copy"; empty: unknown.
  std::optional<double> flops;             ///< Per call.
  std::optional<double> bytes;             ///< The least a call moves (leastBytesMoved).
  bool integerDot = false;                 ///< Its arithmetic is int8 dot products (usesIntegerDot).
  bool integerTiles = false;               ///< Its arithmetic is on AMX tiles (usesIntegerTiles).
  /// Roofline bound / the fastest run: the probes keep their fastest samples too, since
  /// interference (a shared or loaded machine) only ever slows a run down.
  std::optional<double> rooflineFraction;
};

struct ModelProfile {
  std::string model;  ///< The model file profiled, as given.
  int runs = 0;
  int threads = 0;
  double latencyMs = 0;  ///< Median of whole runs.
  double minMs = 0;
  int tunedKernels = 0;  ///< Kernels that ran a tuned schedule.
  std::string createdAt;  ///< UTC, ISO 8601.
  MachineRoof roof;  ///< The ceilings the nodes' roofline fractions were taken against.
  std::vector<ProfiledNode> nodes;  ///< In execution order.

  /// The sum of the nodes' medians (a little under latencyMs: the executor's own work).
  double nodeSumMs() const;
  /// Each kernel's median time, by kernel name (a lookup table for views that ask often).
  std::unordered_map<std::string, double> millisecondsByKernel() const;
};

/// The message of a cancelled profile (isCancellation() knows it).
extern const char* const kProfileCancelled;

struct ProfileOptions {
  int minRuns = 10;
  double minSeconds = 1.0;  ///< Keeps running past minRuns until this much time is spent...
  int maxRuns = 200;        ///< ...but never more runs than this.
  std::function<bool()> cancelled;                           ///< Asked between runs.
  std::function<void(int runs, int expected)> progress;      ///< After each run.
};

/// Runs `executor` (inputs already set) once untimed, then as options say, and takes each
/// node's median. A cancelled profile returns the isCancellation() Diagnostic of Driver.h;
/// a kernel failure returns its Error as a Diagnostic naming the node.
Expected<ModelProfile> profileExecutor(runtime::GraphExecutor& executor, const ProfileOptions& options = {});

/// The profile as JSON: one object with "format": "tessel-profile", "version", "model",
/// "created_at", "runs", "threads", "latency_ms", "min_ms", "tuned_kernels", when measured
/// "peak_gflops" and "bandwidth_gbps", and "nodes" (each {"node", "kernel", "ms"} and, when
/// known, "min_ms", "op", "flops", "bytes", "roofline_fraction" and "bound" ("compute" or
/// "memory", derived from them and the roof and not read back); one per line, in execution
/// order).
std::string modelProfileJson(const ModelProfile& profile);
/// Reads what modelProfileJson wrote (the optional fields may be absent: older files lack
/// them); a Diagnostic names `source` and the field at fault.
Expected<ModelProfile> parseModelProfile(const std::string& text, const std::string& source);

/// Writes the JSON to `path` through a temporary file renamed into place, so a crash never
/// leaves half a profile.
Status writeModelProfile(const ModelProfile& profile, const std::string& path);
Expected<ModelProfile> readModelProfile(const std::string& path);

/// Where the Studio keeps a model's last profile: beside it, `resnet18.onnx` ->
/// `resnet18.profile.json`.
std::string profilePathForModel(const std::string& modelPath);

}  // namespace tessel::driver
