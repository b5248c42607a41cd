// Running `tessel measure-worker` as a persistent child: start-up, one request at a time with a
// time limit, and what a crash, hang or cancel turns into.
#include "tuner/measure/MeasureWorker.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>

#include "core/support/InteractiveChildProcess.h"

namespace tessel::tuner {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// A start that fails this many times in a row is not retried: the source itself is broken.
constexpr int kStartAttempts = 2;

std::string seconds(double value) {
  std::ostringstream text;
  text << value << " s";
  return text.str();
}

}  // namespace

// The input values of a model source, written once where every worker the object starts can
// read them; removed with the object.
class MeasureWorker::InputFiles {
public:
  ~InputFiles() {
    std::error_code ignored;
    if (!directory_.empty()) fs::remove_all(directory_, ignored);
  }
  static Expected<std::unique_ptr<InputFiles>> write(const WorkerSource& source) {
    auto files = std::make_unique<InputFiles>();
    auto* model = std::get_if<WorkerModelSource>(&source);
    if (!model || model->load.inputValues.empty()) return files;
    std::error_code error;
    fs::path base = fs::temp_directory_path(error);
    std::string pattern = ((error ? fs::path("/tmp") : base) / "tessel-measure-worker-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      return Diagnostic{"cannot create a directory for the measuring worker's inputs", pattern, 0, 0,
                        "check that the temporary directory is writable (TMPDIR)"};
    files->directory_ = pattern;
    auto written = driver::writeInputValueFiles(model->load, pattern);
    if (!written) return written.error();
    files->paths_ = std::move(*written);
    return files;
  }
  const std::map<std::string, std::string>& paths() const { return paths_; }

private:
  fs::path directory_;
  std::map<std::string, std::string> paths_;
};

std::vector<std::string> measureWorkerArguments(const MeasureWorkerOptions& options,
                                                const std::map<std::string, std::string>& inputFiles) {
  std::vector<std::string> args = {"measure-worker"};
  std::vector<std::string> source =
      std::holds_alternative<WorkerModelSource>(options.source)
          ? driver::modelSourceArguments(std::get<WorkerModelSource>(options.source).modelPath,
                                         std::get<WorkerModelSource>(options.source).load,
                                         std::get<WorkerModelSource>(options.source).compile, inputFiles)
          : driver::operatorSourceArguments(std::get<driver::OperatorSource>(options.source));
  args.insert(args.end(), source.begin(), source.end());
  if (options.threads > 0) args.insert(args.end(), {"--threads", std::to_string(options.threads)});
  return args;
}

MeasureWorker::MeasureWorker(MeasureWorkerOptions options) : options_(std::move(options)) {}

MeasureWorker::~MeasureWorker() {
  // Closing its stdin ends a healthy worker; one busy with a hung kernel is killed.
  if (child_) child_->finish(1.0);
}

int MeasureWorker::processId() const { return child_ ? int(child_->processId()) : -1; }

std::string MeasureWorker::sourceLabel() const {
  if (auto* model = std::get_if<WorkerModelSource>(&options_.source)) return model->modelPath;
  return "operator " + std::get<driver::OperatorSource>(options_.source).name;
}

Status MeasureWorker::start() {
  if (auto failure = ensureStarted()) return failure->diagnostic;
  return Status::success();
}

// The last lines the worker wrote on stderr: its own words about a crash.
std::string MeasureWorker::stderrTail() const {
  if (!child_) return "";
  std::vector<std::string> lines;
  std::istringstream stream(child_->standardErrorTail());
  for (std::string line; std::getline(stream, line);)
    if (!line.empty()) lines.push_back(line);
  constexpr size_t kLines = 12;
  if (lines.size() > kLines) lines.erase(lines.begin(), lines.end() - long(kLines));
  std::string tail;
  for (auto& line : lines) tail += "\n" + line;
  return tail.empty() ? "" : "; its last output:" + tail;
}

void MeasureWorker::dropChild() {
  child_.reset();  // already ended, or killed: reaped either way
  lostChild_ = true;
}

