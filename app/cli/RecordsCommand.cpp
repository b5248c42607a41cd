// tessel records show|best|merge|prune|events: looking into and maintaining tuning record files
// (the format: tuner/records/Records.md).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/Commands.h"
#include "app/cli/MeasureCommand.h"
#include "app/cli/ModelCommand.h"
#include "tuner/records/RecordMaintenance.h"
#include "tuner/records/TuningDatabase.h"
#include "tuner/session/EventsFromRecords.h"
#include "tuner/session/TuningTask.h"

namespace tessel::cli {

namespace {

using namespace tessel::tuner;
using Json = nlohmann::ordered_json;

const char* kRecordsUsage =
    "usage: tessel records SUBCOMMAND [options]\n"
    "\n"
    "subcommands:\n"
    "  show FILE              per workload: trials, errors, best time, GFLOP/s, speedup over the default\n"
    "  best FILE              the best record of each workload and target, with its schedule\n"
    "  merge OUT IN [IN ...]  merge record files into OUT, each measurement once\n"
    "  prune FILE --keep N    keep the N fastest records of each workload and target\n"
    "  events FILE            the tuning event stream rebuilt from the records (history without FILE.events)\n"
    "\n"
    "A record file holds one JSON record per line (tuner/records/Records.md). Unreadable lines are\n"
    "reported with their line numbers on stderr and skipped.\n"
    "Run `tessel records SUBCOMMAND --help` for a subcommand's options.\n";

// Problems beyond this many are counted, not listed: a file of garbage need not fill the terminal.
constexpr size_t kProblemsListed = 20;

// Parses a subcommand's flags and checks its file arguments' count; an exit code when done.
std::optional<int> parseSubcommand(const std::string& name, const std::string& synopsis, const std::string& description,
                                   const std::vector<std::string>& args, const std::vector<FlagSpec>& flags,
                                   size_t minimumFiles, size_t maximumFiles, CommandLine* line) {
  std::string command = "records " + name;
  if (auto error = CommandLine::parse(args, flags, line)) return reportUsageError(command, *error);
  if (line->helpRequested()) {
    std::cout << usage("tessel " + command + " " + synopsis, flags) << "\n" << description;
    return kExitOk;
  }
  size_t files = line->positional().size();
  if (files < minimumFiles) return reportUsageError(command, "expected " + synopsis + " (see --help)");
  if (files > maximumFiles)
    return reportUsageError(command, "unexpected argument '" + line->positional()[maximumFiles] + "' (see --help)");
  return std::nullopt;
}

void reportProblems(const std::string& path, const std::vector<RecordProblem>& problems) {
  for (size_t i = 0; i < problems.size() && i < kProblemsListed; ++i)
    std::cerr << path << ": " << problems[i].describe() << "\n";
  if (problems.size() > kProblemsListed)
    std::cerr << path << ": ... and " << problems.size() - kProblemsListed << " more unreadable lines\n";
}

// Reads FILE for show and best: an exit code when it has nothing to show. Otherwise the caller
// reports the problems after its output, where they are seen last.
std::optional<int> readForDisplay(const std::string& path, RecordFileContents* out) {
  auto contents = readRecordFile(path);
  if (!contents) return reportDiagnostic(contents.error());
  if (contents->records.empty() && !contents->problems.empty()) {
    reportProblems(path, contents->problems);
    return reportDiagnostic({"has no readable tuning record", path, 0, 0, "see the lines reported above"});
  }
  *out = std::move(*contents);
  return std::nullopt;
}

std::string formatOptional(const std::optional<double>& value, const char* format) {
  if (!value) return "-";
  char text[32];
  std::snprintf(text, sizeof text, format, *value);
  return text;
}

std::optional<double> bestMs(const WorkloadStatistics& s) {
  return s.best ? std::optional(s.best->result()->medianMs) : std::nullopt;
}
std::optional<double> bestGflops(const WorkloadStatistics& s) {
  return s.best ? s.best->result()->gflops : std::nullopt;
}

Json toJson(const std::optional<double>& value) { return value ? Json(*value) : Json(nullptr); }

// One table per target; within it, workloads in the order the file first has them.
void printStatisticsTable(std::vector<WorkloadStatistics> statistics) {
  std::stable_sort(statistics.begin(), statistics.end(), [](auto& a, auto& b) { return a.target < b.target; });
  int taskWidth = 4;
  for (auto& s : statistics) taskWidth = std::max(taskWidth, int(s.task.size()));
  std::string target;
  for (auto& s : statistics) {
    if (s.target != target) {
      target = s.target;
      std::printf("%starget: %s\n", &s == &statistics.front() ? "" : "\n", target.c_str());
      std::printf("%-*s  %6s  %6s  %9s  %8s  %7s  %s\n", taskWidth, "task", "trials", "errors", "best_ms", "GFLOP/s",
                  "speedup", "workload");
    }
    std::printf("%-*s  %6d  %6d  %9s  %8s  %7s  %s\n", taskWidth, s.task.empty() ? "-" : s.task.c_str(), s.trials,
                s.errors, formatOptional(bestMs(s), "%.4g").c_str(), formatOptional(bestGflops(s), "%.1f").c_str(),
                formatOptional(s.speedupOverDefault(), "%.2fx").c_str(), s.workload.c_str());
  }
}

Json problemsJson(const std::vector<RecordProblem>& problems) {
  Json list = Json::array();
  for (auto& problem : problems) list.push_back({{"line", problem.lineNumber}, {"message", problem.describe()}});
  return list;
}

int runShow(const std::vector<std::string>& args) {
  std::vector<FlagSpec> flags = {{"workload", "show only workloads whose key contains SUBSTRING", true, ""},
                                 {"json", "print one JSON object", false, ""}};
  CommandLine line;
  if (auto done = parseSubcommand(
          "show", "FILE [--workload SUBSTRING] [--json]",
          "Summarizes a record file per workload and target: the task's name, trials, failed trials, the\n"
          "best median time (ms), its GFLOP/s, and its speedup over the default schedule when an\n"
          "origin=default record exists. Unreadable lines are listed on stderr with their numbers.\n"
          "Exit status: 0 shown, 2 the file is missing or has no readable record.\n",
          args, flags, 1, 1, &line))
    return *done;
  std::string path = line.positional()[0];
  RecordFileContents contents;
  if (auto done = readForDisplay(path, &contents)) return *done;
  TuningDatabase database(std::move(contents.records));
  std::vector<WorkloadStatistics> statistics;
  std::string filter = line.get("workload");
  for (auto& s : database.statistics())
    if (s.workload.find(filter) != std::string::npos) statistics.push_back(std::move(s));
  if (line.has("json")) {
    Json workloads = Json::array();
    for (auto& s : statistics)
      workloads.push_back({{"workload", s.workload},
                           {"workload_hash", s.workloadHash},
                           {"task", s.task},
                           {"target", s.target},
                           {"trials", s.trials},
                           {"errors", s.errors},
                           {"best_ms", toJson(bestMs(s))},
                           {"gflops", toJson(bestGflops(s))},
                           {"default_ms", toJson(s.defaultMedianMs)},
                           {"speedup", toJson(s.speedupOverDefault())}});
    std::cout << Json{{"file", path}, {"workloads", workloads}, {"problems", problemsJson(contents.problems)}}.dump()
              << "\n";
  } else if (statistics.empty()) {
    std::printf("%s\n", filter.empty() ? "no records" : ("no workload contains '" + filter + "'").c_str());
  } else {
    printStatisticsTable(std::move(statistics));
  }
  std::fflush(stdout);
  reportProblems(path, contents.problems);
  return kExitOk;
}

int runBest(const std::vector<std::string>& args) {
  std::vector<FlagSpec> flags = {
      {"target", "only records measured for exactly this target string", true, ""},
      {"json", "print one JSON object; its \"best\" holds records as in the file", false, ""}};
  CommandLine line;
  if (auto done =
          parseSubcommand("best", "FILE [--target STRING] [--json]",
                          "Prints the best record of each workload and target (the schedule whose confirmations, the\n"
                          "tuner's final re-measurements in turns, have the least median; without confirmations the\n"
                          "valid record with the least median time) with its schedule: a comment line with the task, the time and where the record came\n"
                          "from, the workload and the target, then the trace as the schedule editor shows it.\n"
                          "Exit status: 0 shown, 2 the file is missing or unreadable, or no record is for --target.\n",
                          args, flags, 1, 1, &line))
    return *done;
  std::string path = line.positional()[0];
  RecordFileContents contents;
  if (auto done = readForDisplay(path, &contents)) return *done;
  TuningDatabase database(std::move(contents.records));
  std::vector<std::string> targets = database.targets();
  if (line.has("target")) {
    std::string wanted = line.get("target");
    if (std::find(targets.begin(), targets.end(), wanted) == targets.end()) {
      std::string known;
      for (auto& target : targets) known += (known.empty() ? "'" : ", '") + target + "'";
      return reportDiagnostic({"no record is for the target '" + wanted + "'", path, 0, 0,
                               targets.empty() ? "the file has no records" : "its targets: " + known});
    }
    targets = {wanted};
  }
  std::vector<const TuningRecord*> best;
  for (auto& target : targets)
    for (const TuningRecord* record : database.bestForTarget(target)) best.push_back(record);

  if (line.has("json")) {
    Json records = Json::array();
    for (const TuningRecord* record : best) records.push_back(Json::parse(toJsonLine(*record)));
    std::cout << Json{{"file", path}, {"best", records}, {"problems", problemsJson(contents.problems)}}.dump() << "\n";
    reportProblems(path, contents.problems);
    return kExitOk;
  }
  if (best.empty()) std::printf("no successful measurement\n");
  for (const TuningRecord* record : best) {
    const MeasuredTime& time = *record->result();
    std::printf("# %s: %.4g ms%s (origin %s, round %d, %s)\n", record->task.empty() ? "-" : record->task.c_str(),
                time.medianMs, (time.gflops ? formatOptional(time.gflops, ", %.1f GFLOP/s") : "").c_str(),
                std::string(originName(record->origin)).c_str(), record->round, record->time.c_str());
    std::printf("# workload: %s\n# target: %s\n%s%s\n", record->workload.c_str(), record->target.c_str(),
                record->trace.c_str(), record->trace.ends_with('\n') || record->trace.empty() ? "" : "\n");
  }
  std::fflush(stdout);
  reportProblems(path, contents.problems);
  return kExitOk;
}

int runMerge(const std::vector<std::string>& args) {
  std::vector<FlagSpec> flags = {
      {"force", "rewrite OUT even though some of its lines cannot be read (they are lost)", false, ""}};
  CommandLine line;
  if (auto done = parseSubcommand(
          "merge", "OUT IN [IN ...] [--force]",
          "Merges record files into OUT: OUT's own records (when it exists) and then each IN's, in order,\n"
          "each measurement once (same workload, target, trace, origin and time). OUT is written\n"
          "atomically. Unreadable lines of the inputs are reported and skipped; an OUT with unreadable\n"
          "lines is left alone unless --force. Exit status: 0 merged, 2 any error (nothing written).\n",
          args, flags, 2, SIZE_MAX, &line))
    return *done;
  std::vector<std::string> inputs(line.positional().begin() + 1, line.positional().end());
  std::string output = line.positional()[0];
  auto report = mergeRecordFiles(inputs, output, line.has("force"));
  if (!report) return reportDiagnostic(report.error());
  for (auto& [path, problem] : report->problems) reportProblems(path, {problem});
  std::printf("merged %d records into %s (%d duplicates dropped)\n", report->recordsWritten, output.c_str(),
              report->duplicatesDropped);
  return kExitOk;
}

int runPrune(const std::vector<std::string>& args) {
  std::vector<FlagSpec> flags = {
      {"keep", "N: the fastest valid records kept per workload and target", true, ""},
      {"drop-errors", "also drop failed measurements (kept otherwise)", false, ""},
      {"output", "write the result to OUT instead of rewriting FILE", true, "", false, "o"},
      {"force", "rewrite FILE even though some of its lines cannot be read (they are lost)", false, ""}};
  CommandLine line;
  if (auto done = parseSubcommand(
          "prune", "FILE --keep N [--drop-errors] [-o OUT] [--force]",
          "Keeps the N fastest valid records of each workload and target, and the fastest\n"
          "origin=default one (so the speedup over the default stays known); failed ones too unless\n"
          "--drop-errors. The records stay in their order. The result replaces FILE atomically (or goes\n"
          "to OUT); a FILE with unreadable lines is left alone unless --force or -o.\n"
          "Exit status: 0 pruned, 2 any error (FILE unchanged).\n",
          args, flags, 1, 1, &line))
    return *done;
  if (!line.has("keep")) return reportUsageError("records prune", "--keep N is required");
  int64_t keep = 0;
  if (auto error = line.getInt("keep", &keep)) return reportUsageError("records prune", *error);
  std::string input = line.positional()[0];
  std::string output = line.has("output") ? line.get("output") : input;
  PruneOptions options{int(std::min<int64_t>(keep, INT32_MAX)), line.has("drop-errors"), line.has("force")};
  auto report = pruneRecordFile(input, output, options);
  if (!report) return reportDiagnostic(report.error());
  reportProblems(input, report->problems);
  std::printf("kept %d of %d records in %s (dropped %d slower, %d failed)\n", report->recordsKept, report->recordsRead,
              output.c_str(), report->slowerDropped, report->errorsDropped);
  return kExitOk;
}

int runEvents(const std::vector<std::string>& args) {
  std::vector<FlagSpec> flags = {
      {"model", "MODEL: the model the records tuned, for each task's weight, kernels and op", true, ""}};
  appendSourceFlags(flags, "");
  CommandLine line;
  if (auto done = parseSubcommand(
          "events", "FILE [--model MODEL [model flags]]",
          "Writes to stdout the event stream (tuner/Events.md) of the sessions that wrote FILE, rebuilt\n"
          "from the records alone: every trial, each round with the cost model's ranking quality (the\n"
          "records keep its predictions), each confirmation, and the end. It is what the Studio's Tuning\n"
          "view shows for a records file with no kept FILE.events. The records do not say how often each\n"
          "kernel runs in the model: with --model (and the flags it was tuned with), the tasks get their\n"
          "weights, kernels and ops; without it each task counts once. The machine's peak, the budget and\n"
          "the scheduler's reasons are not in the records and stay unknown.\n"
          "Exit status: 0 written, 2 any error.\n",
          args, flags, 1, 1, &line))
    return *done;
  const std::string path = line.positional()[0];
  RecordFileContents contents;
  if (auto done = readForDisplay(path, &contents)) return *done;
  if (contents.records.empty()) return reportDiagnostic({"holds no tuning record", path, 0, 0, "tune a model into it first"});
  EventsFromRecordsOptions options;
  options.recordsPath = path;
  if (line.has("model")) {
    std::string usageError;
    auto tasks = compileTasks(line.get("model"), line, &usageError);
    if (!usageError.empty()) return reportUsageError("records events", usageError);
    if (!tasks) return reportDiagnostic(tasks.error());
    options.source = line.get("model");
    for (const TuningTask& task : groupTasksByWorkload(*tasks))
      options.facts.push_back({task.workloadHash, task.op, task.kernels, task.weight, task.flops, task.bytes});
  }
  for (const nlohmann::json& event : eventsFromRecords(contents.records, options)) std::cout << event.dump() << "\n";
  std::cout.flush();
  reportProblems(path, contents.problems);
  return kExitOk;
}

}  // namespace

int runRecords(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << kRecordsUsage;
    return args.empty() ? kExitError : kExitOk;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "show") return runShow(rest);
  if (args[0] == "best") return runBest(rest);
  if (args[0] == "merge") return runMerge(rest);
  if (args[0] == "prune") return runPrune(rest);
  if (args[0] == "events") return runEvents(rest);
  std::cerr << "tessel records: unknown subcommand '" << args[0] << "'\n\n" << kRecordsUsage;
  return kExitError;
}

}  // namespace tessel::cli
