// The tessel subcommands. Each takes its arguments (after the command name) and returns
// the process exit code: 0 success, 2 usage or input error, 3 wrong results, 4 an expectation
// of a project failed.
#pragma once

#include <string>
#include <vector>

namespace tessel::cli {

constexpr int kExitOk = 0;
constexpr int kExitError = 2;
constexpr int kExitMismatch = 3;
constexpr int kExitExpectationFailed = 4;

int runLower(const std::vector<std::string>& args);
int runBench(const std::vector<std::string>& args);
int runDemo(const std::vector<std::string>& args);
int runCompile(const std::vector<std::string>& args);
int runRun(const std::vector<std::string>& args);
int runInspect(const std::vector<std::string>& args);
int runOps(const std::vector<std::string>& args);
/// `tessel measure MODEL --task KERNEL` or `--operator OP`: times one kernel (what the
/// Studio runs in a child process to measure a schedule).
int runMeasure(const std::vector<std::string>& args);
/// `tessel measure-worker MODEL` or `--operator OP`: the tuner's persistent measuring process
/// (tuner/measure/MeasureProtocol.h).
int runMeasureWorker(const std::vector<std::string>& args);
/// `tessel project run|new|check|tasks`: project files (app/project).
int runProject(const std::vector<std::string>& args);
/// `tessel lesson list|show|check`: the schedule lessons (app/lessons), graded headless.
int runLesson(const std::vector<std::string>& args);
/// `tessel records show|best|merge|prune`: tuning record files (tuner/records).
int runRecords(const std::vector<std::string>& args);

/// `tessel tune MODEL|OP --records FILE`: the auto-tuner (tuner/session).
int runTune(const std::vector<std::string>& args);
/// `tessel quantize MODEL --calibration DATA -o OUT.onnx`: post-training int8 quantization
/// into a QDQ model, with a per-layer report.
int runQuantize(const std::vector<std::string>& args);

/// `tessel bench MODEL`: runBench hands a model argument (see isModelArgument) to it.
int runModelBench(const std::vector<std::string>& args);
/// Whether a bench argument names a model rather than an operator: an existing file or
/// directory, or a name ending in .onnx (so a mistyped path says "no such file").
bool isModelArgument(const std::string& argument);

}  // namespace tessel::cli
