// tessel project run|new|check|tasks: project files (.tessel) on the command line, for CI and
// for people who want a project without opening the Studio.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/Commands.h"
#include "app/cli/ModelCommand.h"
#include "app/cli/TuningRecordsFlag.h"
#include "app/project/AtomicFile.h"
#include "app/project/CiExport.h"
#include "app/project/InstallLocation.h"
#include "app/project/JUnitReport.h"
#include "app/project/Project.h"
#include "app/project/ProjectOptions.h"
#include "app/project/ProjectRunner.h"
#include "compiler/driver/ScheduleEdits.h"
#include "runtime/ThreadPool.h"

namespace tessel::cli {

namespace {

const char* kProjectUsage =
    "usage: tessel project SUBCOMMAND [options]\n"
    "\n"
    "subcommands:\n"
    "  run FILE.tessel        import, apply the saved schedules, compile, verify, benchmark, check the\n"
    "                         expectations, export; exit 3 when outputs differ, 4 when an expectation fails\n"
    "  new MODEL -o FILE      write a starter project for MODEL\n"
    "  check FILE.tessel      validate a project (--compile: also compile it with its schedules)\n"
    "  tasks FILE.tessel      list the kernels a schedule can be written for (--trace TASK: its schedule)\n"
    "  export-ci FILE.tessel -o DIR\n"
    "                         write the project into DIR with its model, reference data, records,\n"
    "                         Tessel's .deb packages and GitLab CI / GitHub Actions jobs (as the Studio's\n"
    "                         File > Export for CI)\n"
    "\n"
    "Run `tessel project SUBCOMMAND --help` for a subcommand's options.\n";

// How much slower than its saved baseline a run may be when --save-baseline sets the first one:
// enough for the noise of a shared CI machine, not enough to hide a lost optimization.
constexpr double kDefaultBaselineRatio = 1.5;

// Parses `FILE [flags]` of a subcommand; an exit code when there is nothing more to do.
std::optional<int> parseSubcommand(const std::string& name, const std::string& synopsis, const std::string& description,
                                   const std::vector<std::string>& args, const std::vector<FlagSpec>& flags,
                                   ModelCommand* out) {
  return parseModelCommand("project " + name, synopsis, description, args, flags, out);
}

// An integer flag given as an override (absent: the project's own setting).
std::optional<std::string> readOverride(const CommandLine& line, const std::string& name, std::optional<int>* out) {
  if (!line.has(name)) return std::nullopt;
  int64_t value = 0;
  if (auto error = line.getInt(name, &value)) return error;
  *out = int(value);
  return std::nullopt;
}

// The key=value summary, as `tessel bench` prints it, with a line per comparison and expectation.
void printSummary(const std::string& file, const project::ProjectRunReport& report) {
  std::printf("project=%s\nmodel=%s\nthreads=%d\ntasks_edited=%d\ntuned_kernels=%d\n", file.c_str(),
              report.model.c_str(), report.threads, report.tasksEdited, report.tunedKernels);
  std::printf("load_seconds=%.3f\ncompile_seconds=%.3f\n", report.loadSeconds, report.compileSeconds);
  for (auto& comparison : report.comparisons) std::printf("%s\n", comparison.describe().c_str());
  std::printf("verify=%s\n", report.comparisons.empty() ? "skipped" : report.outputsMatch() ? "match" : "mismatch");
  if (report.benchmarked) {
    std::printf("runs=%d\nlatency_ms=%.4f\nmin_ms=%.4f\n", report.runs, report.latencyMs, report.minMs);
    if (report.untunedLatencyMs > 0) std::printf("untuned_latency_ms=%.4f\n", report.untunedLatencyMs);
    for (auto& expectation : report.expectations) std::printf("expectation %s\n", expectation.describe().c_str());
    std::printf("expectations=%s\n",
                report.expectations.empty() ? "none" : report.expectationsMet() ? "pass" : "fail");
  }
  if (!report.exportedTo.empty()) std::printf("exported_to=%s\n", report.exportedTo.c_str());
}

void printJson(const std::string& file, const project::ProjectRunReport& report) {
  nlohmann::ordered_json out;
  out["project"] = file;
  out["model"] = report.model;
  out["threads"] = report.threads;
  out["tasks_edited"] = report.tasksEdited;
  out["tuned_kernels"] = report.tunedKernels;
  if (report.tuningRecords) out["tuning_records"] = report.tuningRecords->path;
  out["load_seconds"] = report.loadSeconds;
  out["compile_seconds"] = report.compileSeconds;
  nlohmann::ordered_json outputs = nlohmann::ordered_json::array();
  for (auto& comparison : report.comparisons)
    outputs.push_back({{"name", comparison.name}, {"matches", comparison.matches}, {"message", comparison.describe()}});
  out["verify"] = report.comparisons.empty() ? "skipped" : report.outputsMatch() ? "match" : "mismatch";
  out["outputs"] = outputs;
  if (report.benchmarked) {
    out["runs"] = report.runs;
    out["latency_ms"] = report.latencyMs;
    out["min_ms"] = report.minMs;
    if (report.untunedLatencyMs > 0) out["untuned_latency_ms"] = report.untunedLatencyMs;
    nlohmann::ordered_json expectations = nlohmann::ordered_json::array();
    for (auto& e : report.expectations) {
      nlohmann::ordered_json expectation = {
          {"name", e.name}, {"measured", e.measured}, {"limit", e.limit}, {"passed", e.passed}};
      if (e.baselineMs > 0) expectation["baseline_ms"] = e.baselineMs;
      expectations.push_back(expectation);
    }
    out["expectations"] = expectations;
  }
  if (!report.exportedTo.empty()) out["exported_to"] = report.exportedTo;
  std::cout << out.dump(2) << "\n";
}

// Now, as a JUnit report's timestamp wants it (local time, no zone).
std::string junitTimestamp() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &local);
  return text;
}

