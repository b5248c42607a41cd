// Tuning sessions end to end, with the real measuring worker: every trial lands in the records
// file and in the event stream (which follows its documented schema), a candidate that crashes
// the worker and one that hangs it are recorded as errors while the session completes, a
// session resumes from its records without measuring a point twice, a file with trials is not
// reused without --resume, an interrupted session keeps its trials, and the records then give
// the session's choice to every command. Nothing here asserts a time.
#include <QtTest>

#include <fstream>
#include <set>
#include <sstream>

#include "compiler/driver/Driver.h"
#include "compiler/ops/Matmul.h"
#include "compiler/lower/Lower.h"
#include "compiler/schedule/TraceText.h"
#include "core/ir/StructuralEqual.h"
#include "tuner/records/RecordFile.h"
#include "tuner/records/TuningDatabase.h"
#include "tuner/session/EventsFromRecords.h"
#include "tuner/session/SessionPreview.h"
#include "tuner/session/TuningEventLog.h"
#include "tuner/session/TuningSession.h"
#include "tests/SanitizerBuild.h"

using namespace tessel;
using namespace tessel::tuner;

namespace {

const std::string kTessel = TESSEL_BINARY_DIR "/bin/tessel";
const std::string kModel = TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx";

TuningTask matmulTask(int64_t size) {
  Workload workload = matmul(size, size, size);
  auto schedule = defaultMatmulSchedule(workload, hostTarget());
  if (!schedule) qFatal("%s", schedule.error().toString().c_str());
  return operatorTask(workload, schedule->trace(), hostTarget());
}

MeasureWorkerOptions matmulWorker(int64_t size) {
  MeasureWorkerOptions options;
  std::string n = std::to_string(size);
  options.source = driver::OperatorSource{"matmul", {{"m", n}, {"n", n}, {"k", n}}};
  options.threads = 1;
  options.tesselPath = kTessel;
  return options;
}

// Short timing and small rounds: these tests check what is recorded, not how fast.
TuningSessionOptions quickOptions(const std::string& records, std::vector<nlohmann::json>* events) {
  TuningSessionOptions options;
  options.recordsPath = records;
  options.sourceLabel = "test";
  options.budgetTrials = 24;
  options.search.batchSize = 8;
  options.search.population = 32;
  options.search.generations = 2;
  options.measure.minSeconds = 0.005;
  options.measure.minRepeats = 2;
  options.measure.maxRepeats = 10;
  options.confirmCandidates = 2;
  options.confirmRepeats = 2;
  options.costModel.policy.minimumNewSamples = 8;
  options.events = [events](const nlohmann::json& event) { events->push_back(event); };
  return options;
}

std::vector<TuningRecord> readRecords(const std::string& path) {
  auto contents = readRecordFile(path);
  if (!contents) qFatal("%s", contents.error().toString().c_str());
  if (!contents->problems.empty()) qFatal("%s", contents->problems.front().describe().c_str());
  return contents->records;
}

int countEvents(const std::vector<nlohmann::json>& events, const std::string& kind) {
  return int(std::count_if(events.begin(), events.end(), [&](const nlohmann::json& e) { return e["event"] == kind; }));
}

std::string readText(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Every event follows the schema, the session starts and ends with its events, and there is
// one trial event per record appended.
void checkStream(const std::vector<nlohmann::json>& events, size_t recordsAppended) {
  QVERIFY(!events.empty());
  for (const nlohmann::json& event : events) {
    auto problem = validateEvent(event);
    QVERIFY2(!problem, (problem.value_or("") + ": " + event.dump()).c_str());
  }
  QCOMPARE(events.front()["event"].get<std::string>(), std::string("session_start"));
  QCOMPARE(events.back()["event"].get<std::string>(), std::string("session_end"));
  QCOMPARE(size_t(countEvents(events, "trial")), recordsAppended);
}

}  // namespace

class TestSession : public QObject {
  Q_OBJECT
private slots:
  void aModelIsTunedTaskByTaskWithEveryTrialRecorded() {
    QTemporaryDir dir;
    std::string records = dir.filePath("tiny.jsonl").toStdString();
    auto graph = driver::loadModel(kModel);
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    auto compiled = driver::compileGraph(*graph);
    QVERIFY(compiled);
    auto scheduleTasks = driver::extractTasks(*compiled);
    QVERIFY(scheduleTasks);
    std::vector<TuningTask> tasks = groupTasksByWorkload(*scheduleTasks);
    // Identical kernels are one task, weighted by their number.
    int kernels = 0;
    std::set<std::string> keys;
    for (const TuningTask& task : tasks) {
      kernels += task.weight;
      QVERIFY(keys.insert(task.workloadKey).second);
      QCOMPARE(size_t(task.weight), task.kernels.size());
    }
    QCOMPARE(size_t(kernels), scheduleTasks->size());

    std::vector<nlohmann::json> events;
    TuningSessionOptions options = quickOptions(records, &events);
    options.budgetTrials = int(tasks.size()) * 2 + 16;  // the defaults (twice each) and two rounds
    MeasureWorkerOptions workerOptions;
    workerOptions.source = WorkerModelSource{kModel, {}, {}};
    workerOptions.threads = 1;
    workerOptions.tesselPath = kTessel;
    MeasureWorker worker(workerOptions);
    auto result = runTuningSession(tasks, worker, options);
    QVERIFY2(result, result ? "" : result.error().toString().c_str());
    QVERIFY2(!result->error, result->error ? result->error->toString().c_str() : "");
    QCOMPARE(result->reason, std::string("trials"));

    std::vector<TuningRecord> written = readRecords(records);
    QCOMPARE(int(written.size()), result->trials);
    checkStream(events, written.size());
    // Every task's default was measured and filed under its workload key on this target.
    for (const TuningTask& task : tasks) {
      bool hasDefault = std::any_of(written.begin(), written.end(), [&](const TuningRecord& r) {
        return r.workload == task.workloadKey && r.origin == RecordOrigin::Default && r.result();
      });
      QVERIFY2(hasDefault, task.name.c_str());
    }
    for (const TuningRecord& record : written) QCOMPARE(record.target, hostTarget().toString());
    QCOMPARE(result->tasks.size(), tasks.size());
    QVERIFY(result->defaultLatencyMs > 0);
    QVERIFY(result->estimatedLatencyMs > 0 && result->estimatedLatencyMs <= result->defaultLatencyMs * 1.0001);
    QCOMPARE(countEvents(events, "round"), 2);
  }