CandidateMeasurement MeasureWorker::lose(CandidateErrorKind kind, Diagnostic diagnostic) {
  dropChild();
  CandidateMeasurement m;
  m.failure = CandidateFailure{kind, std::move(diagnostic)};
  return m;
}

std::optional<CandidateFailure> MeasureWorker::ensureStarted() {
  if (child_ && child_->running()) return std::nullopt;
  if (permanentFailure_) return permanentFailure_;
  // It died between requests (killed from outside): nothing was on it, start another.
  if (child_) dropChild();
  auto fail = [&](Diagnostic diagnostic, bool permanent) {
    CandidateFailure failure{CandidateErrorKind::Start, std::move(diagnostic)};
    if (permanent || ++failedStarts_ >= kStartAttempts) permanentFailure_ = failure;
    return failure;
  };
  auto tessel = driver::findTesselExecutable(options_.tesselPath);
  if (!tessel) return fail(tessel.error(), true);
  if (!inputFiles_) {
    auto files = InputFiles::write(options_.source);
    if (!files) return fail(files.error(), true);
    inputFiles_ = std::move(*files);
  }
  Clock::time_point begin = Clock::now();
  auto started = InteractiveChildProcess::start(*tessel, measureWorkerArguments(options_, inputFiles_->paths()));
  if (!started) return fail(started.error(), true);
  child_ = std::move(*started);
  ++statistics_.starts;
  if (lostChild_) ++statistics_.restarts;
  lostChild_ = false;

  const std::string label = sourceLabel();
  for (;;) {
    double left = options_.startTimeoutSeconds - secondsSince(begin);
    ChildLine line = child_->readLine(std::max(left, 1e-3), options_.cancelled);
    if (line.outcome == ChildLine::Outcome::Line) {
      if (line.text.empty()) continue;
      auto ready = parseReadyLine(line.text);
      statistics_.startSeconds += secondsSince(begin);
      if (!ready) {
        dropChild();
        return fail(Diagnostic{ready.error().message, *tessel, 0, 0, ready.error().hint}, true);
      }
      if (!ready->ready) {
        Diagnostic why = ready->error;
        if (why.location.empty()) why.location = label;
        child_->finish(1.0);
        dropChild();
        return fail(why, true);
      }
      tasks_ = ready->tasks;
      failedStarts_ = 0;
      return std::nullopt;
    }
    statistics_.startSeconds += secondsSince(begin);
    if (line.outcome == ChildLine::Outcome::Cancelled) {
      child_->kill(InteractiveChildProcess::KillReason::Cancelled);
      return lose(CandidateErrorKind::Cancelled, Diagnostic{"starting the measuring worker was cancelled", label, 0, 0, ""})
          .failure;
    }
    std::string what, hint;
    if (line.outcome == ChildLine::Outcome::TimedOut) {
      child_->kill(InteractiveChildProcess::KillReason::TimedOut);
      what = "was not ready within " + seconds(options_.startTimeoutSeconds) + " and was stopped";
      hint = "importing and compiling may take longer on a busy machine (MeasureWorkerOptions::startTimeoutSeconds)";
    } else {
      what = child_->end().describeEnd() + " before it was ready";
      hint = "it failed while importing and compiling: a compiler bug worth reporting with the model";
    }
    hint += stderrTail();
    dropChild();
    return fail(Diagnostic{"the measuring worker for " + label + " " + what, label, 0, 0, hint}, false);
  }
}