// Writes the JUnit report of the run when --junit asked for one; an exit code when it cannot be
// written (the run's own outcome is then not what CI should see).
std::optional<int> writeJunit(const CommandLine& line, const std::string& projectFile,
                              const Expected<project::ProjectRunReport>& run) {
  if (!line.has("junit")) return std::nullopt;
  Status written = project::writeFileAtomically(line.get("junit"),
                                                project::junitReport(projectFile, run, junitTimestamp()));
  if (!written) return reportDiagnostic(written.error());
  return std::nullopt;
}

// The project's model compiled as `project run` compiles it (its threads, passes, target and
// tuning records, reported on stderr), before its schedule edits; `options` receives the options
// used.
Expected<driver::CompiledModel> compileProjectModel(const project::Project& project, driver::CompileOptions* options) {
  if (project.target.threads > 0) runtime::ThreadPool::global().setNumThreads(project.target.threads);
  *options = project::compileOptionsFor(project);
  std::optional<tuner::AppliedRecords> records;
  if (!project.tuningRecords.empty()) {
    auto applied = tuner::loadTuningRecords(project.tuningRecords, options->target);
    if (!applied) return applied.error();
    options->tunedSchedules = applied->schedules;
    records = std::move(*applied);
  }
  auto graph = driver::loadModel(project.model, project::loadOptionsFor(project));
  if (!graph) return graph.error();
  auto compiled = driver::compileGraph(*graph, *options);
  if (compiled && records) reportTuningRecords(*records, *compiled);
  return compiled;
}