  void crashingAndHangingCandidatesAreRecordedAndTheSessionCompletes() {
    QTemporaryDir dir;
    std::string records = dir.filePath("faults.jsonl").toStdString();
    // The worker crashes on the 4th request and hangs on the 7th (counted across restarts).
    qputenv("TESSEL_MEASURE_WORKER_FAULTS", "crash@4,hang@7");
    qputenv("TESSEL_MEASURE_WORKER_FAULT_COUNTER", dir.filePath("counter").toUtf8());
    std::vector<nlohmann::json> events;
    TuningSessionOptions options = quickOptions(records, &events);
    options.measure.timeoutSeconds = 3;
    // Candidates one at a time: the injected faults strike by request count, and a batch timed
    // in turns that loses its worker measures each candidate again alone, where request 4 is
    // another one (test_measure pins a real culprit in turns).
    options.measure.turns = 1;
    MeasureWorker worker(matmulWorker(32));
    auto result = runTuningSession({matmulTask(32)}, worker, options);
    qunsetenv("TESSEL_MEASURE_WORKER_FAULTS");
    qunsetenv("TESSEL_MEASURE_WORKER_FAULT_COUNTER");
    QVERIFY2(result, result ? "" : result.error().toString().c_str());
    QCOMPARE(result->reason, std::string("trials"));

    std::vector<TuningRecord> written = readRecords(records);
    checkStream(events, written.size());
    QCOMPARE(written.size(), size_t(result->trials));
    // Requests 1 and 2 are the default, 3 the first candidate: 4 crashed, 7 hung.
    QVERIFY(written.size() > 8);
    QVERIFY(written[3].failure());
    QCOMPARE(written[3].failure()->kind, MeasureErrorKind::Crash);
    // Killed by the signal; under AddressSanitizer its handler reports the fault and exits 1.
    const char* death = TESSEL_SANITIZED_BUILD ? "exited with code 1" : "SIGSEGV";
    QVERIFY2(written[3].failure()->message.find(death) != std::string::npos, written[3].failure()->message.c_str());
    QVERIFY(written[6].failure());
    QCOMPARE(written[6].failure()->kind, MeasureErrorKind::Timeout);
    // The worker was restarted each time and went on measuring.
    QVERIFY(written[4].result() && written[7].result());
    QCOMPARE(worker.statistics().crashes, 1);
    // (A real candidate may also outlive 3 s on a loaded machine.)
    QVERIFY(worker.statistics().timeouts >= 1);
    QVERIFY(result->errors >= 2);
    QCOMPARE(countEvents(events, "session_end"), 1);
  }