CandidateMeasurement MeasureWorker::measure(const MeasureRequest& request) {
  Clock::time_point begin = Clock::now();
  if (auto failure = ensureStarted()) {
    CandidateMeasurement m;
    m.failure = failure;
    return m;
  }
  ++statistics_.candidates;
  const double limit = request.timeoutSeconds > 0 ? request.timeoutSeconds : defaultCandidateTimeout(request);
  const int64_t id = ++nextId_;
  const std::string subject = "a candidate of " + request.task;
  // A failed write means the worker is gone; the read below finds out how.
  child_->writeLine(requestLine(id, request), limit);
  for (;;) {
    double left = limit - secondsSince(begin);
    ChildLine line = child_->readLine(std::max(left, 1e-3), options_.cancelled);
    if (line.outcome == ChildLine::Outcome::Line) {
      if (replyId(line.text) != id) continue;  // not the answer to this request
      CandidateMeasurement m = parseReplyLine(line.text);
      statistics_.buildSeconds += m.buildMilliseconds / 1e3;
      statistics_.checkSeconds += m.checkMilliseconds / 1e3;
      statistics_.timingSeconds += m.timingMilliseconds / 1e3;
      statistics_.requestSeconds += secondsSince(begin);
      return m;
    }
    statistics_.requestSeconds += secondsSince(begin);
    return lost(line, request, limit);
  }
}

CandidateMeasurement MeasureWorker::lost(ChildLine line, const MeasureRequest& request, double limit) {
  const std::string subject = "a candidate of " + request.task;
  if (line.outcome == ChildLine::Outcome::Cancelled) {
    child_->kill(InteractiveChildProcess::KillReason::Cancelled);
    return lose(CandidateErrorKind::Cancelled, Diagnostic{"measuring " + subject + " was cancelled", request.task, 0, 0, ""});
  }
  if (line.outcome == ChildLine::Outcome::TimedOut) {
    child_->kill(InteractiveChildProcess::KillReason::TimedOut);
    ++statistics_.timeouts;
    std::string tail = stderrTail();
    return lose(CandidateErrorKind::Timeout,
                Diagnostic{"measuring " + subject + " took longer than its limit of " + seconds(limit) +
                               "; the measuring worker was stopped and is restarted for the next candidate",
                           request.task, 0, 0,
                           "the kernel may never finish under this schedule, or the limit is too short for the "
                           "timing asked for (MeasureRequest::timeoutSeconds)" + tail});
  }
  ++statistics_.crashes;
  const ChildProcessResult& end = child_->end();
  std::string how = end.signal != 0 ? "crashed (" + end.signalName + ")" : end.describeEnd();
  std::string tail = stderrTail();
  return lose(CandidateErrorKind::Crash,
              Diagnostic{"the measuring worker " + how + " while measuring " + subject +
                             "; it ran in a process of its own and is restarted for the next candidate",
                         request.task, 0, 0,
                         "this schedule makes code that crashes: a compiler bug worth reporting with the schedule" +
                             tail});
}