int runProjectRun(const std::vector<std::string>& args) {
  std::vector<FlagSpec> flags = {threadsFlag(),
                                 {"repeat", "timed runs (instead of the project's benchmark.repeats)", true, ""},
                                 {"export", "export the deployable module to DIR (whatever the project says)", true, ""},
                                 {"json", "print the summary as one JSON object", false, ""},
                                 {"junit",
                                  "also write a JUnit XML report to FILE (one test case per check), for CI test "
                                  "reporters; written whatever the outcome",
                                  true, ""},
                                 {"save-baseline",
                                  "store the measured latency as benchmark.baseline_ms in the project (max_ratio "
                                  "1.5 unless it has one)",
                                  false, ""},
                                 tuningRecordsFlag()};
  ModelCommand command;
  if (auto done = parseSubcommand(
          "run", "FILE.tessel [options]",
          "Runs a project headless: imports its model, compiles it with the saved schedules, runs it on\n"
          "the reference inputs and compares the outputs (when the project names reference data), then\n"
          "measures the median latency (latency_ms=) and checks each expectation (PASS/FAIL), and exports\n"
          "when asked. Exit status: 0 all good, 2 any error (project, model, schedule), 3 outputs differ\n"
          "from the reference, 4 an expectation failed. --save-baseline records this run's latency for\n"
          "later runs' max_ratio check (the expectations of this run are checked before it is saved).\n"
          "The project's tuning_records (or --tuning-records, which overrides it) schedule the kernels the\n"
          "project does not edit; tuned_kernels= counts them, and what the records did goes to stderr.\n"
          "--junit FILE writes the checks as JUnit XML (compile, each output, benchmark, each expectation,\n"
          "export) for the test reports of Jenkins, GitLab CI and GitHub Actions; a run that stops on an\n"
          "error still writes it, with that error.\n",
          args, flags, &command))
    return *done;
  const CommandLine& line = command.line;
  project::ProjectRunOptions options;
  for (auto error : {readOverride(line, "threads", &options.threads), readOverride(line, "repeat", &options.repeats)})
    if (error) return reportUsageError("project run", *error);
  if (line.has("export")) options.exportDirectory = std::filesystem::absolute(line.get("export")).string();
  if (line.has("tuning-records")) options.tuningRecords = line.get("tuning-records");

  auto loaded = project::loadProject(command.model);
  if (!loaded) {
    if (auto failed = writeJunit(line, command.model, loaded.error())) return *failed;
    return reportDiagnostic(loaded.error());
  }
  auto report = project::runProject(*loaded, options);
  if (auto failed = writeJunit(line, command.model, report)) return *failed;
  if (!report) return reportDiagnostic(report.error());
  if (report->tuningRecords) reportTuningRecords(*report->tuningRecords);
  if (line.has("json")) printJson(command.model, *report);
  else printSummary(command.model, *report);

  if (!report->outputsMatch()) {
    std::cerr << "tessel project run: outputs differ from the reference data in " << loaded->reference.directory
              << " (rtol " << loaded->reference.rtol << ", atol " << loaded->reference.atol << ")\n";
    return kExitMismatch;
  }
  if (line.has("save-baseline")) {
    project::Project updated = *loaded;
    updated.benchmark.baselineMs = report->latencyMs;
    if (!updated.benchmark.maxRatio) updated.benchmark.maxRatio = kDefaultBaselineRatio;
    Status saved = project::saveProject(updated, command.model);
    if (!saved) return reportDiagnostic(saved.error());
    // On stderr: stdout stays the summary (and valid JSON with --json).
    std::cerr << "tessel project run: saved benchmark.baseline_ms=" << report->latencyMs << " in " << command.model
              << "\n";
  }
  if (!report->expectationsMet()) {
    for (auto& expectation : report->expectations)
      if (!expectation.passed) std::cerr << "tessel project run: expectation failed: " << expectation.describe() << "\n";
    return kExitExpectationFailed;
  }
  return kExitOk;
}