  void aSessionResumesWhereItStoppedWithoutMeasuringAPointTwice() {
    QTemporaryDir dir;
    std::string records = dir.filePath("resume.jsonl").toStdString();
    std::vector<nlohmann::json> first, refused, second;
    {
      MeasureWorker worker(matmulWorker(32));
      auto result = runTuningSession({matmulTask(32)}, worker, quickOptions(records, &first));
      QVERIFY2(result, result ? "" : result.error().toString().c_str());
    }
    std::vector<TuningRecord> afterFirst = readRecords(records);
    QVERIFY(QFile::exists(QString::fromStdString(records + ".model")));  // the cost model, beside them

    // Without --resume the file is not reused, and not touched.
    {
      MeasureWorker worker(matmulWorker(32));
      auto result = runTuningSession({matmulTask(32)}, worker, quickOptions(records, &refused));
      QVERIFY(!result);
      QVERIFY2(result.error().hint.find("--resume") != std::string::npos, result.error().toString().c_str());
      QCOMPARE(readRecords(records).size(), afterFirst.size());
    }

    TuningSessionOptions options = quickOptions(records, &second);
    options.resume = true;
    MeasureWorker worker(matmulWorker(32));
    auto result = runTuningSession({matmulTask(32)}, worker, options);
    QVERIFY2(result, result ? "" : result.error().toString().c_str());
    checkStream(second, readRecords(records).size() - afterFirst.size());
    const nlohmann::json& start = second.front();
    QCOMPARE(start["resumed_trials"].get<size_t>(), afterFirst.size());
    QCOMPARE(countEvents(second, "warning"), 0);  // the saved model was loaded
    // The defaults were not measured again, and no searched point was measured twice.
    std::vector<TuningRecord> all = readRecords(records);
    int defaults = 0;
    std::set<std::string> points;
    for (const TuningRecord& record : all) {
      if (record.origin == RecordOrigin::Default) ++defaults;
      if (record.origin == RecordOrigin::Search || record.origin == RecordOrigin::Random)
        QVERIFY2(points.insert(record.point).second, ("measured twice: " + record.point).c_str());
    }
    QCOMPARE(defaults, 2);
    QVERIFY(all.size() > afterFirst.size());
  }

  void theRecordsGiveTheSessionsChoice() {
    QTemporaryDir dir;
    std::string records = dir.filePath("best.jsonl").toStdString();
    std::vector<nlohmann::json> events;
    TuningTask task = matmulTask(32);
    MeasureWorker worker(matmulWorker(32));
    auto result = runTuningSession({task}, worker, quickOptions(records, &events));
    QVERIFY(result);
    QCOMPARE(countEvents(events, "confirm"), 1);
    TuningDatabase database(readRecords(records));
    const TuningRecord* best = database.best(task.workloadKey, hostTarget().toString());
    QVERIFY(best);
    // What every command applies is what the session confirmed (or the default, when it won).
    const TaskOutcome& outcome = result->tasks.front();
    std::string expected = outcome.tuned ? outcome.chosenTrace : printTraceText(task.defaultTrace);
    QCOMPARE(best->trace, expected);
    QCOMPARE(best->origin, RecordOrigin::Confirm);
  }