void MeasureWorker::measureBatch(
    const std::vector<MeasureRequest>& requests,
    const std::function<void(size_t index, const CandidateMeasurement& measurement)>& onResult) {
  if (requests.empty()) return;
  if (requests.size() == 1) {
    onResult(0, measure(requests[0]));
    return;
  }
  Clock::time_point begin = Clock::now();
  if (auto failure = ensureStarted()) {
    CandidateMeasurement m;
    m.failure = failure;
    for (size_t i = 0; i < requests.size(); ++i) onResult(i, m);
    return;
  }
  std::vector<int64_t> ids;
  std::vector<double> limits;
  double buildLimit = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    MeasureRequest request = requests[i];
    request.batch = i == 0 ? int(requests.size()) : 1;
    ids.push_back(++nextId_);
    limits.push_back(request.timeoutSeconds > 0 ? request.timeoutSeconds : defaultCandidateTimeout(request));
    buildLimit = std::max(buildLimit, limits.back());
    // A failed write means the worker is gone; the reads below find out how.
    child_->writeLine(requestLine(ids.back(), request), limits.back());
  }
  statistics_.candidates += int(requests.size());
  // The build phase may take the longest limit plus a quarter of the others: the worker builds
  // on every core, and a candidate that alone takes LLVM longer than that is found out below.
  double limitSum = 0;
  for (double limit : limits) limitSum += limit;
  buildLimit += limitSum / 4;

  // A loss while several candidates are on the worker cannot be pinned on one of them: from
  // `from` on, each is measured again alone (a single request is never built or timed with
  // others), so the guilty one alone is blamed.
  auto measureEachAlone = [&](size_t from) {
    dropChild();
    for (size_t i = from; i < requests.size(); ++i) {
      CandidateMeasurement m = measure(requests[i]);
      onResult(i, m);
      if (m.failure && m.failure->kind == CandidateErrorKind::Cancelled) {
        for (size_t j = i + 1; j < requests.size(); ++j) onResult(j, m);
        return;
      }
    }
  };
  // Waits for the line saying a phase of the whole batch is over (built; checked). Lost before
  // it: a cancel fails every request, anything else measures each alone; false then.
  auto awaitPhase = [&](bool (*isPhaseLine)(std::string_view), double limit) {
    Clock::time_point phaseBegin = Clock::now();
    for (;;) {
      ChildLine line = child_->readLine(std::max(limit - secondsSince(phaseBegin), 1e-3), options_.cancelled);
      if (line.outcome == ChildLine::Outcome::Line) {
        if (isPhaseLine(line.text)) return true;
        continue;
      }
      statistics_.requestSeconds += secondsSince(begin);
      statistics_.candidates -= int(requests.size());  // counted again below
      if (line.outcome == ChildLine::Outcome::Cancelled) {
        CandidateMeasurement m = lost(line, requests[0], limit);
        for (size_t i = 0; i < requests.size(); ++i) onResult(i, m);
        return false;
      }
      if (line.outcome == ChildLine::Outcome::TimedOut) child_->kill(InteractiveChildProcess::KillReason::TimedOut);
      measureEachAlone(0);
      return false;
    }
  };
  if (!awaitPhase(isBuiltLine, buildLimit)) return;
  // Timed in turns: every request is checked, then all are timed together, and the replies
  // come at the end, so each waits as long as the whole batch may take.
  bool inTurns = requests.front().turns > 1;
  if (inTurns) {
    if (!awaitPhase(isCheckedLine, limitSum)) return;
    for (double& limit : limits) limit = limitSum;
  }

  // The timing phase: one reply after another, each within its own limit.
  for (size_t i = 0; i < requests.size(); ++i) {
    Clock::time_point replyBegin = Clock::now();
    for (;;) {
      double left = limits[i] - secondsSince(replyBegin);
      ChildLine line = child_->readLine(std::max(left, 1e-3), options_.cancelled);
      if (line.outcome == ChildLine::Outcome::Line) {
        if (replyId(line.text) != ids[i]) continue;
        CandidateMeasurement m = parseReplyLine(line.text);
        statistics_.buildSeconds += m.buildMilliseconds / 1e3;
        statistics_.checkSeconds += m.checkMilliseconds / 1e3;
        statistics_.timingSeconds += m.timingMilliseconds / 1e3;
        onResult(i, m);
        break;
      }
      if (inTurns && line.outcome != ChildLine::Outcome::Cancelled) {
        if (line.outcome == ChildLine::Outcome::TimedOut) child_->kill(InteractiveChildProcess::KillReason::TimedOut);
        statistics_.candidates -= int(requests.size() - i);  // counted again by measure()
        measureEachAlone(i);
        statistics_.requestSeconds += secondsSince(begin);
        return;
      }
      CandidateMeasurement m = lost(line, requests[i], limits[i]);
      onResult(i, m);
      std::vector<MeasureRequest> rest(requests.begin() + long(i) + 1, requests.end());
      if (m.failure->kind == CandidateErrorKind::Cancelled) {
        for (size_t j = i + 1; j < requests.size(); ++j) onResult(j, m);
      } else {
        statistics_.candidates -= int(rest.size());  // counted again by the next batch
        measureBatch(rest, [&](size_t index, const CandidateMeasurement& next) { onResult(i + 1 + index, next); });
      }
      statistics_.requestSeconds += secondsSince(begin);
      return;
    }
  }
  statistics_.requestSeconds += secondsSince(begin);
}

}  // namespace tessel::tuner