int runProjectNew(const std::vector<std::string>& args) {
  std::vector<FlagSpec> flags = {{"output", "the project file to write", true, "", false, "o"},
                                 {"force", "replace FILE when it exists", false, ""},
                                 inputShapeFlag()};
  ModelCommand command;
  if (auto done = parseSubcommand("new", "MODEL -o FILE.tessel [options]",
                                  "Writes a starter project for MODEL: default passes and schedules, no expectations,\n"
                                  "and the reference data when MODEL sits in the ONNX test layout (test_data_set_0/).\n"
                                  "Edit it in Tessel Studio or a text editor; see README.md, \"Project files\".\n",
                                  args, flags, &command))
    return *done;
  const CommandLine& line = command.line;
  if (!line.has("output")) return reportUsageError("project new", "-o FILE.tessel is required");
  std::string file = line.get("output");
  driver::LoadOptions load;
  if (auto error = readInputShapes(line, &load)) return reportUsageError("project new", *error);
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(command.model, ignored))
    return reportDiagnostic({"no such file", command.model, 0, 0, "give an .onnx model file"});
  if (std::filesystem::exists(file, ignored) && !line.has("force"))
    return reportUsageError("project new", file + " exists (--force replaces it)");

  project::Project project = project::starterProject(command.model);
  project.inputShapes = load.inputShapes;
  Status saved = project::saveProject(project, file);
  if (!saved) return reportDiagnostic(saved.error());
  // Read back, so a starter the loader would reject (a model that moved meanwhile) shows now.
  auto loaded = project::loadProject(file);
  if (!loaded) return reportDiagnostic(loaded.error());
  std::printf("project=%s\nmodel=%s\nreference=%s\n", file.c_str(), loaded->model.c_str(),
              loaded->reference.directory.empty() ? "none" : loaded->reference.directory.c_str());
  return kExitOk;
}

int runProjectCheck(const std::vector<std::string>& args) {
  std::vector<FlagSpec> flags = {{"compile", "also compile the model and apply the schedules", false, ""}};
  ModelCommand command;
  if (auto done = parseSubcommand("check", "FILE.tessel [--compile]",
                                  "Validates a project file (exit 0, or 2 with the problem and where it is). With\n"
                                  "--compile, also imports and compiles the model and replays every schedule edit.\n",
                                  args, flags, &command))
    return *done;
  auto loaded = project::loadProject(command.model);
  if (!loaded) return reportDiagnostic(loaded.error());
  if (command.line.has("compile")) {
    driver::CompileOptions options;
    auto compiled = compileProjectModel(*loaded, &options);
    if (!compiled) return reportDiagnostic(compiled.error());
    auto edited = driver::applyScheduleEdits(std::move(*compiled), loaded->tasks, options.target);
    if (!edited) return reportDiagnostic(edited.error());
  }
  std::printf("project=%s\nmodel=%s\ntasks=%zu\nresult=valid\n", command.model.c_str(), loaded->model.c_str(),
              loaded->tasks.size());
  return kExitOk;
}

int runProjectTasks(const std::vector<std::string>& args) {
  std::vector<FlagSpec> flags = {
      {"trace", "print TASK's schedule (the project's edit, else its tuning record, else the default)", true, ""}};
  ModelCommand command;
  if (auto done = parseSubcommand("tasks", "FILE.tessel [--trace TASK]",
                                  "Compiles the project's model and lists its kernels (the task names a schedule edit\n"
                                  "uses) with their workloads, marking those the project edits and those its tuning\n"
                                  "records schedule. --trace TASK prints the task's schedule, ready to paste into the\n"
                                  "project's \"tasks\".\n",
                                  args, flags, &command))
    return *done;
  auto loaded = project::loadProject(command.model);
  if (!loaded) return reportDiagnostic(loaded.error());
  driver::CompileOptions options;
  auto compiled = compileProjectModel(*loaded, &options);
  if (!compiled) return reportDiagnostic(compiled.error());

  if (command.line.has("trace")) {
    std::string task = command.line.get("trace");
    if (const driver::ScheduleEdit* edit = loaded->findTask(task)) {
      std::printf("# %s (%s), as the project edits it\n%s", task.c_str(), edit->workload.c_str(), edit->trace.c_str());
      return kExitOk;
    }
    auto edit = driver::defaultScheduleEdit(*compiled, task, options.target);
    if (!edit) return reportDiagnostic(edit.error());
    for (const driver::CompiledKernel& kernel : compiled->kernels) {
      if (kernel.name != task || !kernel.tuned) continue;
      std::string trace = options.tunedSchedules->traces.at(kernel.workloadKey);
      if (!trace.empty() && trace.back() != '\n') trace += '\n';
      std::printf("# %s (%s), from the tuning records\n%s", task.c_str(), edit->workload.c_str(), trace.c_str());
      return kExitOk;
    }
    std::printf("# %s (%s), default schedule\n%s", task.c_str(), edit->workload.c_str(), edit->trace.c_str());
    return kExitOk;
  }
  int width = 4;
  for (auto& kernel : compiled->kernels) width = std::max(width, int(kernel.name.size()));
  std::printf("%-*s  %-6s  %-5s  %s\n", width, "task", "edited", "tuned", "workload");
  for (const driver::CompiledKernel& kernel : compiled->kernels) {
    if (!kernel.node) continue;  // a copy of a graph output: nothing to schedule
    const std::string& task = kernel.name;
    bool edited = loaded->findTask(task);
    auto edit = driver::defaultScheduleEdit(*compiled, task, options.target);
    // An edit wins over a tuning record.
    std::printf("%-*s  %-6s  %-5s  %s\n", width, task.c_str(), edited ? "yes" : "", kernel.tuned && !edited ? "yes" : "",
                edit ? edit->workload.c_str() : ("(" + edit.error().message + ")").c_str());
  }
  return kExitOk;
}

}  // namespace