  // A records file with no kept event stream still shows its session: rebuilt from the records
  // alone, the stream has the live session's trials, rounds (with the cost model's figures,
  // from the predictions the records keep), confirmation and outcome, and follows the schema.
  void aSessionsHistoryIsRebuiltFromItsRecordsAlone() {
    QTemporaryDir dir;
    std::string records = dir.filePath("history.jsonl").toStdString();
    std::vector<nlohmann::json> live;
    TuningTask task = matmulTask(32);
    MeasureWorker worker(matmulWorker(32));
    TuningSessionOptions options = quickOptions(records, &live);
    options.budgetTrials = 40;
    auto result = runTuningSession({task}, worker, options);
    QVERIFY2(result && !result->error, "the session ran");
    std::vector<TuningRecord> written = readRecords(records);
    std::vector<nlohmann::json> rebuilt = eventsFromRecords(written, {records, "", {}});
    checkStream(rebuilt, written.size());
    auto only = [](const std::vector<nlohmann::json>& events, const std::string& kind) {
      std::vector<nlohmann::json> out;
      for (const nlohmann::json& event : events)
        if (event["event"] == kind) out.push_back(event);
      return out;
    };
    auto liveTrials = only(live, "trial"), rebuiltTrials = only(rebuilt, "trial");
    QCOMPARE(rebuiltTrials.size(), liveTrials.size());
    for (size_t i = 0; i < liveTrials.size(); ++i)
      for (const char* field : {"origin", "ok", "median_ms", "prediction", "point", "round", "best_ms", "task_trials"})
        QVERIFY2(rebuiltTrials[i][field] == liveTrials[i][field],
                 (std::string(field) + " of trial " + std::to_string(i) + ": " + rebuiltTrials[i].dump() + " vs " +
                  liveTrials[i].dump()).c_str());
    auto liveRounds = only(live, "round"), rebuiltRounds = only(rebuilt, "round");
    QVERIFY(liveRounds.size() >= 2);
    QCOMPARE(rebuiltRounds.size(), liveRounds.size());
    bool judged = false;
    for (size_t i = 0; i < liveRounds.size(); ++i) {
      for (const char* field : {"round", "measured", "errors", "best_ms", "default_ms", "control_ms", "pairwise_accuracy",
                                "top_k_recall", "kendall_tau"})
        QVERIFY2(rebuiltRounds[i][field] == liveRounds[i][field],
                 (std::string(field) + " of round " + std::to_string(i) + ": " + rebuiltRounds[i].dump() + " vs " +
                  liveRounds[i].dump()).c_str());
      judged = judged || !liveRounds[i]["pairwise_accuracy"].is_null();
    }
    QVERIFY2(judged, "some round's predictions were judged");
    auto liveConfirm = only(live, "confirm"), rebuiltConfirm = only(rebuilt, "confirm");
    QCOMPARE(rebuiltConfirm.size(), liveConfirm.size());
    for (size_t i = 0; i < liveConfirm.size(); ++i)
      for (const char* field : {"chosen_point", "chosen_ms", "default_ms", "speedup"})
        QVERIFY2(rebuiltConfirm[i][field] == liveConfirm[i][field], field);
    const nlohmann::json& end = rebuilt.back();
    QCOMPARE(end["reason"].get<std::string>(), std::string("records"));
    QCOMPARE(end["tasks"][0]["tuned"].get<bool>(), result->tasks.front().tuned);
    QCOMPARE(end["tasks"][0]["best_ms"], nlohmann::json(result->tasks.front().bestMs.value()));
    // The rebuilt stream says what it could not know.
    QCOMPARE(rebuilt[1]["event"].get<std::string>(), std::string("warning"));
    QCOMPARE(rebuilt.front()["tasks"][0]["op"].get<std::string>(), opSummaryOfWorkloadKey(task.workloadKey));
  }

  // Different points of a space often lower to the same code (a split by 1, an unrolled loop
  // of one iteration): the session measures each program once. No two searched trials of the
  // records lower to structurally equal code, and each round says how many points it left out.
  void aProgramIsMeasuredOnceWhateverPointsGiveIt() {
    QTemporaryDir dir;
    std::string records = dir.filePath("programs.jsonl").toStdString();
    std::vector<nlohmann::json> events;
    TuningTask task = matmulTask(32);
    MeasureWorker worker(matmulWorker(32));
    TuningSessionOptions options = quickOptions(records, &events);
    options.budgetTrials = 60;
    options.space.includeDefaultSketch = false;  // the generated sketches: many splits by 1
    auto result = runTuningSession({task}, worker, options);
    QVERIFY2(result && !result->error, "the session ran");
    std::map<uint64_t, std::string> programs;
    int searched = 0;
    for (const TuningRecord& record : readRecords(records)) {
      if (record.origin != RecordOrigin::Search && record.origin != RecordOrigin::Random &&
          record.origin != RecordOrigin::Default)
        continue;
      auto trace = parseTraceText(record.trace);
      QVERIFY(trace);
      auto schedule = Schedule::replay(task.workload.outputs, *trace);
      if (!schedule) continue;
      auto lowered = lower(*schedule, task.workload.args(), task.name);
      if (!lowered) continue;
      uint64_t program = structuralHash(lowered->func);
      auto [at, added] = programs.emplace(program, record.trace);
      // The default is measured twice on purpose (a cold first run); nothing else is.
      if (!added && record.origin != RecordOrigin::Default)
        QFAIL(("measured twice, as\n" + at->second + "and as\n" + record.trace).c_str());
      searched += record.origin != RecordOrigin::Default;
    }
    QVERIFY(searched >= 40);
    // Rounds say how many new points they left out (how many depends on the search's path).
    for (const nlohmann::json& event : events)
      if (event["event"] == "round") QVERIFY(event.contains("equivalent_skipped"));
  }

  // What the Studio lists before a session runs: the model's tasks in a valid session_start
  // that a log reads as tasks not started, every kernel of the model in one of them.
  void aPreviewListsTheTasksASessionWouldTune() {
    auto graph = driver::loadModel(kModel);
    QVERIFY(graph);
    auto compiled = driver::compileGraph(*graph);
    QVERIFY(compiled);
    auto scheduleTasks = driver::extractTasks(*compiled);
    QVERIFY(scheduleTasks);
    std::vector<TuningTask> tasks = groupTasksByWorkload(*scheduleTasks);
    nlohmann::json start = previewSessionStart(tasks, {"tiny.onnx", "llvm", "tiny.jsonl", 2});
    auto problem = validateEvent(start);
    QVERIFY2(!problem, problem.value_or("").c_str());
    TuningEventLog log;
    QVERIFY(log.addLine(start.dump(), 1));
    QCOMPARE(log.tasks().size(), tasks.size());
    size_t kernels = 0;
    for (size_t i = 0; i < tasks.size(); ++i) {
      QCOMPARE(log.tasks()[i].name, tasks[i].name);
      QCOMPARE(log.tasks()[i].weight, tasks[i].weight);
      QCOMPARE(log.tasks()[i].flops, tasks[i].flops);
      QCOMPARE(log.taskStates()[i].trials, 0);
      kernels += log.tasks()[i].kernels.size();
    }
    QCOMPARE(kernels, scheduleTasks->size());
    QVERIFY(!log.ended());
  }

  void opSummariesComeFromWorkloadKeys() {
    QCOMPARE(opSummaryOfWorkloadKey("fused[%0=ConvPrepacked{data_layout=\"NCHW16c\",pads=[0,0,0,0]}@13($0,$1,$2); "
                                    "%1=Clip@13(%0,$3,$4); out=(%1)] in=[float32[1,1,112,112,16]] out=[float32[1]]"),
             std::string("fused(ConvPrepacked+Clip)"));
    QCOMPARE(opSummaryOfWorkloadKey("ConvPrepacked{kernel_shape=[1,1]}@13 ($0,$1,$2) in=[float32[1,960,7,7]]"),
             std::string("ConvPrepacked"));
    QCOMPARE(opSummaryOfWorkloadKey("operator matmul_64x64x64 in=[float32[64,64]; float32[64,64]]"),
             std::string("matmul_64x64x64"));
  }

  void aSessionSpendsItsBudgetAfterEveryTaskStopsImproving() {
    QTemporaryDir dir;
    std::string records = dir.filePath("revive.jsonl").toStdString();
    std::vector<nlohmann::json> events;
    TuningSessionOptions options = quickOptions(records, &events);
    options.budgetTrials = 48;
    // No improvement is ever enough, so the task stops after each stretch of patience.
    options.scheduler.earlyStoppingTrials = 8;
    options.scheduler.minimumImprovement = 0.99;
    MeasureWorker worker(matmulWorker(32));
    auto result = runTuningSession({matmulTask(32)}, worker, options);
    QVERIFY2(result, result ? "" : result.error().toString().c_str());
    QCOMPARE(result->reason, std::string("trials"));  // not "converged" with budget left
    checkStream(events, readRecords(records).size());
    QVERIFY(countEvents(events, "revive") >= 1);
    int previousPatience = 8;
    for (const nlohmann::json& event : events) {
      if (event["event"] != "revive") continue;
      QCOMPARE(event["tasks"], nlohmann::json::array({0}));
      QCOMPARE(event["patience_trials"].get<int>(), previousPatience * 2);
      QVERIFY(event["remaining_s"].is_null());  // a trial budget
      previousPatience *= 2;
    }
  }