int runProjectExportCi(const std::vector<std::string>& args) {
  std::vector<FlagSpec> flags = {
      {"output", "the folder to write (created when missing)", true, "", false, "o"},
      {"packages", "take Tessel's .deb files from this folder (default: $TESSEL_PACKAGES_DIR, or build/packages "
                   "beside this tessel)",
       true, ""},
      {"no-packages", "copy no .deb files (the jobs then need them put in tessel-packages/)", false, ""}};
  ModelCommand command;
  if (auto done = parseSubcommand("export-ci", "FILE.tessel -o DIR [options]",
                                  "Writes the project for CI into DIR, as the Studio's File > Export for CI does: the\n"
                                  "project with relative paths, its model, reference data and tuning records, Tessel's\n"
                                  "Debian packages in tessel-packages/, ci/run-project.sh, .gitlab-ci.yml and\n"
                                  ".github/workflows/tessel.yml. Commit DIR; each CI job installs the packages and runs\n"
                                  "`tessel project run --junit`.\n",
                                  args, flags, &command))
    return *done;
  const CommandLine& line = command.line;
  if (!line.has("output")) return reportUsageError("project export-ci", "-o DIR is required");
  if (line.has("packages") && line.has("no-packages"))
    return reportUsageError("project export-ci", "--packages and --no-packages exclude each other");
  auto loaded = project::loadProject(command.model);
  if (!loaded) return reportDiagnostic(loaded.error());
  std::vector<std::string> packages;
  if (!line.has("no-packages")) {
    packages = project::tesselPackageFiles(line.get("packages"));
    if (line.has("packages") && packages.empty())
      return reportDiagnostic({"no Tessel .deb packages here", line.get("packages"), 0, 0,
                               "build them with scripts/package.sh (build/packages), or pass --no-packages"});
  }
  std::string name = std::filesystem::path(command.model).stem().string();
  auto exported = project::exportProjectForCi(*loaded, line.get("output"), name, packages);
  if (!exported) return reportDiagnostic(exported.error());
  std::printf("directory=%s\nproject=%s\ncommand=%s\nfiles=%zu\npackages=%zu\n", exported->directory.c_str(),
              exported->projectFile.c_str(), exported->command.c_str(), exported->files.size(),
              exported->packages.size());
  for (const std::string& package : exported->packages) std::printf("package=%s\n", package.c_str());
  if (exported->packages.empty())
    std::fprintf(stderr, "note: no .deb packages were copied: put Tessel's in %s/tessel-packages/ before committing "
                         "(scripts/package.sh builds them)\n",
                 exported->directory.c_str());
  return kExitOk;
}

int runProject(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << kProjectUsage;
    return args.empty() ? kExitError : kExitOk;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "run") return runProjectRun(rest);
  if (args[0] == "new") return runProjectNew(rest);
  if (args[0] == "check") return runProjectCheck(rest);
  if (args[0] == "tasks") return runProjectTasks(rest);
  if (args[0] == "export-ci") return runProjectExportCi(rest);
  std::cerr << "tessel project: unknown subcommand '" << args[0] << "'\n\n" << kProjectUsage;
  return kExitError;
}

}  // namespace tessel::cli