  void aPausedSessionWaitsAndGoesOn() {
    QTemporaryDir dir;
    std::string records = dir.filePath("pause.jsonl").toStdString();
    std::vector<nlohmann::json> events;
    TuningSessionOptions options = quickOptions(records, &events);
    int polls = 0;
    int trialsWhenPaused = -1;
    // Paused before the first round, for three polls of 50 ms.
    options.paused = [&] {
      if (polls == 0) trialsWhenPaused = countEvents(events, "trial");
      return ++polls <= 3;
    };
    MeasureWorker worker(matmulWorker(32));
    auto result = runTuningSession({matmulTask(32)}, worker, options);
    QVERIFY2(result, result ? "" : result.error().toString().c_str());
    QCOMPARE(result->reason, std::string("trials"));
    checkStream(events, readRecords(records).size());
    QCOMPARE(countEvents(events, "pause"), 1);
    QCOMPARE(countEvents(events, "resume"), 1);
    auto pause = std::find_if(events.begin(), events.end(), [](auto& e) { return e["event"] == "pause"; });
    auto resume = std::find_if(events.begin(), events.end(), [](auto& e) { return e["event"] == "resume"; });
    QVERIFY(pause < resume);
    QVERIFY((*resume)["paused_s"].get<double>() >= 0.09);
    // Nothing was measured while paused.
    QCOMPARE(int(std::count_if(pause, resume, [](auto& e) { return e["event"] == "trial"; })), 0);
    QCOMPARE(trialsWhenPaused, countEvents({events.begin(), pause}, "trial"));
  }

  void anInterruptedSessionKeepsItsTrials() {
    QTemporaryDir dir;
    std::string records = dir.filePath("stop.jsonl").toStdString();
    std::vector<nlohmann::json> events;
    TuningSessionOptions options = quickOptions(records, &events);
    options.budgetTrials = 1000;
    options.cancelled = [&events] { return countEvents(events, "trial") >= 6; };
    MeasureWorker worker(matmulWorker(32));
    auto result = runTuningSession({matmulTask(32)}, worker, options);
    QVERIFY(result);
    QCOMPARE(result->reason, std::string("interrupted"));
    QCOMPARE(readRecords(records).size(), size_t(6));
    QCOMPARE(countEvents(events, "confirm"), 0);
    checkStream(events, 6);
    QCOMPARE(events.back()["reason"].get<std::string>(), std::string("interrupted"));
  }

  void sessionsThatCannotStartSaySo() {
    QTemporaryDir dir;
    std::vector<nlohmann::json> events;
    MeasureWorker worker(matmulWorker(32));
    TuningSessionOptions options = quickOptions(dir.filePath("x.jsonl").toStdString(), &events);
    auto none = runTuningSession({}, worker, options);
    QVERIFY(!none);
    QVERIFY2(none.error().message.find("no kernel to tune") != std::string::npos, none.error().message.c_str());
    options.budgetTrials = 0;
    auto zero = runTuningSession({matmulTask(32)}, worker, options);
    QVERIFY(!zero);
    QVERIFY2(zero.error().message.find("budget is zero") != std::string::npos, zero.error().message.c_str());
    options.budgetTrials = 10;
    options.resume = true;
    auto nothing = runTuningSession({matmulTask(32)}, worker, options);
    QVERIFY(!nothing);
    QVERIFY2(nothing.error().message.find("nothing to resume") != std::string::npos, nothing.error().message.c_str());
    // A records file in a directory that does not exist: named, before anything is measured.
    options.resume = false;
    options.recordsPath = dir.filePath("missing/dir/x.jsonl").toStdString();
    auto unwritable = runTuningSession({matmulTask(32)}, worker, options);
    QVERIFY(!unwritable);
    QVERIFY2(unwritable.error().toString().find("missing/dir/x.jsonl") != std::string::npos,
             unwritable.error().toString().c_str());
    QVERIFY(events.empty());
  }

  void everyEventFieldIsDocumented() {
    std::string page = readText(TESSEL_SOURCE_DIR "/tuner/Events.md");
    for (const EventSchema& schema : eventSchemas()) {
      size_t section = page.find("## " + schema.event + "\n");
      QVERIFY2(section != std::string::npos, ("Events.md lacks a section for " + schema.event).c_str());
      size_t next = page.find("\n## ", section + 1);
      std::string text = page.substr(section, next == std::string::npos ? std::string::npos : next - section);
      auto documented = [&](const std::string& field) { return text.find("`" + field + "`") != std::string::npos; };
      for (const EventField& field : schema.fields)
        QVERIFY2(documented(field.name), (schema.event + "." + field.name + " is not in Events.md").c_str());
      for (auto& [array, fields] : schema.elements)
        for (const EventField& field : fields)
          QVERIFY2(documented(field.name), (schema.event + "." + array + "." + field.name + " is not in Events.md").c_str());
    }
  }

  void theCommandLineRefusesWhatCannotWork() {
    QTemporaryDir dir;
    auto run = [&](const QStringList& args, QString* errorText) {
      QProcess process;
      process.start(QString::fromStdString(kTessel), args);
      process.waitForFinished(120000);
      *errorText = QString::fromUtf8(process.readAllStandardError());
      return process.exitCode();
    };
    QString error;
    QString records = dir.filePath("r.jsonl");
    QCOMPARE(run({"tune", "matmul", "--m", "32", "--n", "32", "--k", "32", "--records", records, "--trials", "0"}, &error), 2);
    QVERIFY2(error.contains("--trials is zero"), qPrintable(error));
    QCOMPARE(run({"tune", "matmul", "--m", "32", "--n", "32", "--k", "32", "--records", records, "--time-budget", "5x"},
                 &error),
             2);
    QVERIFY2(error.contains("--time-budget"), qPrintable(error));
    QCOMPARE(run({"tune", "matmul", "--m", "32", "--n", "32", "--k", "32"}, &error), 2);
    QVERIFY2(error.contains("--records"), qPrintable(error));
    QCOMPARE(run({"tune", dir.filePath("nope.onnx"), "--records", records}, &error), 2);
    QVERIFY2(error.contains("nope.onnx"), qPrintable(error));
    QCOMPARE(run({"tune", QString::fromStdString(kModel), "--records", records, "--tasks", "no_such_kernel"}, &error), 2);
    QVERIFY2(error.contains("no_such_kernel"), qPrintable(error));
    QCOMPARE(run({"tune", "matmul", "--m", "32", "--n", "32", "--k", "32", "--records", records, "--flush-caches", "maybe"},
                 &error),
             2);
    QVERIFY2(error.contains("--flush-caches must be auto, yes or no"), qPrintable(error));
    QCOMPARE(run({"tune", QString::fromStdString(kModel), "--records", records, "--target", "opencl"}, &error), 2);
    QVERIFY2(error.contains("--target applies to an operator"), qPrintable(error));
    QCOMPARE(run({"tune", "matmul", "--m", "32", "--n", "32", "--k", "32", "--records", records, "--target", "tpu"},
                 &error),
             2);
    QVERIFY2(error.contains("--target"), qPrintable(error));
    QVERIFY(!QFile::exists(records));  // nothing was started, nothing written
  }

  void theCommandLineTunesAnOperatorAndWritesEvents() {
    QTemporaryDir dir;
    QString records = dir.filePath("op.jsonl"), eventsPath = dir.filePath("events.jsonl");
    QProcess process;
    process.start(QString::fromStdString(kTessel), {"tune", "matmul", "--m", "32", "--n", "32", "--k", "32", "--records",
                                                     records, "--trials", "20", "--threads", "1", "--events", eventsPath});
    QVERIFY(process.waitForFinished(300000));
    QString out = QString::fromUtf8(process.readAllStandardOutput());
    QVERIFY2(process.exitCode() == 0, qPrintable(out + process.readAllStandardError()));
    QVERIFY2(out.contains("session ended"), qPrintable(out));
    QVERIFY2(out.contains("--tuning-records " + records), qPrintable(out));
    std::vector<nlohmann::json> events;
    std::ifstream file(eventsPath.toStdString());
    for (std::string line; std::getline(file, line);) events.push_back(nlohmann::json::parse(line));
    checkStream(events, readRecords(records.toStdString()).size());
    // A 32x32 matmul's 4 KiB of weights fit in any last-level cache: timed with them cached,
    // and the session says so.
    QCOMPARE(QString::fromStdString(events.front()["event"].get<std::string>()), QString("session_start"));
    QVERIFY(!events.front()["flush_caches"].get<bool>());
    QVERIFY2(out.contains("timing: weights left in the caches (4 KiB of weights"), qPrintable(out));
  }
};

QTEST_GUILESS_MAIN(TestSession)
#include "test_session.moc"
